"""Nexus's EKF and PX4's EKF2 on one flight, each against Nexus's truth.

docs/estimation.md, "Side by side with PX4's EKF2", has the figures this gave.

Real PX4 SITL flies the built-in mission in lockstep on Nexus's sensor stream,
its EKF2 noise parameters set to the values Nexus's EKF uses
(:mod:`nexus.px4.ekf2_params`), while Nexus's own EKF runs in the same ring as
a recorded observer (``--controller px4 --estimator ekf``). Lockstep makes
PX4's clock the sim clock, so PX4's ULog timestamps are the record's times:
each PX4 sample is compared with the record's tick of the same time.

    python tools/px4_ekf_compare.py fly --px4-binary PX4/build/px4_sitl_default/bin/px4 --out /tmp/px4-ekf
    python tools/px4_ekf_compare.py compare /tmp/px4-ekf/run /tmp/px4-ekf/px4/.../log.ulg

``fly`` starts ``nexus run`` and PX4 (it never builds PX4), waits for the
mission to end, stops PX4 by its process group, and compares. ``compare``
works on any such pair. Not a test: CI has no PX4
(``tests/px4/test_ekf_compare.py`` checks the reading, alignment and
statistics on a hand-made ULog and record).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pyulog import ULog

from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np
from nexus.plant.loading import load_plant
from nexus.px4.ekf2_params import vehicle_ekf2_parameters
from nexus.px4.params import px4_parameters
from nexus.record.parts import read_record

#: PX4's topics and fields read: its estimate (the output predictor, at the present time) and attitude.
LOCAL = "vehicle_local_position"
ATTITUDE = "vehicle_attitude"
LOCAL_FIELDS = ("x", "y", "z", "vx", "vy", "vz", "xy_valid", "z_valid", "v_xy_valid", "xy_reset_counter",
                "z_reset_counter")
#: The status bits of Nexus's EKF that say horizontal and vertical position valid (docs/estimation.md), and the
#: record columns that carry them (``estimate_status``, ``ekf_status`` in records of before the status signal).
NEXUS_VALID = 64 | 128
STATUS_COLUMNS = ("estimate_status", "ekf_status")
#: A PX4 sample and its record tick must be this close in time [s]: lockstep puts them on the same tick.
MAX_TIME_GAP_S = 1e-6
#: Truth height above the start [m] that counts as airborne, for the airborne window.
AIRBORNE_M = 0.5


@dataclass
class Errors:
    """One estimator's error against truth over a window: position [m], velocity [m/s], attitude [deg]."""

    samples: int
    attitude_samples: int
    horizontal_rms: float
    horizontal_max: float
    vertical_rms: float
    vertical_max: float
    velocity_rms: float
    velocity_max: float
    attitude_rms: float
    attitude_max: float


def quaternion_angle_deg(a_wxyz: np.ndarray, b_wxyz: np.ndarray) -> np.ndarray:
    """Angle [deg] of the rotation between two unit quaternions per row (either sign)."""
    dot = np.abs(np.sum(a_wxyz * b_wxyz, axis=1)).clip(0.0, 1.0)
    return np.degrees(2.0 * np.arccos(dot))


def errors(position: np.ndarray, velocity: np.ndarray, position_truth: np.ndarray, velocity_truth: np.ndarray,
           attitude: np.ndarray, attitude_truth: np.ndarray) -> Errors:
    """Error statistics of estimated NED position, velocity and FRD->NED attitude (w, x, y, z) against truth.

    Position and velocity rows are one set of samples, attitude rows another (PX4 logs them apart)."""
    e = position - position_truth
    horizontal = np.hypot(e[:, 0], e[:, 1])
    vertical = np.abs(e[:, 2])
    speed = np.linalg.norm(velocity - velocity_truth, axis=1)
    angle = quaternion_angle_deg(attitude, attitude_truth)

    def rms(x):
        return float(np.sqrt(np.mean(x**2)))

    return Errors(len(e), len(angle), rms(horizontal), float(horizontal.max()), rms(vertical), float(vertical.max()),
                  rms(speed), float(speed.max()), rms(angle), float(angle.max()))


@dataclass
class Truth:
    """Nexus's record: time [s], truth NED from the start [m], NED velocity [m/s], attitude (w, x, y, z); the EKF's."""

    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    attitude: np.ndarray
    ekf_position: np.ndarray
    ekf_velocity: np.ndarray
    ekf_attitude: np.ndarray
    ekf_valid: np.ndarray


def _xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return q[:, [3, 0, 1, 2]]


def read_run(run: Path) -> Truth:
    """The record of a ``--controller px4 --estimator ekf`` run (a run without the EKF's columns is refused)."""
    table = read_record(Path(run) / "record.parquet")
    names = set(table.column_names)
    status = next((name for name in STATUS_COLUMNS if name in names), None)
    if "estimate.position[0]" not in names or status is None:
        sys.exit(f"{run}: the record has no EKF estimate; fly it with --controller px4 --estimator ekf")

    def columns(name: str, n: int) -> np.ndarray:
        return np.stack([table[f"{name}[{i}]"].to_numpy().astype(np.float64) for i in range(n)], axis=1)

    time_s = table["time"].to_numpy().astype(np.float64)
    pose = columns("body/base.pose", 7)
    position = enu_to_ned_np(pose[:, :3] - pose[0, :3])
    velocity = enu_to_ned_np(columns("body/base.velocity", 3))
    attitude = np.array([attitude_ned_frd_np(q) for q in pose[:, 3:]])
    return Truth(time_s, position, velocity, _xyzw_to_wxyz(attitude), columns("estimate.position", 3),
                 columns("estimate.velocity", 3), _xyzw_to_wxyz(columns("estimate.attitude", 4)),
                 (table[status].to_numpy().astype(np.int64) & NEXUS_VALID) == NEXUS_VALID)


@dataclass
class Px4Log:
    """PX4's estimate from its ULog: times [s] (PX4's clock), NED position and velocity, validity, attitude."""

    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    valid: np.ndarray
    resets: np.ndarray
    attitude_time: np.ndarray
    attitude: np.ndarray


def read_ulog(path: Path) -> Px4Log:
    log = ULog(str(path), message_name_filter_list=[LOCAL, ATTITUDE], disable_str_exceptions=True)
    data = {d.name: d.data for d in log.data_list if d.multi_id == 0}
    for topic in (LOCAL, ATTITUDE):
        if topic not in data:
            sys.exit(f"{path}: no {topic} in the ULog; PX4 logs it with the default SDLOG_PROFILE")
    local, att = data[LOCAL], data[ATTITUDE]
    f = {name: local[name].astype(np.float64) for name in LOCAL_FIELDS}
    return Px4Log(local["timestamp"].astype(np.float64) * 1e-6, np.stack([f["x"], f["y"], f["z"]], axis=1),
                  np.stack([f["vx"], f["vy"], f["vz"]], axis=1),
                  (f["xy_valid"] > 0) & (f["z_valid"] > 0) & (f["v_xy_valid"] > 0),
                  np.stack([f["xy_reset_counter"], f["z_reset_counter"]], axis=1),
                  att["timestamp"].astype(np.float64) * 1e-6,
                  np.stack([att[f"q[{i}]"].astype(np.float64) for i in range(4)], axis=1))


def ticks_of(times: np.ndarray, record_time: np.ndarray) -> np.ndarray:
    """The record row of each time; a time with no tick within MAX_TIME_GAP_S is not the same flight."""
    index = np.clip(np.searchsorted(record_time, times), 1, len(record_time) - 1)
    index = np.where(np.abs(record_time[index - 1] - times) <= np.abs(record_time[index] - times), index - 1, index)
    gap = np.abs(record_time[index] - times)
    if gap.size and gap.max() > MAX_TIME_GAP_S:
        worst = int(np.argmax(gap))
        sys.exit(f"PX4's sample at {times[worst]:.6f} s has no tick of the record within {MAX_TIME_GAP_S:g} s "
                 f"(nearest {record_time[index[worst]]:.6f} s): not a lockstep log of this run")
    return index


def compare(truth: Truth, px4: Px4Log, start_s: float | None = None, end_s: float | None = None) -> dict:
    """Both estimators' errors on PX4's samples in the window where both say their position is valid.

    The window starts at ``start_s`` or, when None, at the first tick from which both estimators stay valid;
    it ends at ``end_s`` or the last PX4 sample inside the record. Both estimators are evaluated on the same
    ticks: PX4's ``vehicle_local_position`` samples for position and velocity, its ``vehicle_attitude``
    samples for attitude."""
    inside = (px4.time >= truth.time[0]) & (px4.time <= truth.time[-1])
    rows = ticks_of(px4.time[inside], truth.time)
    both = px4.valid[inside] & truth.ekf_valid[rows]
    if start_s is None:
        invalid = np.flatnonzero(~both)
        first = invalid[-1] + 1 if invalid.size else 0
        if first >= len(rows):
            sys.exit("the two estimators are never both valid to the end of the run")
        start_s = float(truth.time[rows[first]])
    last = float(px4.time[inside][-1])
    end_s = last if end_s is None else min(end_s, last)
    airborne = -truth.position[:, 2] > AIRBORNE_M
    windows = {"valid": (start_s, end_s)}
    if airborne.any():
        lifted = truth.time[airborne]
        windows["airborne"] = (max(start_s, float(lifted[0])), min(end_s, float(lifted[-1])))
    a_inside = (px4.attitude_time >= truth.time[0]) & (px4.attitude_time <= truth.time[-1])
    a_rows = ticks_of(px4.attitude_time[a_inside], truth.time)
    a_q = px4.attitude[a_inside]
    out = {"windows": {}}
    for name, (t0, t1) in windows.items():
        pick = (truth.time[rows] >= t0) & (truth.time[rows] <= t1)
        r = rows[pick]
        a_pick = (truth.time[a_rows] >= t0) & (truth.time[a_rows] <= t1)
        ar = a_rows[a_pick]
        reset = px4.resets[inside][pick]
        out["windows"][name] = {
            "start_s": t0, "end_s": t1,
            "px4": errors(px4.position[inside][pick], px4.velocity[inside][pick], truth.position[r],
                          truth.velocity[r], a_q[a_pick], truth.attitude[ar]).__dict__,
            "nexus": errors(truth.ekf_position[r], truth.ekf_velocity[r], truth.position[r], truth.velocity[r],
                            truth.ekf_attitude[ar], truth.attitude[ar]).__dict__,
            "px4_resets_in_window": int((reset[-1] - reset[0]).sum()) if len(reset) else 0,
        }
    return out


ROWS = (("horizontal position RMS [m]", "horizontal_rms"), ("horizontal position max [m]", "horizontal_max"),
        ("vertical position RMS [m]", "vertical_rms"), ("vertical position max [m]", "vertical_max"),
        ("velocity RMS [m/s]", "velocity_rms"), ("velocity max [m/s]", "velocity_max"),
        ("attitude RMS [deg]", "attitude_rms"), ("attitude max [deg]", "attitude_max"))


def table(result: dict) -> str:
    """A Markdown table: one row per figure, Nexus's EKF and PX4's EKF2 per window."""
    names = list(result["windows"])
    head = "| estimate − truth | " + " | ".join(f"Nexus EKF ({n}) | PX4 EKF2 ({n})" for n in names) + " |"
    lines = [head, "| --- |" + " --- | --- |" * len(names)]
    for label, key in ROWS:
        cells = []
        for n in names:
            w = result["windows"][n]
            cells += [f"{w['nexus'][key]:.3f}", f"{w['px4'][key]:.3f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for n in names:
        w = result["windows"][n]
        lines.append(f"\n{n}: {w['start_s']:.3f}-{w['end_s']:.3f} s, {w['px4']['samples']} position and "
                     f"{w['px4']['attitude_samples']} attitude samples of PX4 (each estimator on the ticks of "
                     f"their times), PX4 position resets in the window {w['px4_resets_in_window']}")
    return "\n".join(lines)


# ---- flying -------------------------------------------------------------------------------------------------


def _listening(port: int) -> bool:
    """Whether a TCP socket listens on ``port`` (read from /proc, so nothing connects to Nexus's link)."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                return True
    return False


def px4_environment(vehicle: str, scene: str) -> dict[str, str]:
    """PX4_PARAM_* for the vehicle's airframe (``nexus px4 params``) and its EKF's tuning."""
    plant, stage, _ = load_plant(vehicle, scene, "cpu")
    params = {**px4_parameters(plant), **vehicle_ekf2_parameters(stage, vehicle)}
    return {f"PX4_PARAM_{k}": str(v) for k, v in params.items()}


def fly(args) -> int:
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    binary = Path(args.px4_binary).resolve()
    etc = binary.parent.parent / "etc"
    port = 4560 + args.instance
    if _listening(port):
        sys.exit(f"TCP {port} is taken (another Nexus waits for PX4 instance {args.instance}); pick --instance")
    env_params = px4_environment(args.vehicle, args.scene)
    for setting in args.px4_param:  # e.g. EKF2_HGT_REF=0: a PX4 setting Nexus's EKF has no counterpart of
        name, _, value = setting.partition("=")
        env_params[f"PX4_PARAM_{name}"] = value
    (out / "params.env").write_text("".join(f"{k}={v}\n" for k, v in env_params.items()))
    nexus = [str(Path(sys.executable).parent / "nexus"), "run", "--vehicle", args.vehicle, "--scene", args.scene,
             "--controller", "px4", "--estimator", "ekf", "--px4-mission", "--px4-instance", str(args.instance),
             "--device", "cpu", "--quiet", "--out", str(out / "run")] + (["--px4-settle"] if args.reproducible else [])
    print(" ".join(nexus[1:]), flush=True)
    with open(out / "nexus.log", "w") as nexus_log:
        sim = subprocess.Popen(nexus, stdout=nexus_log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while not _listening(port):
            if sim.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"nexus run did not listen on TCP {port}; see {out / 'nexus.log'}")
            time.sleep(0.2)
        workdir = out / "px4"
        workdir.mkdir(exist_ok=True)
        env = {**os.environ, "PX4_SIM_MODEL": "none_iris", **env_params}
        with open(out / "px4.log", "w") as px4_log:
            pin = ["taskset", "-c", str(args.pin_cpu)] if args.reproducible else []
            px4 = subprocess.Popen([*pin, str(binary), "-d", "-i", str(args.instance), "-w", str(workdir), str(etc)],
                                   env=env, stdout=px4_log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                code = sim.wait(timeout=args.timeout)
            finally:
                if px4.poll() is None:
                    os.killpg(px4.pid, signal.SIGTERM)
                    try:
                        px4.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        os.killpg(px4.pid, signal.SIGKILL)
    print(f"nexus run exited {code}", flush=True)
    logs = sorted(workdir.rglob("*.ulg"), key=lambda p: p.stat().st_mtime)
    if not logs:
        sys.exit(f"PX4 wrote no ULog under {workdir}; see {out / 'px4.log'}")
    return report(out / "run", logs[-1], args, out / "compare.json")


def report(run: Path, ulog: Path, args, json_path: Path | None) -> int:
    truth = read_run(run)
    result = compare(truth, read_ulog(ulog), args.start, args.end)
    result["run"], result["ulog"] = str(run), str(ulog)
    print(table(result))
    if json_path is not None:
        Path(json_path).write_text(json.dumps(result, indent=1))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    f = sub.add_parser("fly", help="fly Nexus and PX4 SITL in lockstep, then compare")
    f.add_argument("--px4-binary", required=True, help="PX4 SITL's bin/px4 (built elsewhere)")
    f.add_argument("--out", required=True)
    f.add_argument("--vehicle", default="astro_max_base")
    f.add_argument("--scene", default="empty")
    f.add_argument("--instance", type=int, default=9, help="PX4 instance: TCP 4560+K, UDP 14540+K")
    f.add_argument("--timeout", type=float, default=900.0, help="wall seconds to wait for the run")
    f.add_argument("--reproducible", action="store_true", help="settle PX4 after every step (--px4-settle) and "
                   "pin it to one core: two flights the same, bit for bit (docs/px4.md), at about a third of the speed")
    f.add_argument("--pin-cpu", type=int, default=1, help="with --reproducible: the core PX4 runs on")
    f.add_argument("--px4-param", action="append", default=[], metavar="NAME=VALUE",
                   help="a further PX4 parameter (repeatable), set after the derived ones")
    c = sub.add_parser("compare", help="compare a run folder with PX4's ULog of the same flight")
    c.add_argument("run")
    c.add_argument("ulog")
    c.add_argument("--json")
    for p in (f, c):
        p.add_argument("--start", type=float, default=None, help="window start [s] (default: both valid)")
        p.add_argument("--end", type=float, default=None, help="window end [s] (default: PX4's last sample)")
    args = parser.parse_args(argv)
    if args.what == "fly":
        return fly(args)
    return report(Path(args.run), Path(args.ulog), args, args.json)


if __name__ == "__main__":
    sys.exit(main())
