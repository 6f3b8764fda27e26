"""Ending a run from a stage, start-up runs of chosen kinds, and capture failures."""

import pytest
import warp as wp

from nexus.core import CaptureError, Loop, Read, RunError, Stage
from tests.core.toy_parts import Part, Recorder, finish_at, host_stage, source


@pytest.mark.parametrize("mode", ["eager", "captured"])
def test_host_stage_ends_run_after_its_tick_completes(mode):
    ticks = {"n": 0}

    def mission(io):
        ticks["n"] += 1
        if ticks["n"] == 5:
            io.finish()

    recorder = Recorder(20)
    loop = Loop([source("/vehicle/s", "noise", 1.0), host_stage("mission", kind="guide", run=mission), recorder], device="cpu", mode=mode)
    result = loop.run(20)
    assert result.reason == "done" and result.ticks == 5
    # The record stage, after the guidance in the ring, still ran on the finishing tick.
    assert recorder.times.numpy()[4] == pytest.approx(0.020) and recorder.times.numpy()[5] == 0.0
    assert result.sim_time == pytest.approx(0.020)


@pytest.mark.parametrize("mode", ["eager", "captured"])
def test_device_stage_ends_run_through_done_flag(mode):
    def run(io):
        wp.launch(finish_at, 1, inputs=[io["tick"], wp.int64(7)], outputs=[io.done], device=io.device)

    stopper = Part("/vehicle/stopper", Stage("stopper", "guide", run, reads=(Read("tick", wp.int64, (1,)),), finishes=True))
    result = Loop([stopper], device="cpu", mode=mode).run(100)
    assert (result.reason, result.ticks) == ("done", 7)


def test_done_inside_a_replay_leaves_the_state_of_the_tick_that_ended_the_run():
    # 4 ticks per replay, done on tick 7: the second replay runs ticks 5 to 8, and its last tick must
    # change nothing reported: the clock stays at tick 7 (0.028 s) and the record holds no row for tick 8.
    def run(io):
        wp.launch(finish_at, 1, inputs=[io["tick"], wp.int64(7)], outputs=[io.done], device=io.device)

    stopper = Part("/vehicle/stopper", Stage("stopper", "guide", run, reads=(Read("tick", wp.int64, (1,)),), finishes=True))
    recorder = Recorder(20)
    loop = Loop([source("/vehicle/s", "noise", 1.0), stopper, recorder], device="cpu", ticks_per_replay=4)
    result = loop.run(100)
    assert (result.reason, result.ticks) == ("done", 7)
    assert result.sim_time == pytest.approx(0.028)
    assert int(loop.output("tick").numpy()[0]) == 7 and loop.output("time").numpy()[0] == pytest.approx(0.028)
    assert recorder.times.numpy()[6] == pytest.approx(0.028) and recorder.times.numpy()[7] == 0.0
    assert int(loop.output("running").numpy()[0]) == 0


@pytest.mark.parametrize("ticks", [5, 16, 37])
def test_a_run_stops_exactly_at_its_tick_budget(ticks):
    # 16 ticks per replay, then one at a time: never a tick past the budget.
    recorder = Recorder(64)
    loop = Loop([source("/vehicle/s", "noise", 1.0), recorder], device="cpu")
    result = loop.run(ticks)
    assert (result.ticks, result.reason) == (ticks, "ticks") and result.sim_time == pytest.approx(ticks * 0.004)
    times = recorder.times.numpy()
    assert times[ticks - 1] == pytest.approx(ticks * 0.004) and times[ticks] == 0.0


def test_run_without_finish_uses_all_ticks():
    result = Loop([source("/vehicle/s", "noise", 1.0)], device="cpu").run(3)
    assert (result.reason, result.ticks) == ("ticks", 3)


def test_run_kinds_runs_only_those_stages_once():
    calls = []
    comps = [host_stage(n, kind=k, run=lambda io, n=n: calls.append(n)) for n, k in (("est", "estimate"), ("guide", "guide"), ("pid", "control"))]
    loop = Loop(comps, device="cpu")
    loop.run_kinds(["guide", "estimate"])
    assert calls == ["est", "guide"]


def test_capture_failure_names_the_stage():
    def reads_back(io):
        raise RuntimeError("cannot synchronize inside a graph")

    bad = Part("/vehicle/bad", Stage("peek", "sensor", reads_back))
    with pytest.raises(CaptureError) as error:
        Loop([bad], device="cpu", mode="captured").build()
    text = str(error.value)
    assert "'peek'" in text and "'/vehicle/bad'" in text and "--eager" in text


def test_host_stage_failure_names_the_stage():
    def boom(io):
        raise ValueError("link dropped")

    loop = Loop([host_stage("exchange", run=boom)], device="cpu")
    with pytest.raises(RunError, match="'exchange'.*link dropped"):
        loop.run(1)
