"""The plane's stack flies its pitot's airspeed, and flies on without it when the pitot freezes or drops out.

The Aerosonde's default run (``nexus run``, CPU, default scene) for 70 s (the climb-out, the square's legs and the
start of the loiter) in a steady 8 m/s wind from the east (``--vary``: wind_speed 8, wind_direction 90; 11.1 m/s at 100 m, the
wind's profile): the first
leg flies east into it, the third west with it. Figures measured 2026-12-06: docs/fixed_wing.md, "Airspeed".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.plant.assets import resolve_asset
from tests.worlds.flights import fly

WIND = 8.0  # [m/s], from the east: the air moves west, (east, north, up) = (−8, 0, 0)
AIRSPEED = 25.0  # [m/s]
STALL = 10.39  # the Aerosonde's stall speed [m/s] (tests/fixed_wing/test_run_aerosonde.py works it out)
FAULT_AT = 40.0  # [s], on the third leg (west, the wind behind)
DT = 0.004  # [s]


def vary_file(folder, name: str, fault: str | None = None):
    lines = [f"wind_speed = {WIND}", "wind_direction = 90.0"]
    if fault is not None:
        lines += [f"sensor_fault_time = {FAULT_AT}", 'sensor_fault_sensor = "Pitot"', f'sensor_fault_mode = "{fault}"']
    path = folder / f"{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def flight(folder, name: str, fault: str | None = None, vehicle: str = "aerosonde"):
    return fly(folder / name, "--vehicle", vehicle, "--duration", "70", "--vary", str(vary_file(folder, name, fault)))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("pitot")


@pytest.fixture(scope="module")
def with_pitot(folder):
    return flight(folder, "pitot")


@pytest.fixture(scope="module")
def frozen(folder):
    return flight(folder, "frozen", "freeze")


def true_airspeed(record) -> np.ndarray:
    """|v − wind| [m/s] from the record's truth velocity and the air's at the base (world ENU: the wind's profile
    makes the 8 m/s at the scene's reference height about 11.1 m/s at 100 m)."""
    v = np.stack([record[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1)
    wind = np.stack([record[f"wind[{i}]"].to_numpy() for i in range(3)], 1)
    return np.linalg.norm(v - wind, axis=1)


def ground_speed(record) -> np.ndarray:
    return np.linalg.norm(np.stack([record[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1), axis=1)


def test_with_its_pitot_the_plane_holds_its_airspeed_whatever_the_wind(with_pitot):
    r = with_pitot.record
    t = r.time.to_numpy()
    assert np.all(r["airspeed_source"].to_numpy() == 1)
    cruise = t >= 30.0  # the climb to 100 m done
    # Through the air: 25 m/s within 2 m/s through the 45° turns between headwind and tailwind (flown 23.18 to
    # 25.21 m/s; without the pitot, below, 15.4 to 34.4). The pitot gives the indicated speed (ρ at the origin,
    # 1.225 kg/m³): at 100 m the true speed is √(1.225/1.2133) = 1.0048 times it, 0.12 m/s more.
    air = true_airspeed(r)[cruise]
    assert np.max(np.abs(air - AIRSPEED)) < 2.0
    # Over the ground: 25 − 11.1 = 13.9 m/s into the wind, 25 + 11.1 = 36.1 with it.
    over = ground_speed(r)[cruise]
    assert np.min(over) < 16.0 and np.max(over) > 34.0


def test_without_a_pitot_the_plane_flies_its_ground_speed_and_the_wind_moves_its_airspeed(folder):
    # The same file without its Pitot prim: the stack flies the speed over the ground as its airspeed.
    text = resolve_asset("vehicle", "aerosonde").read_text()
    start = text.index('def Scope "Pitot"')
    end = text.index("\n            }\n", start) + len("\n            }\n")
    bare = folder / "aerosonde_no_pitot.usda"
    bare.write_text(text[:start] + text[end:].lstrip(" "))
    r = flight(folder, "no_pitot", vehicle=str(bare)).record
    assert np.all(r["airspeed_source"].to_numpy() == 0)
    cruise = r.time.to_numpy() >= 30.0
    # Ground speed held at 25: through the air about 25 ± 11 on the legs along the wind (flown 15.4 to 34.4 m/s,
    # and 15 m of height lost in the slow upwind turn: 85.0 m).
    air = true_airspeed(r)[cruise]
    assert np.min(air) < 17.0 and np.max(air) > 33.0


def test_a_frozen_pitot_is_caught_within_three_samples_and_the_plane_flies_on_airspeed_less(frozen):
    r = frozen.record
    t, source = r.time.to_numpy(), r["airspeed_source"].to_numpy()
    assert np.all(source[t < FAULT_AT - DT / 2] == 1)
    # The pitot samples at 50 Hz: frozen, its fourth sample after the fault is the third repeat (60 ms later; the
    # fault may fall between samples: up to 20 ms more).
    caught = t[np.argmax(source == 2)] - FAULT_AT
    assert 0.039 <= caught <= 0.1, caught
    assert np.all(source[t >= FAULT_AT + 0.1] == 2)  # latched
    # Airspeed-less: no speed demand, the throttle from the trim and the energy rate. With the wind behind it the
    # plane keeps flying well clear of the stall (1.3 × 10.39 = 13.5 m/s) and under 35 m/s, and holds its height
    # (flown: 25.17 to 28.02 m/s through the air, 98.49 to 101.08 m).
    after = t >= FAULT_AT
    air = true_airspeed(r)[after]
    assert np.min(air) > 1.3 * STALL and np.max(air) < 35.0
    height = -r["estimate.position[2]"].to_numpy()[after]
    assert np.max(np.abs(height - 100.0)) < 10.0
    assert frozen.info["exit_reason"] == "duration"


def test_a_pitot_that_drops_out_is_caught_after_half_a_second(folder):
    r = flight(folder, "dropout", "dropout").record
    t, source = r.time.to_numpy(), r["airspeed_source"].to_numpy()
    caught = t[np.argmax(source == 2)] - FAULT_AT
    # No new sample from the last one before the fault: 0.5 s after it (at most 20 ms before the fault).
    assert 0.48 <= caught <= 0.51, caught
    assert math.isfinite(caught) and np.all(source[t >= FAULT_AT + 0.51] == 2)
