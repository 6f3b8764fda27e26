"""The due-time rule: when each sensor samples, and the time it stamps."""

from __future__ import annotations

import pytest

from nexus.runtime.assembly import PrimContext
from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import open_stage
from nexus.sensors import Barometer
from nexus.runtime.assembly import build_component
from nexus.sensors.schedule import period_ns
from nexus.runtime.startup import start
from tests.sensors.conftest import place, ring, sample

TICK_NS = 4_000_000  # 250 Hz


def test_period_is_whole_nanoseconds_and_zero_means_every_tick():
    assert period_ns(50.0, TICK_NS) == 20_000_000  # 1e9 / 50
    assert period_ns(100.0, TICK_NS) == 10_000_000
    assert period_ns(250.0, TICK_NS) == 0  # as fast as the tick: every tick
    assert period_ns(1000.0, TICK_NS) == 0  # faster than the tick: every tick
    assert period_ns(0.0, TICK_NS) == 0
    assert period_ns(3.0, TICK_NS) == 333_333_333  # round(1e9 / 3)


def sample_times(loop, signal: str, writer: str, ticks: int) -> list[tuple[int, float, float]]:
    """(tick, clock time [s], sample time [s]) after each of ``ticks`` ticks."""
    rows = []
    for index in range(1, ticks + 1):
        loop.tick()
        rows.append((index, float(loop.output("time").numpy()[0]), float(sample(loop, signal, writer).time)))
    return rows


def test_50_hz_sensor_at_250_hz_samples_every_5th_tick_and_stamps_the_tick_time(ground_vehicle):
    # Start-up samples at t = 0 and starts the schedule; the k-th next sample is due at
    # k·20 ms = every 5th tick of 4 ms, stamped with that tick's own time (k·0.02 s).
    loop = ring(ground_vehicle)  # the file's barometer runs at 50 Hz
    ground_vehicle.plant.reset()
    start(loop, ground_vehicle.plant)
    assert sample(loop, "baro").time == 0.0
    previous = sample(loop, "baro")
    for tick in range(1, 31):
        loop.tick()
        clock = float(loop.output("time").numpy()[0])
        current = sample(loop, "baro")
        stamped = current.time
        if tick % 5 == 0:
            assert stamped == clock == tick * 0.004
            assert current.pressure != previous.pressure  # a fresh, noisy sample
        else:
            # Between samples the signal keeps the last one, time and values.
            assert stamped == (tick // 5) * 0.02
            assert current.pressure == previous.pressure
        previous = current


def test_100_hz_sensor_at_250_hz_follows_its_due_times_without_drift(void_vehicle):
    # Due at 10, 20, 30, 40 ms after the first sample (first tick, 4 ms): the first tick at or
    # after each is 16, 24, 36, 44 ms: 10 ms apart on average, never accumulating the 2 ms.
    baro = Barometer("/test/baro", plant=void_vehicle.plant, noise=False, rate=100.0)
    loop = ring(void_vehicle, [baro])
    place(void_vehicle, (0.0, 0.0, 50.0))
    stamps = sorted({round(stamped, 9) for _, _, stamped in sample_times(loop, "baro", None, 26)})
    assert stamps == [0.004, 0.016, 0.024, 0.036, 0.044, 0.056, 0.064, 0.076, 0.084, 0.096, 0.104]


@pytest.mark.parametrize("rate", [0.0, 1000.0])
def test_rate_zero_or_faster_than_the_tick_samples_every_tick(void_vehicle, rate):
    baro = Barometer("/test/baro", plant=void_vehicle.plant, noise=False, rate=rate)
    loop = ring(void_vehicle, [baro])
    place(void_vehicle, (0.0, 0.0, 50.0))
    for _, clock, stamped in sample_times(loop, "baro", None, 6):
        assert stamped == clock


@pytest.mark.parametrize("api, prim", [
    ("NexusImuAPI", "/vehicle/body/base/Imu"),
    ("NexusMagnetometerAPI", "/vehicle/body/base/Mag"),
    ("NexusBarometerAPI", "/vehicle/body/base/Baro"),
    ("NexusGpsAPI", "/vehicle/body/base/Gps"),
])
def test_negative_rate_fails_the_build_naming_the_prim(ground_vehicle, api, prim):
    path = resolve_asset("vehicle", "astro_max_base")
    stage = open_stage(path)
    stage.SetEditTarget(stage.GetSessionLayer())  # an in-memory edit; the file stays untouched
    sensor = stage.GetPrimAtPath(prim)
    sensor.GetAttribute("nexus:rate").Set(-5.0)
    context = PrimContext(ground_vehicle.plant, stage, path, len(ground_vehicle.plant.rotors))
    with pytest.raises(BuildError, match=rf"{path}: sensor prim {prim}: nexus:rate is -5 Hz"):
        build_component(api, sensor, context)


def test_a_sensor_built_in_code_takes_the_defaults_its_spec_declares_and_refuses_an_unknown_parameter(void_vehicle):
    # The barometer's spec declares 50 Hz and 3 Pa (PX4's Gazebo barometer); nothing else restates them.
    baro = Barometer("/test/baro", plant=void_vehicle.plant)
    assert (baro.rate, baro.noise_sigma, baro.noise) == (50.0, 3.0, True)
    assert Barometer("/test/baro", plant=void_vehicle.plant, noise_sigma=0.5).noise_sigma == 0.5
    with pytest.raises(TypeError, match="Barometer has no parameter noise_sigmaa; its parameters are rate, noise, "
                                        "mount, noise_sigma"):
        Barometer("/test/baro", plant=void_vehicle.plant, noise_sigmaa=0.5)
