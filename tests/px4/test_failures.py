"""Each way PX4 can fail ends the run with its own error and exit reason, never as a success."""

import json
import math
import threading

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.px4.errors import BadActuatorsError, NoAnswerError, WrongStampsError
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from tests.px4.test_lockstep import HOVER, boots_then, fly_with, px4_flight

TICK_US = 4000
ROW = [HOVER] * 4 + [0.0] * 12


def run_info(out):
    return json.loads((out / "run.json").read_text())


def test_a_px4_that_never_answers_fails_the_run(tmp_path):
    # PX4 connects, asks for ground truth and sends its heartbeat, then never answers. After
    # 0.5 s of sim time (and at least the 0.2 s answer timeout of wall time) the run fails,
    # long before its 20 s: flying on zero controls is no success.
    with pytest.raises(NoAnswerError, match=r"PX4 connected but never answered HIL_ACTUATOR_CONTROLS in \d+\.\d s of sim"):
        fly_with(lambda port: ScriptedPx4(port, lambda n: None), tmp_path, seconds=20.0,
                 first_answer_s=0.5, answer_timeout=0.2, boot_patience=0.005)
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-no-answer" and "never answered" in info["error"]
    assert 0.5 <= info["sim_time_s"] < 20.0
    assert info["controller_stats"]["answers"] == 0 and info["controller_stats"]["heartbeats"] == 1
    assert pq.read_table(tmp_path / "record.parquet").num_rows == info["ticks"]


def test_a_run_shorter_than_the_first_answer_bound_still_fails_when_px4_never_answered(tmp_path):
    # The same silent PX4, but the run's duration (1 s) ends before the 30 s boot bound: the
    # run reaches its end having flown on zero controls throughout, which is still no success.
    with pytest.raises(NoAnswerError, match=r"never answered HIL_ACTUATOR_CONTROLS in 1\.0 s of sim .*reached its end"):
        fly_with(lambda port: ScriptedPx4(port, lambda n: None), tmp_path, seconds=1.0, boot_patience=0.005)
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-no-answer"
    assert info["ticks"] == 250 and info["controller_stats"]["answers"] == 0
    assert pq.read_table(tmp_path / "record.parquet").num_rows == 250


def test_a_run_asked_to_end_before_px4_ever_answered_fails(tmp_path):
    # The mission commander ends the run (its event is set) while PX4 has not answered once.
    ended = threading.Event()
    ended.set()
    with pytest.raises(NoAnswerError, match="never answered .* the run was asked to end"):
        fly_with(lambda port: ScriptedPx4(port, lambda n: None), tmp_path, finish_when=ended)
    assert run_info(tmp_path)["exit_reason"] == "px4-no-answer"


def test_non_finite_answers_end_the_run_after_50_in_a_row(tmp_path):
    # Good rows for messages 3..40, NaN from 41 on. The run keeps the last good row and stops
    # on the 50th unusable answer in a row, instead of flying on stale controls. (The good
    # stretch is long so that the boot, which lasts until the first answer is seen, has
    # ended before the NaNs start, however late the peer thread is scheduled.)
    script = lambda n: None if n <= 2 else (ROW if n <= 40 else [math.nan] * 16)  # noqa: E731
    with pytest.raises(BadActuatorsError, match="50 HIL_ACTUATOR_CONTROLS in a row with non-finite"):
        fly_with(lambda port: ScriptedPx4(port, script), tmp_path, seconds=2.0)
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-bad-actuators"
    assert info["controller_stats"]["non_finite_answers"] == 50
    controls = pq.read_table(tmp_path / "record.parquet").column("controls[0]").to_numpy()
    assert np.all(np.isfinite(controls)) and controls[-1] == np.float32(HOVER)
    assert info["ticks"] == 89  # tick 90 got the 50th NaN (messages 41..90) and did not complete


def test_a_few_non_finite_answers_are_counted_and_warned_once(tmp_path, caplog):
    script = lambda n: None if n <= 2 else ([math.inf] * 16 if n in (20, 30, 31) else ROW)  # noqa: E731
    summary, px4, _ = fly_with(lambda port: ScriptedPx4(port, script), tmp_path, seconds=0.4)
    assert summary.exit_reason == "duration" and summary.ticks == 100
    assert px4.stats()["non_finite_answers"] == 3
    warnings = [r.getMessage() for r in caplog.records if "non-finite" in r.getMessage()]
    assert len(warnings) == 1 and "sent 3 " in warnings[0]


@pytest.mark.parametrize("shift_us, past, future", [(-TICK_US, 1, 0), (10**9, 0, 1)])
def test_wrongly_stamped_answers_are_counted_and_named(tmp_path, shift_us, past, future):
    # From the 100th message on (well after the boot has ended, however slowly the peer
    # thread is scheduled) PX4 answers with the stamp one tick early (past) or 1000 s
    # late (future). Each wait then sees one wrong answer and times out; the error says PX4
    # is answering with the wrong stamps (not "is PX4 still running?") and counts both kinds.
    stamp = lambda n, t: t if n < 100 else t + shift_us  # noqa: E731
    with pytest.raises(WrongStampsError, match=f"it sent {past} stamped earlier and {future} stamped later"):
        fly_with(lambda port: ScriptedPx4(port, boots_then(ROW[:4], silent=2), stamp=stamp), tmp_path,
                 answer_timeout=0.3)
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-wrong-stamps" and "still running" not in info["error"]
    stats = info["controller_stats"]
    # The wrong answer of the last wait is counted (the error's own counts, matched above, are exact).
    # Stale answers also include those the peer thread still had in flight when the boot ended,
    # as in any run: 1 to 4 of them on a loaded 2-core machine, so only the lower bound is the script's.
    assert stats["future_answers"] == future and stats["stale_answers"] >= past
    assert info["ticks"] == 99


def test_a_silent_px4_in_lockstep_is_told_apart_from_wrong_stamps(tmp_path):
    script = lambda n: None if n <= 2 or n >= 100 else ROW  # noqa: E731
    with pytest.raises(Exception, match="PX4 sent no HIL_ACTUATOR_CONTROLS within 0.3 s") as caught:
        fly_with(lambda port: ScriptedPx4(port, script), tmp_path, answer_timeout=0.3)
    assert type(caught.value).__name__ == "AnswerTimeoutError"
    assert run_info(tmp_path)["exit_reason"] == "px4-timeout"


#: Fake frame starts sent just before every answer: a MAVLink 2 header with
FAKES = {
    # a length longer than HIL_ACTUATOR_CONTROLS (id 93) can be: rejected from its header alone;
    "too-long": bytes([0xFD, 0xFF, 0, 0, 0, 1, 1, 93, 0, 0]) + b"noise",
    # a plausible length (81): the candidate takes the answer's bytes as its payload, fails its CRC;
    "bad-crc": bytes([0xFD, 81, 0, 0, 0, 1, 1, 93, 0, 0]) + b"noise",
    # FILE_TRANSFER_PROTOCOL (id 110) at full length (254): more bytes than will come before the
    # sim sends its next message, so the candidate waits, with the valid answer inside it.
    "cut": bytes([0xFD, 254, 0, 0, 0, 1, 1, 110, 0, 0]),
}


@pytest.mark.parametrize("fake", FAKES, ids=list(FAKES))
def test_a_fake_frame_start_before_each_answer_does_not_swallow_it(tmp_path, fake):
    summary, px4, _ = fly_with(
        lambda port: ScriptedPx4(port, boots_then(ROW[:4], silent=2), noise=lambda n: FAKES[fake]), tmp_path,
        seconds=0.2, answer_timeout=1.0)
    assert summary.exit_reason == "duration" and summary.ticks == 50
    stats = px4.stats()
    # Every message from the 3rd on got its answer (the first may land a tick late, as stale),
    # and each fake was one stretch of skipped bytes.
    assert stats["answers"] + stats["stale_answers"] == 48 and stats["malformed_messages"] == 48
