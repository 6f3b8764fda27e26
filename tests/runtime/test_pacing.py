"""``--realtime FACTOR``: the flight held to the wall clock between replays, and not a bit of it changed.

The pacer's arithmetic is checked on a clock the test moves by hand (every wait and every late replay
worked out below); the flights are real: a paced and an unpaced flight of the short mission record the
same bits, a machine asked for the impossible says so once, bad factors are refused in one line before
anything is written, and SIGINT and SIGTERM stop a paced run in the middle of a long wait.
"""

from __future__ import annotations

import json
import logging
import math
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.core.errors import BuildError
from nexus.runtime.pacing import Pacer, check_factor, paced_ticks_per_replay

ROOT = Path(__file__).resolve().parents[2]
TICK_NS = 4_000_000  # 250 Hz


class HandClock:
    """A wall clock that moves only when the test (or a sleep) moves it."""

    def __init__(self, now: float = 100.0):
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def pacer(factor: float, clock: HandClock, excused=None) -> Pacer:
    made = Pacer(factor, TICK_NS, clock=clock, sleep=clock.sleep, excused=excused)
    made.start()
    return made


# -- the arithmetic ------------------------------------------------------------------------------------------


def test_each_replay_waits_until_its_last_tick_is_due():
    clock = HandClock()
    paced = pacer(2.0, clock)
    paced.advanced(8)  # 8 ticks of 4 ms at 2x: due 16 ms after the start; flown in no time, so wait 16 ms
    clock.now += 0.005  # the next 8 ticks take 5 ms of wall time: 11 ms left of their 16
    paced.advanced(8)
    assert clock.sleeps == pytest.approx([0.016, 0.011], abs=1e-12)
    assert clock.now == pytest.approx(100.032, abs=1e-12)  # 16 ticks = 64 ms of sim = 32 ms of wall at 2x
    assert paced.stats()["slept_s"] == pytest.approx(0.027, abs=1e-9)
    assert paced.stats()["kept_up"] is True


def test_a_late_replay_flies_on_at_once_and_its_debt_is_dropped():
    clock = HandClock()
    paced = pacer(2.0, clock)
    paced.advanced(8)  # waits 16 ms: now 100.016
    clock.now += 0.5  # one stall of half a second
    paced.advanced(8)  # due at 100.032, now 100.516: 0.484 s late, more than the 0.1 s slack: no wait
    assert clock.sleeps == pytest.approx([0.016], abs=1e-12)
    assert paced.behind_s == pytest.approx(0.484, abs=1e-12)
    paced.advanced(8)  # counted afresh from 100.516: the next replay waits its own 16 ms, no race to catch up
    assert clock.sleeps == pytest.approx([0.016, 0.016], abs=1e-12)
    assert paced.warned is False  # one stall of 0.5 s, then keeping up: not a slow machine
    assert paced.kept_up is False and paced.stats()["slowest_factor"] is None
    # 24 ticks (96 ms of sim) in the 0.532 s from the start to the last replay's end.
    assert paced.stats()["overall_factor"] == pytest.approx(0.096 / 0.532, abs=1e-3)
    assert paced.summary() == "paced at 2x real time: fell behind by 0.48 s in all (0.18x over the flight); slept 0.03 s"


def test_a_machine_that_cannot_keep_up_says_so_once_with_the_speed_it_reached(caplog):
    clock = HandClock()
    paced = pacer(2.0, clock)
    # Asked for 2x; each replay of 8 ticks (32 ms of sim) takes 32 ms of wall: 1x. Each replay ends 16 ms later
    # than due, so the 7th is 112 ms late (> 0.1 s) and the count starts afresh; never a wait, so the stretch
    # without one reaches 1 s at the 35th replay (35 x 32 ms = 1.12 s): 1.12 s of sim in 1.12 s of wall.
    for _ in range(100):
        clock.now += 0.032
        paced.advanced(8)
    said = [r.getMessage() for r in caplog.records if "cannot keep up" in r.getMessage()]
    assert said == ["--realtime 2: this machine cannot keep up: it flew 1.12 s of sim time in 1.12 s of wall time "
                    "(1.00x real time, 50 % short of 2x); flying as fast as it can"]
    assert clock.sleeps == []
    assert paced.stats()["kept_up"] is False and paced.stats()["slowest_factor"] == pytest.approx(1.0)
    assert paced.restarts == 14  # every 7th replay of 100


def test_time_spent_waiting_for_a_peer_is_not_falling_behind(caplog):
    clock = HandClock()
    waited = [0.0]
    paced = pacer(1.0, clock, excused=lambda: waited[0])
    clock.now += 3.0  # PX4 takes 3 s to connect, inside the first tick
    waited[0] = 3.0
    paced.advanced(1)
    clock.now += 3.0  # and 3 s of boot on the second
    waited[0] = 6.0
    paced.advanced(1)
    assert clock.sleeps == [] and paced.behind_s == 0.0 and not paced.warned
    paced.advanced(1)  # then paced from there: one tick is 4 ms at 1x
    assert clock.sleeps == pytest.approx([0.004], abs=1e-12)
    assert not any("cannot keep up" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("factor, tick_ns, ticks", [
    (1.0, TICK_NS, 4),      # 4 x 4 ms = 16 ms of sim, 16 ms of wall <= 1/60 s; 8 would be 32 ms
    (2.0, TICK_NS, 8),      # 8 x 4 ms = 32 ms of sim, 16 ms of wall
    (4.0, TICK_NS, 16),     # 16 x 4 ms = 64 ms of sim, 16 ms of wall
    (50.0, TICK_NS, 16),    # never more than the loop's 16
    (0.5, TICK_NS, 2),      # 2 x 4 ms at half speed: 16 ms of wall
    (0.1, TICK_NS, 1),      # one tick is already 40 ms of wall
    (1.0, 2_000_000, 8),    # 500 Hz: 8 x 2 ms = 16 ms
])
def test_a_paced_replay_lasts_at_most_a_sixtieth_of_a_second_of_wall_time(factor, tick_ns, ticks):
    assert paced_ticks_per_replay(factor, tick_ns, 16) == ticks


@pytest.mark.parametrize("bad, shown", [(0, "0"), (-1, "-1"), (-0.5, "-0.5"), (math.nan, "nan"), (math.inf, "inf")])
def test_a_factor_that_is_not_above_zero_is_refused_naming_the_option_and_the_fix(bad, shown):
    with pytest.raises(BuildError) as raised:
        check_factor(bad)
    assert str(raised.value).startswith(f"--realtime {shown}: give a factor above 0, the speed against the wall "
                                        "clock (1: real time, 2: twice as fast, 0.5: half speed)")
    assert "\n" not in str(raised.value)


def test_a_factor_that_is_not_a_number_is_refused():
    for bad in ("2", True, None):
        with pytest.raises(BuildError, match=r"^--realtime .*: give a number"):
            check_factor(bad)


# -- real flights ---------------------------------------------------------------------------------------------


def _columns(out: Path) -> dict[str, bytes]:
    table = pq.read_table(out / "record.parquet")
    return {name: table.column(name).to_numpy().tobytes() for name in table.column_names}


@pytest.fixture(scope="module")
def paced_and_unpaced(tmp_path_factory):
    """The short mission's first 2 s (500 ticks), flown at 2x real time and as fast as it goes."""
    from nexus.runtime.config import RunConfig
    from nexus.runtime.run import run_flight

    root = tmp_path_factory.mktemp("pacing")
    flown = {}
    for name, factor in (("paced", 2.0), ("unpaced", None)):
        run_flight(RunConfig(mission="short", device="cpu", duration=2.0, realtime=factor), root / name,
                   progress=False)
        flown[name] = (root / name, json.loads((root / name / "run.json").read_text()))
    return flown


def test_a_paced_flight_records_the_same_bits_as_an_unpaced_one(paced_and_unpaced):
    (paced, paced_info), (unpaced, unpaced_info) = paced_and_unpaced["paced"], paced_and_unpaced["unpaced"]
    # Paced at 2x the loop replays 8 ticks at a time, unpaced 16: the moments between replays differ, no bit does.
    assert paced_info["stage_plan"].endswith(" x8") and unpaced_info["stage_plan"].endswith(" x16")
    assert paced_info["ticks"] == unpaced_info["ticks"] == 500
    one, other = _columns(paced), _columns(unpaced)
    assert list(one) == list(other) and len(one) > 50
    assert [name for name in one if one[name] != other[name]] == []


def test_a_paced_flight_takes_at_least_its_sim_time_over_the_factor(paced_and_unpaced):
    _, info = paced_and_unpaced["paced"]
    assert info["options"]["realtime"] == 2.0
    assert "realtime" not in paced_and_unpaced["unpaced"][1]["options"]  # an unpaced run.json reads as before
    # 2 s of sim at 2x: at least 1 s of wall (the pacer never runs a replay early; a slow machine only adds).
    assert info["wall_time_s"] >= 1.0
    assert info["pacing"]["factor"] == 2.0 and info["pacing"]["ticks"] == 500
    assert info["pacing"]["slept_s"] > 0.0


def test_a_paced_run_replays_identically_and_unpaced(paced_and_unpaced, tmp_path):
    from nexus.runtime.replay import replay

    result = replay(paced_and_unpaced["paced"][0], keep=tmp_path / "again")
    assert result.identical and result.ticks == 500
    again = json.loads((tmp_path / "again" / "run.json").read_text())
    assert "realtime" not in again["options"] and "pacing" not in again


def test_a_machine_asked_for_the_impossible_says_so_once_and_flies_flat_out(tmp_path):
    from nexus.runtime.config import RunConfig
    from nexus.runtime.run import run_flight

    # 200 s of the hold controller at 10,000x real time (it would need 20 ms): no machine keeps up.
    summary = run_flight(RunConfig(controller="hold", device="cpu", duration=200.0, realtime=10000.0),
                         tmp_path / "fast", progress=False)
    info = json.loads((tmp_path / "fast" / "run.json").read_text())
    said = [w for w in info["warnings"] if "cannot keep up" in w]
    assert len(said) == 1, info["warnings"]
    assert said[0].startswith("--realtime 10000: this machine cannot keep up: it flew ")
    assert said[0].endswith("short of 10000x); flying as fast as it can")
    assert info["pacing"]["kept_up"] is False and info["pacing"]["slept_s"] == 0.0
    assert info["pacing"]["slowest_factor"] < 10000.0
    assert summary.paced.startswith("paced at 10000x real time: fell behind by ")


@pytest.mark.parametrize("option", ["--realtime 0", "--realtime -1", "--realtime=-2", "--realtime -inf"])
def test_bad_realtime_on_the_command_line_is_one_line_before_anything_is_written(tmp_path, option):
    from nexus.cli import main

    out = tmp_path / "never"
    result = CliRunner().invoke(main, ["run", *option.split(), "--device", "cpu", "--out", str(out)])
    assert result.exit_code == 2, result.output
    shown = option.replace("=", " ").split()[1]
    assert result.output.strip().splitlines() == [
        f"error: --realtime {shown}: give a factor above 0, the speed against the wall clock (1: real time, "
        "2: twice as fast, 0.5: half speed); leave --realtime out to fly as fast as the machine can"]
    assert not out.exists()


def test_realtime_alone_flies_at_real_time(tmp_path):
    from nexus.cli import main

    out = tmp_path / "alone"
    began = time.monotonic()
    result = CliRunner().invoke(main, ["run", "--mission", "short", "--duration", "0.5", "--device", "cpu",
                                       "--quiet", "--realtime", "--out", str(out)])
    assert result.exit_code == 0, result.output
    info = json.loads((out / "run.json").read_text())
    assert info["options"]["realtime"] == 1.0 and info["stage_plan"].endswith(" x4")
    assert info["wall_time_s"] >= 0.5 and time.monotonic() - began >= 0.5
    assert "paced at 1x real time: " in result.output


@pytest.mark.parametrize("number, status, reason", [(signal.SIGINT, 130, "interrupted"),
                                                    (signal.SIGTERM, 143, "terminated")])
def test_a_signal_stops_a_paced_run_in_the_middle_of_its_wait(tmp_path, number, status, reason):
    # At 0.001x real time one tick (4 ms) lasts 4 s of wall time: the run is asleep nearly all the time.
    out = tmp_path / "slow"
    child = subprocess.Popen([sys.executable, "-m", "nexus.cli", "run", "--controller", "hold", "--duration", "60",
                              "--device", "cpu", "--quiet", "--realtime", "0.001", "--out", str(out)],
                             cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []  # (when it came, the line): the run says it stopped before Python exits
    reader = threading.Thread(target=lambda: lines.extend((time.monotonic(), line) for line in child.stderr))
    reader.start()
    try:
        deadline = time.monotonic() + 300.0
        while True:  # the first drain comes after the second tick, 4 s in: then a 4 s wait begins
            try:
                if json.loads((out / "run.json").read_text()).get("record_rows", 0) > 0:
                    break
            except (OSError, ValueError):
                pass
            assert child.poll() is None, "".join(line for _, line in lines)[-2000:]
            assert time.monotonic() < deadline, "the run never drained"
            time.sleep(0.05)
        time.sleep(0.5)  # well inside the wait
        sent = time.monotonic()
        child.send_signal(number)
        child.wait(timeout=120)
        reader.join(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
    said = "".join(line for _, line in lines)
    assert child.returncode == status, said[-2000:]
    stopped = [when for when, line in lines if line.startswith(f"{reason} after")]
    assert len(stopped) == 1, said[-2000:]
    # An uninterruptible wait would end 3.5 s after the signal at the earliest; the run stops in its middle,
    # writes its files and says so (the interpreter's own exit afterwards is not the run's).
    assert stopped[0] - sent < 2.5, (stopped[0] - sent, said[-2000:])
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == reason and info["exit_reason"] == reason
    assert info["ticks"] >= 2 and info["pacing"]["factor"] == 0.001


def test_the_policy_controller_is_paced_by_the_same_pacer_and_flies_the_same_bits(tmp_path):
    from nexus.runtime.config import RunConfig
    from nexus.runtime.run import run_flight

    flown = {}
    for name, factor in (("paced", 0.5), ("unpaced", None)):
        run_flight(RunConfig(controller="policy", mission="short", device="cpu", duration=1.0, realtime=factor),
                   tmp_path / name, progress=False)
        flown[name] = json.loads((tmp_path / name / "run.json").read_text())
    paced, unpaced = flown["paced"], flown["unpaced"]
    assert "host(policy)" in paced["stage_plan"]  # a host stage every tick: paced tick by tick
    assert paced["ticks"] == unpaced["ticks"] == 250
    # 1 s of sim at half speed: at least 2 s of wall time.
    assert paced["wall_time_s"] >= 2.0 and paced["pacing"]["ticks"] == 250
    one, other = _columns(tmp_path / "paced"), _columns(tmp_path / "unpaced")
    assert list(one) == list(other) and [name for name in one if one[name] != other[name]] == []


@pytest.mark.parametrize("paced, budget", [(True, 0.5), (False, 0.03)])
def test_a_paced_runs_live_view_may_draw_in_the_time_the_pacer_sleeps(tmp_path, monkeypatch, paced, budget):
    # Unpaced, the view takes at most 3 % of the run's wall time (6 Hz when a frame costs 5 ms); a paced run sleeps
    # most of its time, so its view may take half and draws at up to 30 Hz: the flight as it happens.
    import nexus.viz.live as live
    from nexus.cli import main

    made = []

    class Recorded(live.LiveView):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self.budget)

    monkeypatch.setattr(live, "LiveView", Recorded)
    result = CliRunner().invoke(main, ["run", "--mission", "short", "--duration", "0.3", "--device", "cpu", "--quiet",
                                       "--view", "--view-port", "0", "--out", str(tmp_path / "view"),
                                       *(["--realtime"] if paced else [])])
    assert result.exit_code == 0, result.output
    assert made == [budget]
