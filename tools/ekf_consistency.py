"""Is the EKF consistent? NEES, NIS and innovation whiteness over many worlds of a hover (docs/estimation.md).

    python tools/ekf_consistency.py                       # 64 worlds, 10 s to converge, 120 s checked
    python tools/ekf_consistency.py --worlds 64 --seconds 120 --json
    python tools/ekf_consistency.py --vehicle vehicles/astro_max_base.usda --estimator ekf \\
        --scene tests/data/ekf_hover.usda                 # the shipped sensors and PX4-default tuning

Flies ``--worlds`` copies of the vehicle (``--solver freeflyer`` by default: the same rotor forces, faster) on
the hover scene and reads, every 0.1 s, each fused scalar's last innovation and test ratio, and every 1 s
the filter's state and covariance beside the truth. The error is in the frame the truth is in: the estimate
plus the origin the first good GPS fix set (``nominal`` slot 7), so an origin placed by a noisy fix is an
error the filter's covariance describes. Checks, over the samples from ``--converge`` seconds on:

* NEES of position, velocity, attitude (3 states each, the 3×3 block of P): its average over the N worlds
  inside the two-sided 95 % band of χ²(3N)/N at at least 90 % of the 1 s samples, and its time average inside;
* NIS of each fused scalar (ν²/S = test ratio × gate²): average over the worlds inside χ²(N)/N's band at
  at least 90 % of the 1 s samples, and its time average inside;
* whiteness: each world's normalised innovation sequence (0.1 s apart) has its autocorrelation at lags
  1..20 within ±1.96/√n at at least 90 % of the (world, lag) pairs (95 % expected for white noise).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np

from nexus.estimation.ekf import SLOT_NAMES, Ekf
from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np
from nexus.runtime.assembly import assemble
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession
from nexus.sensors.barometer import LAPSE_RATE, PRESSURE_EXPONENT, SEA_LEVEL_PRESSURE, SEA_LEVEL_TEMPERATURE, Barometer
from nexus.sensors.gps import Gps
from nexus.sensors.imu import Imu
from nexus.sensors.magnetometer import TESLA_PER_GAUSS, Magnetometer, earth_field_ned

ROOT = Path(__file__).resolve().parents[1]
MATCHED_VEHICLE = ROOT / "tests" / "data" / "astro_max_ekf_matched.usda"
MATCHED_SCENE = ROOT / "tests" / "data" / "ekf_matched_hover.usda"
#: Innovations are read every READ_TICKS ticks (0.1 s at 250 Hz: each GPS sample once), the state every second.
READ_TICKS = 25
#: The slots fused in the hover (the rangefinder is not on the Astro Max).
FUSED = ("gps_north", "gps_east", "gps_down", "gps_vnorth", "gps_veast", "gps_vdown", "baro", "heading")
#: Lags of the whiteness check [reads, 0.1 s each].
LAGS = 20
#: The share of samples (or of (world, lag) pairs) that must lie inside their band.
SHARE = 0.90


def matched_tuning(vehicle: Path | str, scene: Path | str) -> dict:
    """The EKF attributes that match the vehicle's declared sensors in the scene (docs/estimation.md, Consistency).

    * IMU white noise σ per sample, the covariance predicted every d samples over T = d·dt: the velocity's
      variance grows σ_a²·dt² a sample, d·σ_a²·dt² = σ_a²·dt·T a step, and the filter adds (EKF2_ACC_NOISE·T)²,
      so EKF2_ACC_NOISE = σ_a·√(dt/T) = σ_a/√d (the gyro's likewise);
    * bias walk w [per √s]: the bias's variance grows w²·T a step, the filter's (EKF2_*_B_NOISE·T)², so
      EKF2_*_B_NOISE = w/√T; the turn-on bias σ is EKF2_*BIAS_INIT;
    * EKF2_ANGERR_INIT: the tilt error one accelerometer sample's noise leaves, σ_a/g;
    * GPS: EKF2_GPS_P_NOISE the horizontal white noise (the vertical 1.5 times it, or the receiver's epv when
      larger: epv is the vertical noise once the drift is off), EKF2_GPS_V_NOISE the velocity noise;
    * barometer: the pressure noise as height, σ_p/|dp/dh| at the origin's altitude (ISA);
    * magnetometer: the field noise across the horizontal field, σ_B/|B_h|, as heading;
    * ``nexus:baroBiasNoise`` the barometer's drift walk.
    """
    built = assemble(vehicle, scene, controller="hold")
    by_type = {type(c): c for c in built.components}
    imu, gps, baro, mag = by_type[Imu], by_type[Gps], by_type[Barometer], by_type[Magnetometer]
    ekf = by_type[Ekf]
    d = int(ekf.values["covariance_decimation"])
    dt = 1.0 / float(imu.values["rate"])
    T = d * dt
    origin = built.plant.origin
    temperature = SEA_LEVEL_TEMPERATURE - LAPSE_RATE * origin.altitude
    slope = (SEA_LEVEL_PRESSURE * PRESSURE_EXPONENT * LAPSE_RATE / SEA_LEVEL_TEMPERATURE
             * (temperature / SEA_LEVEL_TEMPERATURE) ** (PRESSURE_EXPONENT - 1.0))  # |dp/dh| [Pa/m]
    field = earth_field_ned(origin.latitude, origin.longitude, origin.altitude, built.plant.decimal_year)
    walk = lambda w: max(float(x) for x in w) / math.sqrt(T)  # noqa: E731
    return {
        "EKF2_ACC_NOISE": imu.accel_sigma / math.sqrt(d), "EKF2_GYR_NOISE": imu.gyro_sigma / math.sqrt(d),
        "EKF2_ACC_B_NOISE": walk(imu.accel_bias_walk), "EKF2_GYR_B_NOISE": walk(imu.gyro_bias_walk),
        "EKF2_ABIAS_INIT": imu.accel_bias_sigma, "EKF2_GBIAS_INIT": imu.gyro_bias_sigma,
        "EKF2_ANGERR_INIT": imu.accel_sigma / ekf.gravity,
        "EKF2_GPS_P_NOISE": gps.horizontal_sigma, "EKF2_GPS_V_NOISE": gps.velocity_sigma,
        "EKF2_BARO_NOISE": baro.noise_sigma / slope,
        "EKF2_HEAD_NOISE": mag.noise_sigma * TESLA_PER_GAUSS / math.hypot(field[0], field[1]),
        "baroBiasNoise": baro.drift_walk,
        "gps_drift_off": gps.horizontal_drift_sigma == 0.0 and gps.vertical_drift_sigma == 0.0,
        "vertical_gps_noise": gps.vertical_sigma,
        "down_field_over_horizontal": field[2] / math.hypot(field[0], field[1]),
    }


def chi2_band(dof: int, mean_of: int) -> tuple[float, float]:
    """The two-sided 95 % band of χ²(dof)/mean_of (Wilson-Hilferty: within 0.1 % of the exact quantiles here)."""
    z = 1.959963984540054
    a = 2.0 / (9.0 * dof)
    lo = dof * (1.0 - a - z * math.sqrt(a)) ** 3 / mean_of
    hi = dof * (1.0 - a + z * math.sqrt(a)) ** 3 / mean_of
    return lo, hi


def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton products of (..., 4) quaternions (x, y, z, w)."""
    ax, ay, az, aw = np.moveaxis(a, -1, 0)
    bx, by, bz, bw = np.moveaxis(b, -1, 0)
    return np.stack([aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz], axis=-1)


def rotation_vector(q: np.ndarray) -> np.ndarray:
    """The rotation vector [rad] of (..., 4) unit quaternions (x, y, z, w), the short way round."""
    q = np.where(q[..., 3:4] < 0.0, -q, q)
    s = np.linalg.norm(q[..., :3], axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., 3:4])
    scale = np.where(s > 1e-12, angle / np.maximum(s, 1e-300), 2.0)
    return q[..., :3] * scale


def truth_and_errors(ekf_state: dict, body: np.ndarray, ned_origin: np.ndarray) -> dict:
    """Each world's error (estimate − truth) of position [m], velocity [m/s], attitude [rad] NED, and the blocks of P."""
    nominal = ekf_state["nominal"].numpy().astype(np.float64)
    attitude = ekf_state["attitude"].numpy().astype(np.float64)[:, 0]
    P = ekf_state["covariance"].numpy().astype(np.float64)
    pose = body["pose"].astype(np.float64)
    com = body["com"].astype(np.float64)
    omega = body["angular_velocity"].astype(np.float64)
    q_enu = pose[:, 3:]
    # The base origin's velocity: the centre of mass's less ω × (R·com).
    r_com = np.stack([quat_rotate(q, c) for q, c in zip(q_enu, com)])
    v_origin = body["velocity"].astype(np.float64) - np.cross(omega, r_com)
    p_true = enu_to_ned_np(pose[:, :3] - ned_origin)
    v_true = enu_to_ned_np(v_origin)
    q_true = np.stack([attitude_ned_frd_np(q) for q in q_enu])
    q_inv = attitude * np.array([-1.0, -1.0, -1.0, 1.0])
    return {
        "position": nominal[:, 0] + nominal[:, 7] - p_true,
        "velocity": nominal[:, 1] - v_true,
        # q = exp(δθ) ⊗ q̂: δθ = log(q ⊗ q̂⁻¹), the truth's error against the estimate, in NED.
        "attitude": -rotation_vector(quat_multiply(q_true, q_inv)),
        "P_position": P[:, 0:3, 0:3], "P_velocity": P[:, 3:6, 3:6], "P_attitude": P[:, 6:9, 6:9],
    }


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the unit quaternion ``q`` (x, y, z, w)."""
    u, w = q[:3], q[3]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def nees(error: np.ndarray, block: np.ndarray) -> np.ndarray:
    """e·P⁻¹·e per world."""
    return np.einsum("wi,wi->w", error, np.linalg.solve(block, error[..., None])[..., 0])


def fly(vehicle: Path | str, scene: Path | str, worlds: int, seconds: float, converge: float, solver: str,
        seed: int, estimator: str = "vehicle", vary: str | None = None) -> dict:
    """Fly and gather: per 1 s sample, each world's NEES of position, velocity, attitude and the errors; per
    0.1 s read, each fused slot's normalised innovation ν/√S per world. ``vary``: a variation file (e.g.
    ``start_yaw = 90``, the same heading for every world), None for none."""
    options = RunConfig(vehicle=str(vehicle), scene=str(scene), device="cpu", worlds=worlds, solver=solver,
                        vary=vary, seed=seed, estimator=estimator, ticks_per_replay=READ_TICKS,
                        record_mode="summary")
    with FlightSession(options, None) as session:
        loop = session.loop
        ekf = next(c for c in loop.components if isinstance(c, Ekf))
        gates = np.array([ekf.values[k] for k in ("gps_pos_gate",) * 3 + ("gps_vel_gate",) * 3
                          + ("baro_gate", "heading_gate", "range_gate")])
        state = loop.states.of(ekf)
        body_buffer = loop.output("body/base")
        innovation_buffer, ratio_buffer = loop.output("ekf_innovation"), loop.output("ekf_test_ratio")
        ned_origin = session.vehicle.plant.ned_origin.numpy().astype(np.float64)
        ticks_per_second = int(round(1.0 / (loop.dt_ns * 1e-9)))
        per_read = ticks_per_second // 10
        reads_converge = int(round(converge * 10))
        reads_total = int(round((converge + seconds) * 10))
        normalised, samples = [], {"position": [], "velocity": [], "attitude": [], "times": [],
                                   "error_position": [], "error_attitude": [], "attitude_axes": []}
        for read in range(1, reads_total + 1):
            session.fly(per_read)
            if read > reads_converge:
                nu = innovation_buffer.numpy().astype(np.float64)
                ratio = ratio_buffer.numpy().astype(np.float64)
                normalised.append(np.sign(nu) * np.sqrt(ratio) * gates)
            if read >= reads_converge and read % 10 == 0:
                errors = truth_and_errors(state, body_buffer.numpy(), ned_origin)
                for name in ("position", "velocity", "attitude"):
                    samples[name].append(nees(errors[name], errors[f"P_{name}"]))
                # Each attitude axis alone (north and east tilt, yaw): e_i²/P_ii, to see which one departs.
                samples["attitude_axes"].append(errors["attitude"] ** 2
                                                / np.diagonal(errors["P_attitude"], axis1=1, axis2=2))
                samples["error_position"].append(errors["position"])
                samples["error_attitude"].append(errors["attitude"])
                samples["times"].append(read / 10.0)
        done = loop.world_done().copy()
    out = {k: np.array(v) for k, v in samples.items() if v}
    out["normalised"] = np.array(normalised)  # (reads, worlds, 9)
    out["done"] = done
    out["worlds"] = worlds
    return out


def autocorrelation(x: np.ndarray, lags: int) -> np.ndarray:
    """Normalised autocorrelation r(1..lags) of each column of ``x`` (time along axis 0)."""
    x = x - x.mean(axis=0)
    var = (x * x).sum(axis=0)
    return np.array([(x[k:] * x[:-k]).sum(axis=0) / var for k in range(1, lags + 1)])


def statistics(data: dict) -> dict:
    """The checks of docs/estimation.md's Consistency section, from :func:`fly`'s samples."""
    worlds = data["worlds"]
    nees_band = chi2_band(3 * worlds, worlds)
    nis_band = chi2_band(worlds, worlds)
    result = {"worlds": worlds, "samples": int(len(data["times"])), "nees_band": nees_band, "nis_band": nis_band,
              "nees": {}, "nis": {}, "whiteness": {}, "rms": {}}
    for name in ("position", "velocity", "attitude"):
        mean = data[name].mean(axis=1)
        inside = (mean >= nees_band[0]) & (mean <= nees_band[1])
        result["nees"][name] = {"time_average": float(mean.mean()), "share_inside": float(inside.mean()),
                                "least": float(mean.min()), "most": float(mean.max()),
                                "passes": bool(inside.mean() >= SHARE and nees_band[0] <= mean.mean() <= nees_band[1])}
    result["attitude_axes"] = [float(x) for x in data["attitude_axes"].mean(axis=(0, 1))]
    normalised = data["normalised"]
    n = normalised.shape[0]
    bound = 1.96 / math.sqrt(n)
    for slot, name in enumerate(SLOT_NAMES):
        if name not in FUSED:
            continue
        nis = normalised[:, :, slot] ** 2
        per_second = nis[9::10].mean(axis=1)  # the reads on the 1 s samples
        inside = (per_second >= nis_band[0]) & (per_second <= nis_band[1])
        average = float(nis.mean())
        result["nis"][name] = {"time_average": average, "share_inside": float(inside.mean()),
                               "passes": bool(inside.mean() >= SHARE and nis_band[0] <= average <= nis_band[1])}
        r = autocorrelation(normalised[:, :, slot], LAGS)
        within = float((np.abs(r) <= bound).mean())
        result["whiteness"][name] = {"share_within": within, "largest_mean_lag": float(np.abs(r.mean(axis=1)).max()),
                                     "bound": bound, "passes": bool(within >= SHARE)}
    position = data["error_position"]
    attitude = data["error_attitude"]
    result["rms"] = {"horizontal_m": float(np.sqrt((position[..., :2] ** 2).sum(-1).mean())),
                     "vertical_m": float(np.sqrt((position[..., 2] ** 2).mean())),
                     "attitude_deg": float(np.degrees(np.sqrt((attitude ** 2).sum(-1).mean()))),
                     "tilt_deg": float(np.degrees(np.sqrt((attitude[..., :2] ** 2).sum(-1).mean()))),
                     "yaw_deg": float(np.degrees(np.sqrt((attitude[..., 2] ** 2).mean())))}
    result["worlds_done"] = int((data["done"] != 0).sum())
    return result


def table(result: dict) -> str:
    lo, hi = result["nees_band"]
    nlo, nhi = result["nis_band"]
    lines = [f"{result['worlds']} worlds, {result['samples']} samples 1 s apart",
             f"NEES (3 states) band [{lo:.2f}, {hi:.2f}]   time average   share inside   least   most   passes"]
    for name, s in result["nees"].items():
        lines.append(f"  {name:<10} {s['time_average']:14.3f} {s['share_inside']:14.3f} {s['least']:7.2f} "
                     f"{s['most']:6.2f}   {s['passes']}")
    lines.append(f"NIS band [{nlo:.2f}, {nhi:.2f}]   time average   share inside   passes | whiteness: share of lags "
                 f"1..{LAGS} within {next(iter(result['whiteness'].values()))['bound']:.4f}, largest |mean r|")
    for name, s in result["nis"].items():
        w = result["whiteness"][name]
        lines.append(f"  {name:<10} {s['time_average']:12.3f} {s['share_inside']:14.3f}   {s['passes']!s:<6} | "
                     f"{w['share_within']:.3f} {w['largest_mean_lag']:.4f} {w['passes']}")
    lines.append("attitude NEES by axis (north tilt, east tilt, yaw; 1 each if consistent): "
                 + ", ".join(f"{x:.3f}" for x in result["attitude_axes"]))
    r = result["rms"]
    lines.append(f"RMS error: horizontal {r['horizontal_m']:.4f} m, vertical {r['vertical_m']:.4f} m, attitude "
                 f"{r['attitude_deg']:.4f} deg (tilt {r['tilt_deg']:.4f}, yaw {r['yaw_deg']:.4f})")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vehicle", default=str(MATCHED_VEHICLE))
    parser.add_argument("--scene", default=str(MATCHED_SCENE))
    parser.add_argument("--estimator", default="vehicle", choices=("vehicle", "ekf"))
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--seconds", type=float, default=120.0, help="checked hover after --converge [s]")
    parser.add_argument("--converge", type=float, default=10.0, help="seconds left to converge [s]")
    parser.add_argument("--solver", default="freeflyer", choices=("mujoco", "freeflyer"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--vary", default=None, help="variation file (docs/worlds.md), e.g. one line "
                        "'start_yaw = 90' to hover facing another way")
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.add_argument("--matched", action="store_true", help="print the EKF attributes matched to the vehicle's "
                        "sensors in the scene, and fly nothing")
    args = parser.parse_args(argv)
    if args.matched:
        print(json.dumps(matched_tuning(args.vehicle, args.scene), indent=1))
        return 0
    data = fly(args.vehicle, args.scene, args.worlds, args.seconds, args.converge, args.solver, args.seed,
               args.estimator, args.vary)
    result = statistics(data)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
