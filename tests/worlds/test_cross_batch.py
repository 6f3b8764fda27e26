"""World i of an N-world run is, column for column, the one-world run of world i (CPU, bit for bit).

The short mission (about 9 s of sim time), seed 7, flown with N = 1, 3 and 16
worlds; then with a variation file whose draws make the worlds land at
different ticks, at N = 3 and 16, and three of its worlds flown alone with
``nexus run --world-of RUN:I``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.worlds.flights import bits_differ, fly

SHORT = ("--mission", "short", "--seed", "7", "--duration", "12")
#: Draws that change the flight itself (mass, rotors, lag, start, heading, wind) and the sensors.
VARIATION = """
mass = { dist = "normal", mean = 5.031, std = 0.15, low = 4.6, high = 5.5 }
thrust_scale = { dist = "uniform", low = 0.96, high = 1.04, per_rotor = true }
esc_lag_scale = { dist = "uniform", low = 0.8, high = 1.25 }
noise_scale = { dist = "uniform", low = 0.5, high = 2.0 }
start_x = { dist = "uniform", low = -1.0, high = 1.0 }
start_yaw = { dist = "uniform", low = -90.0, high = 90.0 }
base_force_y = { dist = "normal", mean = 0.0, std = 0.5 }
"""


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    root = tmp_path_factory.mktemp("plain")
    return {n: fly(root / f"n{n}", *SHORT, "--worlds", str(n)) for n in (1, 3, 16)}


@pytest.fixture(scope="module")
def varied(tmp_path_factory):
    root = tmp_path_factory.mktemp("varied")
    path = root / "vary.toml"
    path.write_text(VARIATION)
    runs = {n: fly(root / f"n{n}", *SHORT, "--worlds", str(n), "--vary", str(path)) for n in (3, 16)}
    alone = {i: fly(root / f"alone{i}", "--world-of", f"{runs[16].out}:{i}") for i in (0, 7, 15)}
    return runs, alone


def test_one_world_has_no_world_column_and_many_have_one(plain):
    assert "world" not in plain[1].record
    assert list(plain[16].record.columns[:2]) == ["time", "world"]
    assert plain[16].info["worlds"] == 16
    assert plain[16].info["stage_plan"].endswith("x16, 16 worlds")


def test_world_zero_of_any_batch_is_the_one_world_run(plain):
    one = plain[1].world(0)
    for n in (3, 16):
        assert bits_differ(plain[n].world(0), one) == []


@pytest.fixture(scope="module")
def on_truth(tmp_path_factory):
    # Noise alone, not the estimator's answer to it: on the true state the sensors' noise cannot move the vehicle.
    return fly(tmp_path_factory.mktemp("truth") / "n6", *SHORT[:4], "--duration", "2", "--worlds", "6",
               "--estimator", "truth")


def test_worlds_draw_their_own_noise(on_truth):
    # The PID flies on the true state, so the flight is the same; the sensors' noise is not.
    zero, five = on_truth.world(0), on_truth.world(5)
    assert "imu.accel[0]" in bits_differ(zero, five)
    assert "body/base.pose[2]" not in bits_differ(zero, five)


def test_rows_are_sorted_by_tick_then_world(plain):
    record = plain[3].record
    assert list(record.world[:6]) == [0, 1, 2, 0, 1, 2]
    assert np.all(np.diff(record.time.to_numpy()) >= 0.0)


def test_a_world_of_the_batch_is_the_world_flown_alone(varied):
    runs, alone = varied
    for i, run in alone.items():
        assert bits_differ(runs[16].world(i), run.world(0)) == [], i
        assert run.info["first_world"] == i and run.info["worlds"] == 1


def test_the_same_world_in_batches_of_3_and_16_is_the_same(varied):
    runs, _ = varied
    for i in range(3):
        assert bits_differ(runs[3].world(i), runs[16].world(i)) == [], i
    assert runs[3].info["world_values"] == runs[16].info["world_values"][:3]


def test_worlds_end_at_their_own_ticks_and_stop_recording(varied):
    runs, _ = varied
    run = runs[16]
    rows = run.record.groupby("world").size().to_numpy()
    summary = run.summary
    assert (summary.exit_reason == "done").all()
    assert len(set(rows)) >= 2  # the draws spread the landings over several ticks (landed checks: every 10)
    # A world's rows stop at the tick it landed: one row per tick, at 250 Hz.
    assert np.array_equal(rows, np.rint(summary.done_time.to_numpy() * 250.0).astype(int))
    assert run.info["ticks"] == rows.max()
    assert run.info["record_rows"] == rows.sum()


def test_a_finished_world_stays_where_it_landed(varied):
    runs, _ = varied
    run = runs[16]
    last = run.record.groupby("world").tail(1).set_index("world").sort_index()
    for name, column in (("final_x", "body/base.pose[0]"), ("final_y", "body/base.pose[1]"),
                         ("final_z", "body/base.pose[2]")):
        # The world that landed first sat frozen while the others flew on: its last row is its final state.
        assert np.array_equal(run.summary[name].to_numpy(), last[column].to_numpy().astype(np.float64)), name


def test_the_drawn_values_are_in_run_json_and_the_summary(varied):
    runs, _ = varied
    info, summary = runs[16].info, runs[16].summary
    masses = [values["mass"] for values in info["world_values"]]
    assert len(set(masses)) == 16 and all(4.6 <= m <= 5.5 for m in masses)
    assert np.allclose(summary["vary.mass"], masses)
    assert np.allclose(summary["vary.thrust_scale[3]"], [v["thrust_scale"][3] for v in info["world_values"]])


def test_the_distribution_is_printed(varied):
    runs, _ = varied
    output = runs[16].output
    assert "worlds: 16, 0 failed" in output
    for figure in ("done_time", "max_altitude_error", "max_yaw_error", "landing_error"):
        assert figure in output and "median" in output and "p95" in output


def test_replay_compares_every_world(varied, tmp_path):
    from nexus.runtime.replay import replay

    result = replay(varied[0][3].out)
    assert result.identical, result.first_difference
    assert len(result.compared) > 70
