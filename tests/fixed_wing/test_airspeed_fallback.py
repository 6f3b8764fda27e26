"""Once its pitot fails, the plane's stack flies the ground speed less the EKF's wind (``nexus:airspeedFallback``,
PX4's ASPD_FALLBACK 1), or airspeed-less without it.

The Aerosonde on its EKF (vehicles/aerosonde_ekf.usda: the filter fuses the pitot's airspeed above 9 m/s, with two wind
states), a gains prim over it setting only ``nexus:airspeedFallback``, CPU, default scene, the whole plane mission from
the catapult to the stop, in a steady 8 m/s wind from the east (11.1 m/s at 100 m by the wind's profile, 8.6 m/s at
the final's height), the pitot frozen at 40 s. Figures measured 2026-12-07: docs/fixed_wing.md, "Airspeed".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.record.parts import read_record
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

FROZEN_AT = 40.0  # [s]
APPROACH_AIRSPEED = 18.0  # the plane mission's nexus:approachAirspeed default [m/s]
FINAL = 5  # the mission's final approach phase (plane_phase)


def over(reference: str, fallback: int) -> str:
    """A vehicle file referencing ``reference`` whole, with a gains prim setting only the fallback."""
    return ('#usda 1.0\n(\n    defaultPrim = "vehicle"\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n'
            f'    upAxis = "Z"\n)\n\ndef Xform "vehicle" (\n    prepend references = @{reference}@\n)\n{{\n'
            '    def Scope "fixed_wing" (\n        prepend apiSchemas = ["NexusFixedWingGainsAPI"]\n    )\n    {\n'
            f'        bool nexus:airspeedFallback = {fallback}\n    }}\n}}\n')


def flight(folder, fallback: int):
    vehicle = folder / f"aerosonde_ekf_fallback_{fallback}.usda"
    vehicle.write_text(over(resolve_asset("vehicle", "aerosonde_ekf"), fallback))
    vary = folder / f"frozen_{fallback}.toml"
    vary.write_text(f'wind_speed = 8.0\nwind_direction = 90.0\nsensor_fault_time = {FROZEN_AT}\n'
                    'sensor_fault_sensor = "Pitot"\nsensor_fault_mode = "freeze"\n')
    out = folder / f"run_{fallback}"
    summary = run_flight(RunConfig(vehicle=str(vehicle), device="cpu", vary=str(vary), duration=400.0), out,
                         progress=False)
    assert summary.exit_reason == "done", summary.exit_reason
    return read_record(out / "record.parquet").to_pandas(), json.loads((out / "run.json").read_text())


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("airspeed_fallback")


@pytest.fixture(scope="module")
def fallback(folder):
    return flight(folder, 1)


@pytest.fixture(scope="module")
def airspeed_less(folder):
    return flight(folder, 0)


def true_airspeed(record) -> np.ndarray:
    """|v − wind| [m/s] from the truth velocity and the air at the base (both world ENU)."""
    v = np.stack([record[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1)
    wind = np.stack([record[f"wind[{i}]"].to_numpy() for i in range(3)], 1)
    return np.linalg.norm(v - wind, axis=1)


def test_after_the_freeze_the_stack_flies_the_estimates_velocity_less_the_estimates_wind(fallback):
    record, info = fallback
    t, source = record.time.to_numpy(), record["airspeed_source"].to_numpy()
    assert np.all(source[t < FROZEN_AT] == 1)  # the pitot while it reads
    caught = t[np.argmax(source != 1)]
    assert FROZEN_AT < caught < FROZEN_AT + 0.1  # three repeats at 50 Hz (flown 40.04 s)
    assert np.all(source[t >= caught] == 3)  # latched, to the stop
    # What it flies is |v − w| of the filter's own velocity and wind (NED), worked out here from the record.
    v = np.stack([record[f"estimate.velocity[{i}]"].to_numpy() for i in range(3)], 1).astype(np.float64)
    w = np.stack([record[f"ekf_wind[{i}]"].to_numpy() for i in range(3)], 1).astype(np.float64)
    flown = record["plane_airspeed"].to_numpy()[source == 3]
    assert np.allclose(flown, np.linalg.norm(v - w, axis=1)[source == 3], rtol=1e-6, atol=1e-5)
    assert info["crash"]["crashed"] is None


def test_the_fallback_flies_the_approach_speed_and_airspeed_less_flight_does_not(fallback, airspeed_less):
    record, _ = fallback
    final = record["plane_phase"].to_numpy() == FINAL
    # The speed loop holds its airspeed near the approach's 18 m/s (flown: 18.07 at the final's start, 19.84 at its
    # end on the glide's energy, 18.36 on average).
    assert abs(np.mean(record["plane_airspeed"].to_numpy()[final]) - APPROACH_AIRSPEED) < 0.6
    # Through the air it flies slower by the wind estimate's error: frozen at 100 m's 11.1 m/s while the wind at the
    # final's height is about 8.6 (flown 15.52 to 16.53 m/s, 16.06 on average: 1.9 below).
    air = true_airspeed(record)[final]
    assert 14.5 < np.mean(air) < APPROACH_AIRSPEED - 1.0
    # Airspeed-less, nothing asks the plane to slow down for the approach: flown 22.96 to 24.65 m/s on the final.
    other, _ = airspeed_less
    assert np.all(other["airspeed_source"].to_numpy()[other.time.to_numpy() > FROZEN_AT + 0.1] == 2)
    assert np.mean(true_airspeed(other)[other["plane_phase"].to_numpy() == FINAL]) > APPROACH_AIRSPEED + 4.0


def test_on_the_route_after_the_freeze_both_keep_clear_of_the_stall(fallback, airspeed_less):
    # The square and the loiter (41 to 136 s, 100 m): the fallback 22.92 to 25.20 m/s through the air (the turns' dip,
    # as with the pitot), airspeed-less 24.93 to 28.14; the Aerosonde stalls at 10.39 m/s.
    for (record, _), (low, high) in ((fallback, (22.0, 25.5)), (airspeed_less, (24.0, 29.0))):
        t, phase = record.time.to_numpy(), record["plane_phase"].to_numpy()
        air = true_airspeed(record)[(t > FROZEN_AT + 1.0) & (phase <= 2)]
        assert low < air.min() and air.max() < high, (air.min(), air.max())


def test_a_fallback_without_an_estimator_that_fuses_airspeed_is_refused_before_any_stage_runs(tmp_path):
    vehicle = tmp_path / "aerosonde_fallback.usda"
    vehicle.write_text(over(resolve_asset("vehicle", "aerosonde"), 1))  # flown on the truth: no wind estimate
    with pytest.raises(BuildError) as raised:
        run_flight(RunConfig(vehicle=str(vehicle), device="cpu", duration=1.0), tmp_path / "run", progress=False)
    message = str(raised.value)
    assert f"{vehicle}: fixed-wing gains prim /vehicle/fixed_wing: nexus:airspeedFallback" in message
    assert "nexus:EKF2_ARSP_THR" in message and "\n" not in message
