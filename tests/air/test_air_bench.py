"""The ``air`` bench suite compares like with like: its two vehicles differ by the air's stages and nothing else.

``air_cost`` is (loop with air - loop without) / loop with air, so the flight without air must be the same
vehicle with exactly the wind, drag, ground-effect and battery stages taken away (nexus/bench/air.py).
"""

from __future__ import annotations

from collections import Counter

from nexus.bench.air import TURBULENCE, WIND, write_vehicles
from nexus.runtime.flight import build_flight, fly
from nexus.runtime.config import RunConfig
from nexus.runtime.startup import start


def stages(config: RunConfig) -> Counter:
    """The ring's stages (name -> count) after one tick."""
    flight = build_flight(config)
    start(flight.loop, flight.vehicle.plant)
    fly(flight, None, 1)
    names = Counter(stage.name for stage in flight.loop.plan.stages)
    flight.loop.close()
    return names


def test_the_flights_with_and_without_air_differ_by_the_air_stages_only(tmp_path):
    air, still = write_vehicles(tmp_path)
    with_air = stages(RunConfig(vehicle=str(air), wind=WIND, turbulence=TURBULENCE, device="cpu"))
    without = stages(RunConfig(vehicle=str(still), device="cpu"))
    # One wind field, one drag, a ground effect per propeller (four), one battery.
    assert with_air - without == Counter({"wind": 1, "drag": 1, "ground_effect": 4, "battery": 1})
    assert not without - with_air
    assert without["propeller"] == 4 and without["step"] == 1
