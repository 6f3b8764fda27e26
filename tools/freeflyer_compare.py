"""Compare two records of the same mission, MuJoCo's and the free-flyer's: position, attitude, IMU.

Usage: python tools/freeflyer_compare.py MUJOCO_RUN FREEFLYER_RUN

Prints the largest differences in flight (both bases more than ``--air`` metres above where they
started, i.e. off the ground) and on the ground (the rest of the common ticks), so the contact model's
looser bound is stated apart from the flight's.
"""

from __future__ import annotations

import argparse

import numpy as np
import pyarrow.parquet as pq


def load(run: str) -> dict[str, np.ndarray]:
    table = pq.read_table(f"{run}/record.parquet")
    return {name: table.column(name).to_numpy().astype(np.float64) for name in table.schema.names
            if name.startswith(("time", "body/base.", "imu."))}


def columns(data: dict, prefix: str, count: int) -> np.ndarray:
    return np.stack([data[f"{prefix}[{k}]"] for k in range(count)], axis=1)


def attitude_error_deg(q_a: np.ndarray, q_b: np.ndarray) -> np.ndarray:
    """The angle of the rotation between two unit quaternions (x, y, z, w) [deg]."""
    dot = np.abs(np.sum(q_a * q_b, axis=1) / (np.linalg.norm(q_a, axis=1) * np.linalg.norm(q_b, axis=1)))
    return np.degrees(2.0 * np.arccos(np.clip(dot, -1.0, 1.0)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mujoco")
    parser.add_argument("freeflyer")
    parser.add_argument("--air", type=float, default=0.05, help="height above the start that counts as flying [m]")
    args = parser.parse_args()
    a, b = load(args.mujoco), load(args.freeflyer)
    n = min(len(a["time"]), len(b["time"]))
    pos_a, pos_b = columns(a, "body/base.pose", 7)[:n], columns(b, "body/base.pose", 7)[:n]
    start = min(pos_a[0, 2], pos_b[0, 2])
    air = (pos_a[:, 2] > start + args.air) & (pos_b[:, 2] > start + args.air)
    dp = np.linalg.norm(pos_a[:, :3] - pos_b[:, :3], axis=1)
    da = attitude_error_deg(pos_a[:, 3:], pos_b[:, 3:])
    acc = np.linalg.norm(columns(a, "imu.accel", 3)[:n] - columns(b, "imu.accel", 3)[:n], axis=1)
    gyro = np.linalg.norm(columns(a, "imu.gyro", 3)[:n] - columns(b, "imu.gyro", 3)[:n], axis=1)
    print(f"ticks compared: {n} ({int(air.sum())} in flight), records {len(a['time'])} and {len(b['time'])} ticks")
    for label, mask in (("flight", air), ("ground", ~air)):
        if not mask.any():
            continue
        print(f"{label}: position max {dp[mask].max() * 100:.3f} cm, attitude max {da[mask].max():.4f} deg, "
              f"IMU accel max {acc[mask].max():.4f} m/s^2 (rms {np.sqrt(np.mean(acc[mask] ** 2)):.4f}), "
              f"gyro max {gyro[mask].max():.5f} rad/s (rms {np.sqrt(np.mean(gyro[mask] ** 2)):.5f})")


if __name__ == "__main__":
    main()
