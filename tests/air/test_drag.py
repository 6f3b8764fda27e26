"""Drag from the relative air: a hover in a steady wind settles at the tilt worked out by hand, and a flight
records the wind and replays bit for bit.

The test vehicle (tests/data/astro_max_drag.usda) is the Astro Max, m = 5.831 kg, kT = 2.26e-4 N/(rad/s)^2 per
rotor, with test drag coefficients: rotor drag c = 5e-4 N/((m/s)(rad/s)), body drag 1/2 rho Cd A = k_x = 0.1225
N/(m/s)^2 along x and y (0.2 m^2, Cd 1, rho 1.225) and k_z = 0.18375 along z (0.3 m^2).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.runtime.flight import build_flight, fly
from nexus.runtime.config import RunConfig
from nexus.runtime.startup import start

DATA = Path(__file__).resolve().parents[1] / "data"
DRAG_VEHICLE = DATA / "astro_max_drag.usda"
WINDY_HOVER = DATA / "windy_hover.usda"


def body_z(q: np.ndarray) -> np.ndarray:
    """The base's up axis in the world, from its quaternion (x, y, z, w)."""
    x, y, z, w = q
    return np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


def test_hover_in_a_steady_5_m_s_wind_settles_at_the_hand_worked_tilt():
    # Hovering still in V = 5 m/s from the west (+x), tilted by theta into the wind (thrust axis toward -x).
    # The air relative to the base is (V, 0, 0): V cos(theta) in the rotor plane, -V sin(theta) along the thrust.
    # Along the body's x: c * sum(omega) * V cos(theta) + k_x V^2 cos^2(theta) = m g sin(theta);
    # along its z: T = 4 kT omega^2 = m g cos(theta) + k_z V^2 sin^2(theta), so sum(omega) = 2 sqrt(T / kT).
    # Fixed point from theta = 0: T = 56.957 N, sum(omega) = 1004.04 rad/s, rotor drag 2.498 N, body drag 3.034 N,
    # theta = asin(5.532 / 57.183) = 5.5518 deg.
    flight = build_flight(RunConfig(vehicle=str(DRAG_VEHICLE), scene=str(WINDY_HOVER), duration=60.0, device="cpu",
                                  estimator="truth"))  # the physics, not the estimate: fly on the true state
    plant = flight.vehicle.plant
    start(flight.loop, plant)
    fly(flight, None, 20 * 250)  # climb to 5 m in about 5 s, then 15 s of hover
    z = body_z(plant.state.body_q.numpy()[plant.base][3:])
    assert math.degrees(math.acos(z[2])) == pytest.approx(5.5518, abs=0.02)
    assert z[0] < -0.09 and abs(z[1]) < 1e-3  # leaning west, into the wind
    assert np.abs(plant.state.body_qd.numpy()[plant.base][:3]).max() < 0.01  # at rest: the forces balance


def nexus(*args, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nexus.cli", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=600)


def test_wind_8_at_270_flies_records_the_wind_and_replays_bit_for_bit(tmp_path):
    # The short mission at 2 m in 8 m/s from the west at 10 m (power law 1/7) with light turbulence: the
    # recorded wind blows east, and the replay of run.json (which holds --wind and --turbulence) is identical.
    out = tmp_path / "run"
    flown = nexus("run", "--vehicle", DRAG_VEHICLE, "--mission", "short", "--duration", "3", "--wind", "8@270",
                  "--turbulence", "light", "--device", "cpu", "--out", out, "--quiet", cwd=tmp_path)
    assert flown.returncode == 0, flown.stderr
    assert "-> wind -> " in flown.stderr + flown.stdout + (out / "run.log").read_text()
    table = pq.read_table(out / "record.parquet")
    east = table.column("wind[0]").to_numpy()
    assert 3.0 < east.mean() < 9.0  # 8 (h/10)^(1/7) from 0.3 m (4.9 m/s) to 2 m (6.9 m/s), and turbulence
    options = json.loads((out / "run.json").read_text())["options"]
    assert options["wind"] == "8@270" and options["turbulence"] == "light"
    replayed = nexus("replay", out, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stderr + replayed.stdout
    assert "identical" in replayed.stdout


def stage_names(config: RunConfig) -> list[str]:
    """The ring's stage names, after flying 1 s of it (the drag with no wind reads the constant still air)."""
    flight = build_flight(config)
    start(flight.loop, flight.vehicle.plant)
    fly(flight, None, 250)
    names = [stage.name for stage in flight.loop.plan.stages]
    flight.loop.close()
    return names


def test_the_default_flight_has_drag_but_no_wind_and_a_drag_vehicle_without_wind_reads_still_air():
    # The Astro Max carries its estimated drag coefficients (docs/vehicles.md); the empty scene has no wind prim.
    default = set(stage_names(RunConfig(device="cpu")))
    assert "drag" in default and "wind" not in default
    assert not {"wind", "drag"} & set(stage_names(RunConfig(vehicle="x500", device="cpu")))
    names = stage_names(RunConfig(vehicle=str(DRAG_VEHICLE), device="cpu"))
    assert "drag" in names and "wind" not in names
