"""Checkpointing: keep the carried state every k ticks, run each segment again in the backward pass.

The recomputation runs the same kernels on the same inputs, so on the CPU the gradients, the loss and the
trajectory equal the full tape's bit for bit (compared with ``==``, not a tolerance), for a k that does not
divide the ticks and, with a truncated window, for one that does; the memory held shrinks to about one
segment's ticks out of all of them.
"""

import json
import logging

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.diff import Rollout

TICKS = 150
#: Does not divide TICKS: segments of 40, 40, 40 and 30 ticks.
EVERY = 40
#: Every parameter kind: PID gains, mass and inertia, a rotor, the ESC lags, the start.
NAMES = ["pid.kp_z", "pid.kd_z", "pid.ki_z", "pid.kp_yaw", "mass", "inertia.zz", "rotor1.kt", "esc.tau_up",
         "esc.tau_down", "init.z", "init.vz", "init.x"]
SIGNALS = ["position", "velocity", "attitude", "rates", "controls", "speed", "accel", "gyro"]


@pytest.fixture(scope="module")
def pair():
    """The full tape and the checkpointed rollout, each with its loss, gradients and trajectory."""
    full = Rollout(TICKS, checkpoint=None)
    checkpointed = Rollout(TICKS, checkpoint=EVERY)
    runs = {}
    for name, rollout in (("full", full), ("checkpointed", checkpointed)):
        loss, grads = rollout.value_and_gradients(NAMES)
        runs[name] = (rollout, loss, grads, rollout.trajectory())
    return runs


def test_checkpointed_gradients_equal_the_full_tapes_bit_for_bit(pair):
    _, full_loss, full, _ = pair["full"]
    rollout, loss, checkpointed, _ = pair["checkpointed"]
    assert rollout.checkpoint == EVERY and len(rollout._segments()) == 4  # 40 does not divide 150
    assert loss == full_loss
    assert checkpointed == full
    # Each parameter reaches the loss, but the yaw gain: the altitude loss meets it only through rounding (its
    # gradient was 1.0e-16 before the Astro Max carried drag, and is exactly 0.0 with it).
    assert all(value != 0.0 for name, value in full.items() if value is not None and name != "pid.kp_yaw")


def test_a_second_backward_pass_and_a_second_call_give_the_same_bits(pair):
    _, _, full, _ = pair["full"]
    rollout = pair["checkpointed"][0]
    rollout.backward()  # the kept last segment was used up: this one runs every segment again
    assert {name: rollout.gradient(name) for name in NAMES} == full
    assert rollout.value_and_gradients(NAMES)[1] == full


def test_the_trajectory_is_unchanged_taped_and_replayed_as_a_graph(pair):
    _, full_loss, _, expected = pair["full"]
    rollout, _, _, taped = pair["checkpointed"]
    for signal in SIGNALS:
        assert getattr(taped, signal).tobytes() == getattr(expected, signal).tobytes(), signal
    assert [rollout.forward() for _ in range(3)] == [full_loss] * 3  # launched, captured, replayed
    replayed = rollout.trajectory()
    for signal in SIGNALS:
        assert getattr(replayed, signal).tobytes() == getattr(expected, signal).tobytes(), signal


def test_the_memory_held_is_about_one_segment_of_the_ticks(pair):
    full, checkpointed = pair["full"][0], pair["checkpointed"][0]
    # A segment of k ticks keeps k + 1 ticks' boundaries and k ticks' steps; checkpoints, the trajectory's
    # copies and the tables add a few hundred bytes a tick.
    expected = full.bytes_held() * (EVERY + 1) / TICKS
    assert checkpointed.bytes_held() == pytest.approx(expected, rel=0.1)
    assert checkpointed.bytes_per_tick() == checkpointed.bytes_held() / TICKS
    assert full.bytes_held() / checkpointed.bytes_held() > 3.3
    # The estimate made before allocating is the full tape's; with the arrays' objects and the tape (what auto
    # checkpointing compares with the budget) it is the full rollout's memory_estimate.
    assert checkpointed.full_bytes == full.full_bytes == pytest.approx(full.bytes_held(), rel=0.02)
    assert checkpointed.full_memory == full.full_memory == pytest.approx(full.memory_estimate(), rel=0.02)
    assert checkpointed.memory_estimate() == pytest.approx(full.memory_estimate() * (EVERY + 1) / TICKS, rel=0.1)


#: Window boundaries at 45 (inside a segment), 90 (a segment's first tick) and 135 (inside).
WINDOW, DIVIDING = 45, 30


@pytest.fixture(scope="module")
def windowed():
    names = ["pid.kd_z", "mass", "rotor1.kt", "init.vz"]
    full = Rollout(TICKS, window=WINDOW, checkpoint=None)
    checkpointed = Rollout(TICKS, window=WINDOW, checkpoint=DIVIDING)
    return names, full.value_and_gradients(names), checkpointed.value_and_gradients(names), checkpointed


def test_checkpoints_compose_with_a_truncated_window_bit_for_bit(windowed, pair):
    names, (full_loss, full), (loss, checkpointed), rollout = windowed
    assert rollout.checkpoint == DIVIDING and TICKS % DIVIDING == 0
    assert loss == full_loss
    assert checkpointed == full
    # The window did cut: the start velocity reaches only the first window's terms.
    assert full["init.vz"] != pair["full"][2]["init.vz"]


def test_auto_checkpoints_every_ceil_sqrt_ticks_over_the_budget_and_says_so(caplog):
    with caplog.at_level(logging.INFO, logger="nexus"):
        rollout = Rollout(TICKS, memory_budget=10e6)  # every tick kept: 3 MB of arrays, about 36 MB in all
    assert rollout.checkpoint == 13  # ⌈√150⌉
    assert rollout.bytes_held() < rollout.full_bytes < 10e6 < rollout.full_memory
    assert rollout.memory_estimate() < 10e6
    assert "checkpointing every 13 ticks" in caplog.text and "more than the memory budget (10.0 MB)" in caplog.text


def test_auto_keeps_every_tick_within_the_budget(pair):
    # The default budget is a quarter of the memory available: a 150-tick rollout (3 MB) stays whole.
    assert pair["full"][0].checkpoint is None
    assert Rollout(2, memory_budget=1e12).checkpoint is None


@pytest.mark.parametrize("value", [0, -3, 2.5, True, "often"])
def test_a_checkpoint_interval_of_no_whole_ticks_is_refused_in_one_line(value):
    with pytest.raises(BuildError, match=r"--checkpoint .*: give a whole number of ticks, 1 or more, 'auto' or"):
        Rollout(10, checkpoint=value)


def test_a_checkpoint_of_the_whole_rollout_or_more_keeps_every_tick():
    rollout = Rollout(5, checkpoint=5)
    assert rollout.checkpoint is None and len(rollout.states) == 6
    assert np.isfinite(rollout.forward())


def test_optimize_takes_checkpoint_and_reports_the_memory(tmp_path):
    out = tmp_path / "opt"
    result = CliRunner().invoke(main, ["optimize", "--params", "pid.kd_z", "--steps", "1", "--duration", "0.2",
                                       "--checkpoint", "20", "--no-fly", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "memory: checkpoint every 20 ticks" in result.output
    tuned = json.loads((out / "tuned.json").read_text())
    assert tuned["ticks"] == 50 and tuned["checkpoint"] == 20 and tuned["bytes_held"] < tuned["memory_estimate"]


def test_optimize_refuses_a_checkpoint_of_no_whole_ticks_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["optimize", "--params", "pid.kd_z", "--checkpoint", "0", "--no-fly",
                                       "--out", str(tmp_path / "x")])
    assert result.exit_code != 0
    assert "--checkpoint 0: give a whole number of ticks, 1 or more, 'auto' or 'off'" in result.output
