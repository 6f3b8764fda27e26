"""A one-world captured ring skips a sensor's launch on the ticks it has no sample due, and flies the same bits.

The clock's kernel sets one flag per scheduled stage each tick (``nexus.core.schedule``); the stage is captured
under a conditional node on that flag. The rule it applies is the sensors' own: a sample is due at
``first + index·period`` [ns], every tick for a period of 0 or a schedule not yet started.
"""

from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
import warp as wp

import nexus.core.loop as loop_module
from nexus.core.schedule import falls_due
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight


@wp.kernel
def due_of(cases: wp.array2d(dtype=wp.int64), out: wp.array(dtype=wp.int32)):
    i = wp.tid()
    out[i] = wp.where(falls_due(cases[i, 0], cases[i, 1], cases[i, 2], cases[i, 3]), 1, 0)


def test_the_rule_by_hand():
    ms = 1_000_000
    # (now, period, first, index): a 100 Hz sensor started at 4 ms is next due at 4 + 10·index ms.
    cases = [
        (12 * ms, 10 * ms, 4 * ms, 1, 0),  # due at 14 ms: not yet
        (16 * ms, 10 * ms, 4 * ms, 1, 1),  # past 14 ms: due
        (14 * ms, 10 * ms, 4 * ms, 1, 1),  # exactly on it
        (20 * ms, 10 * ms, 4 * ms, 2, 0),  # the next, at 24 ms
        (20 * ms, 0, 4 * ms, 7, 1),        # period 0: every tick
        (4 * ms, 10 * ms, 0, 0, 1),        # not started: the first sample
    ]
    table = wp.array(np.array([c[:4] for c in cases], dtype=np.int64), dtype=wp.int64, device="cpu")
    out = wp.zeros(len(cases), dtype=wp.int32, device="cpu")
    wp.launch(due_of, len(cases), inputs=[table], outputs=[out], device="cpu")
    assert out.numpy().tolist() == [c[4] for c in cases]


def test_the_default_ring_flags_its_three_slow_sensors_and_the_gps_flag_is_up_one_tick_in_25():
    flight = build_flight(RunConfig(mission="short"), "cpu")
    try:
        loop = flight.loop
        loop.build()
        flagged = sorted(stage.name for stage in loop.plan.stages if id(stage) in loop._executor.conditions)
        assert flagged == ["baro", "gps", "mag"]  # the IMU samples every tick (250 Hz): never skipped
        gps = next(stage for stage in loop.plan.stages if stage.name == "gps")
        flag = loop._executor.conditions[id(gps)]
        ups = []
        for _ in range(100):
            loop.advance(1)
            ups.append(int(flag.numpy()[0]))
        # 10 Hz on a 250 Hz tick: the first tick of the flight (after the start-up's sample) and then one in 25.
        assert np.flatnonzero(ups).tolist() == [0, 25, 50, 75], ups
    finally:
        flight.loop.close()


def test_many_worlds_launch_every_sensor_every_tick():
    flight = build_flight(RunConfig(mission="short", worlds=2), "cpu")
    try:
        flight.loop.build()
        assert flight.loop._executor.conditions == {}
    finally:
        flight.loop.close()


@pytest.mark.parametrize("vehicle", ["astro_max_base", "aerosonde"])
def test_skipping_between_samples_flies_the_same_bits(tmp_path, monkeypatch, vehicle):
    tables = {}
    options = RunConfig(mission="short") if vehicle == "astro_max_base" else RunConfig(vehicle=vehicle,
                                                                                       controller="fixed_wing")
    for skip in (True, False):
        monkeypatch.setattr(loop_module, "SKIP_BETWEEN_SAMPLES", skip)
        flight = build_flight(options, "cpu")
        out = tmp_path / str(skip)
        # 3 s: 750 ticks, every sensor sampled many times (the GPS 30 times), the EKF fusing each sample.
        run_flight(replace(flight.options, device="cpu", duration=3.0), out, progress=False, flight=flight)
        tables[skip] = pq.read_table(out / "record.parquet")
    assert tables[True].num_rows == 750
    assert tables[True].equals(tables[False])
