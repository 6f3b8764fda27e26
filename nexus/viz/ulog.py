"""PX4's own estimate from its ULog file, lined up with a Nexus run.

In lockstep PX4's clock is the sim time Nexus sends (``time_usec`` = sim time
in µs, ``nexus/px4/controller.py``), so a ULog of the flight has timestamps on
the run's time axis. PX4's EKF writes ``vehicle_local_position`` (x, y, z NED
from its local origin [m]) and ``vehicle_attitude`` (``q[0..3]``, w x y z,
FRD to NED). A ULog of another flight is refused: its timestamps must fall
inside the run, and its positions must follow the run's truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyulog import ULog

from nexus.viz.errors import UlogError
from nexus.viz.truth import euler_zyx, rotation_matrices

#: Topics the report reads; fields per topic.
TOPICS = {"vehicle_local_position": ("x", "y", "z"), "vehicle_attitude": ("q[0]", "q[1]", "q[2]", "q[3]")}
#: Share of the ULog's estimate samples that must fall inside the run's time span [-].
MIN_OVERLAP = 0.5
#: Largest median distance between PX4's position estimate and Nexus truth for the same flight [m].
#: An EKF on Nexus's sensors stays within a GPS drift (σ 0.3 m horizontal, 0.5 m vertical) of the truth.
MAX_MEDIAN_POSITION_ERROR_M = 3.0


@dataclass
class Px4Estimate:
    path: Path
    #: Sample times on the run's axis [s].
    time: np.ndarray
    #: PX4's local position, NED [m].
    position: np.ndarray
    #: Roll, pitch, yaw [rad] at ``time`` (attitude interpolated onto the position samples).
    attitude: np.ndarray
    #: Median |PX4 position − truth| [m] and the share of samples inside the run.
    median_position_error_m: float
    overlap: float


def load_ulog(path: Path, run_time: np.ndarray, truth_position_ned: np.ndarray) -> Px4Estimate:
    """Read ``path`` with pyulog and check it belongs to the run whose truth is given (NED [m] per row)."""

    path = Path(path)
    if not path.is_file():
        raise UlogError(f"--ulog {path}: no such file; give the .ulg PX4 wrote for this flight (PX4's log folder, "
                        "e.g. build/px4_sitl_default/rootfs/log/<date>/)")
    try:
        log = ULog(str(path), message_name_filter_list=list(TOPICS), disable_str_exceptions=True)
    except Exception as error:  # pyulog raises bare Exceptions and struct errors on a bad file
        raise UlogError(f"--ulog {path} is not a ULog file PX4 wrote ({type(error).__name__}: {error}); give the .ulg "
                        "file of this flight") from None
    data = {}
    for topic, fields in TOPICS.items():
        found = [d for d in log.data_list if d.name == topic and d.multi_id == 0]
        if not found or not all(name in found[0].data for name in fields) or len(found[0].data["timestamp"]) == 0:
            raise UlogError(f"--ulog {path} has no {topic} messages with {', '.join(fields)}; PX4 logs them by default "
                            "(SDLOG_PROFILE); log this flight with the default profile")
        data[topic] = found[0].data
    local = data["vehicle_local_position"]
    time = local["timestamp"].astype(np.float64) * 1e-6
    position = np.stack([local[name].astype(np.float64) for name in TOPICS["vehicle_local_position"]], axis=1)
    start, end = float(run_time[0]), float(run_time[-1])
    inside = (time >= start) & (time <= end)
    overlap = float(np.mean(inside))
    if overlap < MIN_OVERLAP:
        raise UlogError(
            f"--ulog {path} is from another flight: its estimate spans {time[0]:.1f}-{time[-1]:.1f} s of PX4 time, "
            f"the run {start:.1f}-{end:.1f} s of sim time (only {overlap:.0%} of its samples inside); give the ULog "
            "PX4 wrote during this run"
        )
    time, position = time[inside], position[inside]
    truth = np.stack([np.interp(time, run_time, truth_position_ned[:, i]) for i in range(3)], axis=1)
    median_error = float(np.median(np.linalg.norm(position - truth, axis=1)))
    if not median_error <= MAX_MEDIAN_POSITION_ERROR_M:
        raise UlogError(
            f"--ulog {path} is from another flight: PX4's position estimate is {median_error:.1f} m from this run's "
            f"truth (median; the same flight stays within {MAX_MEDIAN_POSITION_ERROR_M:g} m); give the ULog PX4 "
            "wrote during this run"
        )
    attitude_log = data["vehicle_attitude"]
    q_time = attitude_log["timestamp"].astype(np.float64) * 1e-6
    wxyz = np.stack([attitude_log[name].astype(np.float64) for name in TOPICS["vehicle_attitude"]], axis=1)
    euler = euler_zyx(rotation_matrices(wxyz[:, [1, 2, 3, 0]]))
    attitude = np.stack([np.interp(time, q_time, np.unwrap(euler[:, i])) for i in range(3)], axis=1)
    return Px4Estimate(path, time, position, attitude, median_error, overlap)
