"""The planner cuts the ring at host stages; the plan's text form is what the run logs."""

from nexus.core import Loop, Stage, Write, plan_segments
from tests.core.toy_parts import Part, Recorder, host_stage, source


def device_stage(name, kind):
    return Part(f"/vehicle/{name}", Stage(name, kind, lambda io: None))


def test_ring_without_host_stage_is_one_graph(caplog):
    loop = Loop([source("/vehicle/imu", "noise", 1.0), Recorder(4)], device="cpu").build()
    assert loop.plan.text() == "stage plan: graph(clock -> imu -> record)"
    assert len(loop.plan.segments) == 1
    assert "stage plan: graph(clock -> imu -> record)" in caplog.text


def test_two_host_stages_in_control_slot_put_record_in_its_own_graph():
    components = [
        device_stage("esc", "command"),
        device_stage("step", "step"),
        source("/vehicle/imu", "noise", 1.0),
        host_stage("truth", kind="control"),
        host_stage("exchange", kind="control"),
        Recorder(4),
    ]
    loop = Loop(components, device="cpu").build()
    assert loop.plan.text() == "stage plan: graph(clock -> esc -> step -> imu) host(truth) host(exchange) graph(record)"


def test_single_host_stage_splits_ring_and_record():
    components = [
        Recorder(4),  # declared first, still runs last: ring order beats declaration order
        host_stage("mpc", kind="control", writes=(Write("plan", object),)),
        source("/vehicle/imu", "noise", 1.0),
        device_stage("pid", "control"),
    ]
    loop = Loop(components, device="cpu").build()
    assert loop.plan.text() == "stage plan: graph(clock -> imu) host(mpc) graph(pid) graph(record)"


def test_same_kind_runs_in_declaration_order():
    components = [device_stage(f"esc{i}", "command") for i in (3, 1, 2)]
    loop = Loop(components, device="cpu").build()
    assert loop.plan.text() == "stage plan: graph(clock -> esc3 -> esc1 -> esc2)"


def test_plan_of_only_host_stages():
    plan = plan_segments([Stage("a", "guide", lambda io: None, host=True)])
    assert plan.text() == "stage plan: host(a)"
