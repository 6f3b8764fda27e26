"""Suite ``sensors``: what the four sensor stages add to a captured plant tick (CPU).

The Astro Max rests on the empty scene under the hold controller. One ring
has the plant only (physics, ESCs, propellers, controller); the other adds
the vehicle file's IMU, magnetometer, barometer and GPS at their own rates
(250/100/50/10 Hz), each a kernel launched every tick that decides on the
device whether to sample. Both run as one captured graph per tick. Target:
the sensor tick at most 1.2 times the plant tick.
"""

from __future__ import annotations

from nexus.bench.timing import interleaved_best
from nexus.core import Loop
from nexus.runtime.assembly import assemble
from nexus.sensors import Sensor
from nexus.runtime.startup import start

TARGET_RATIO = 1.2


def _loop(device: str, with_sensors: bool) -> Loop:
    vehicle = assemble("astro_max_base", "empty", device=device, controller="hold")
    parts = [c for c in vehicle.components if with_sensors or not isinstance(c, Sensor)]
    loop = Loop(parts, device=device, mode="captured").build()
    vehicle.plant.reset()
    start(loop, vehicle.plant)
    return loop


def run(device: str = "cpu", ticks: int = 1000, rounds: int = 6) -> dict:
    plant_loop = _loop(device, with_sensors=False)
    sensor_loop = _loop(device, with_sensors=True)
    best = interleaved_best({"plant": plant_loop.tick, "sensors": sensor_loop.tick}, ticks, rounds, device)
    plant_s, sensor_s = best["plant"], best["sensors"]
    result = {
        "suite": "sensors",
        "device": device,
        "ticks": ticks,
        "sensor_tick_us": sensor_s * 1e6,
        "plant_tick_us": plant_s * 1e6,
        "sensors_over_plant": sensor_s / plant_s,
    }
    result["targets_met"] = {"sensors_over_plant": result["sensors_over_plant"] <= TARGET_RATIO}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("captured tick, plant only [µs]", f"{result['plant_tick_us']:.1f}"),
        ("captured tick, plant + IMU, mag, baro, GPS [µs]", f"{result['sensor_tick_us']:.1f}"),
        (f"sensors over plant (time ratio, target <= {TARGET_RATIO})", f"{result['sensors_over_plant']:.3f}"),
    ]
