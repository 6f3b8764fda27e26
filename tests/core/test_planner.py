"""The planner cuts the ring at host stages; the plan's text form is what the run logs."""

from nexus.core import Loop, Stage, Write, plan_segments
from tests.core.toy_parts import Part, Recorder, host_stage, source


def device_stage(name, kind):
    return Part(f"/vehicle/{name}", Stage(name, kind, lambda io: None))


def test_ring_without_host_stage_is_one_graph_of_16_ticks(caplog):
    loop = Loop([source("/vehicle/imu", "noise", 1.0), Recorder(4)], device="cpu").build()
    # One graph, so the loop replays 16 ticks per launch (its default) and the plan says so.
    assert loop.plan.text() == "stage plan: graph(clock -> imu -> record) x16"
    assert len(loop.plan.segments) == 1 and loop.ticks_per_replay == 16
    assert "stage plan: graph(clock -> imu -> record) x16" in caplog.text


def test_eager_and_host_rings_run_one_tick_per_replay():
    eager = Loop([source("/vehicle/imu", "noise", 1.0)], device="cpu", mode="eager").build()
    assert eager.plan.text() == "stage plan: graph(clock -> imu)" and eager.ticks_per_replay == 1
    hosted = Loop([source("/vehicle/imu", "noise", 1.0), host_stage("mpc", kind="control")], device="cpu").build()
    assert hosted.plan.text() == "stage plan: graph(clock -> imu) host(mpc)" and hosted.ticks_per_replay == 1


def test_a_component_bounds_the_ticks_per_replay():
    bounded = source("/vehicle/imu", "noise", 1.0)
    bounded.max_ticks_per_replay = 5  # as a record table of 5 rows would
    loop = Loop([bounded], device="cpu").build()
    assert loop.ticks_per_replay == 5 and loop.plan.text().endswith(" x5")
    assert Loop([source("/vehicle/imu", "noise", 1.0)], device="cpu", ticks_per_replay=3).build().ticks_per_replay == 3


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
    assert loop.plan.text() == "stage plan: graph(clock -> esc3 -> esc1 -> esc2) x16"


def test_plan_of_only_host_stages():
    plan = plan_segments([Stage("a", "guide", lambda io: None, host=True)])
    assert plan.text() == "stage plan: host(a)"
