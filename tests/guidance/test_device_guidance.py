"""The mission guidance's kernel against the host plan it was built from, its landed rule, and its plan."""

import math
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.core.state import StateStore
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.guidance import MissionGuidance, MissionPlan, MissionProfile
from nexus.guidance.host_mission import HostMissionGuidance


class StageIOStandIn(dict):
    """The buffers and the declared state the mission stage runs on, as the loop would hand them over."""

    def __init__(self, state):
        super().__init__(
            time=wp.zeros(1, dtype=wp.float64, device="cpu"),
            estimate=wp.zeros(1, dtype=PoseTwist, device="cpu"),
            setpoint=wp.zeros(1, dtype=Setpoint, device="cpu"),
            armed=wp.zeros(1, dtype=wp.int32, device="cpu"),
            mission_phase=wp.full(1, -1, dtype=wp.int32, device="cpu"),
            # What the engine binds when no estimator writes them: trusted (aligned, origin set, valid), no reset.
            estimate_status=wp.full(1, 1 | 2 | 256 | 64 | 128, dtype=wp.int32, device="cpu"),
            estimate_reset=wp.zeros(1, dtype=wp.vec3, device="cpu"),
        )
        self.state_in = self.state_out = state
        self.done = wp.zeros(1, dtype=wp.int32, device="cpu")
        self.device = "cpu"

    def place(self, position, yaw=0.0, velocity=(0.0, 0.0, 0.0)):
        e = PoseTwist()
        e.position = wp.vec3(*position)
        e.attitude = wp.quat(0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))  # about NED down
        e.velocity = wp.vec3(*velocity)
        self["estimate"].assign(wp.array([e], dtype=PoseTwist, device="cpu"))

    def at(self, time):
        self["time"].fill_(time)


def prepared(guidance):
    """``guidance`` prepared with its declared state allocated and reset by the engine's store; its io."""
    store = StateStore([guidance], "cpu")
    guidance.prepare(SimpleNamespace(device="cpu", states=store, worlds=1))
    store.reset(None)
    return StageIOStandIn(store.of(guidance))


def guidance_at_rest(profile, position=(0.1, -0.2, 0.05), yaw=2.9):
    guidance = MissionGuidance("/scene/mission", profile)
    io = prepared(guidance)
    io.place(position, yaw)
    stage = guidance.stages()[0]
    stage.start(io)
    return guidance, stage, io


def test_setpoint_has_the_host_plans_bits_at_every_tick():
    # Start heading -2.9 rad: the -45° turn crosses -π, so the wrap's floor modulo is exercised.
    profile = MissionProfile.short()
    guidance, stage, io = guidance_at_rest(profile, yaw=-2.9)
    io.place((0.1, -0.2, -3.0), -2.9)  # high in the air: never lands, so the kernel runs every leg
    plan = guidance.plan  # the host plan the start hook made from the first estimate
    assert plan.start_yaw == pytest.approx(-2.9, abs=1e-6)
    seen = set()
    for k in range(int((plan.land_time + 2.0) / 0.004)):
        now = k * 0.004
        io.at(now)
        stage.run(io)
        phase, goal, yaw = plan.at(now)
        got = io["setpoint"].numpy()[0]
        assert got["position"].tobytes() == goal.astype(np.float32).tobytes(), now
        assert np.float32(got["yaw"]).tobytes() == np.float32(yaw).tobytes(), now
        assert guidance.phase == phase
        seen.add(phase)
    assert seen == {"takeoff", "hold", "yaw", "return", "land"}
    assert int(io["armed"].numpy()[0]) == 1 and int(io.done.numpy()[0]) == 0


def test_lands_after_resting_landed_time_and_sets_the_done_flag():
    profile = MissionProfile.short()  # landed_time 0.3 s, checked every 0.04 s
    guidance, stage, io = guidance_at_rest(profile, position=(0.0, 0.0, 0.0), yaw=0.0)
    land = guidance.plan.land_time
    finished_at = None
    for k in range(400):
        now = land + k * 0.004
        io.at(now)
        # Rest 5 cm above the start (within landed_height 0.1 m), creeping at 0.05 m/s (< 0.1 m/s).
        io.place((0.0, 0.0, -0.05), 0.0, velocity=(0.05, 0.0, 0.0))
        stage.run(io)
        if int(io.done.numpy()[0]):
            finished_at = now
            break
    # The first check is on the landing's first tick, rest then counts from there:
    # done at the first check 0.3 s later or after, checks 0.04 s (10 ticks) apart.
    assert finished_at is not None
    assert land + 0.3 - 1e-9 <= finished_at <= land + 0.3 + 0.04 + 0.004 + 1e-9
    assert int(io["armed"].numpy()[0]) == 0
    assert guidance.phase == "landed"
    assert [p for _, p in guidance.transitions] == ["land", "landed"]
    assert guidance.transitions[-1][0] == pytest.approx(finished_at)


@pytest.mark.parametrize("height, speed", [(0.05, 0.15), (0.15, 0.0), (-0.15, 0.0)])
def test_a_vehicle_moving_or_off_the_ground_never_lands(height, speed):
    # 0.15 m/s is faster than landed_speed (0.1); 0.15 m above or below the start is beyond landed_height (0.1).
    profile = MissionProfile.short()
    guidance, stage, io = guidance_at_rest(profile, position=(0.0, 0.0, 0.0), yaw=0.0)
    for k in range(300):
        io.at(guidance.plan.land_time + k * 0.004)
        io.place((0.0, 0.0, -height), 0.0, velocity=(0.0, 0.0, speed))
        stage.run(io)
    assert int(io.done.numpy()[0]) == 0 and int(io["armed"].numpy()[0]) == 1
    assert guidance.phase == "land"


def test_a_rollout_with_a_fresh_state_out_keeps_each_ticks_state():
    # A differentiable caller binds a new state_out per tick: the kernel reads state_in only and writes all of
    # state_out, carrying what it does not change. First tick at the plan's start: phase -1 -> takeoff (0), entered
    # at the tick's time, the other phases' -1 carried through; the state it read is left as the start hook put it.
    profile = MissionProfile.short()
    guidance, stage, io = guidance_at_rest(profile)
    given = {name: wp.clone(array) for name, array in io.state_in.items()}
    io.state_out = {name: wp.zeros_like(array) for name, array in io.state_in.items()}
    now = guidance.plan.legs[0].start_time
    io.at(now)
    stage.run(io)
    assert io.state_in["mission"].numpy()[0, 0]["phase"] == -1
    assert io.state_in["entered"].numpy().tobytes() == given["entered"].numpy().tobytes()
    out = io.state_out["mission"].numpy()[0, 0]
    assert (out["planned"], out["phase"]) == (1, 0)
    assert io.state_out["entered"].numpy()[0].tolist() == [now] + [-1.0] * 9
    # Before the start hook (not planned) the kernel returns early, but still carries the state through.
    idle = MissionGuidance("/scene/mission", profile)
    idle_io = prepared(idle)
    idle_io.state_out = {name: wp.zeros_like(array) for name, array in idle_io.state_in.items()}
    idle.stages()[0].run(idle_io)
    assert idle_io.state_out["entered"].numpy()[0].tolist() == [-1.0] * 10


def test_without_start_up_the_kernel_writes_nothing():
    guidance = MissionGuidance("/scene/mission", MissionProfile.short())
    io = prepared(guidance)
    io.at(1.0)
    guidance.stages()[0].run(io)
    assert int(io["armed"].numpy()[0]) == 0
    assert io["setpoint"].numpy()[0]["position"].tolist() == [0.0, 0.0, 0.0]
    assert guidance.phase == "start" and guidance.transitions == []


def fly_short(guidance_class, out):
    """The short mission with ``guidance_class`` as its guidance; (plan text, ticks, reason, record table)."""
    import pyarrow.parquet as pq

    from nexus.runtime.assembly import assemble
    from nexus.core import Loop
    from nexus.record.recorder import Recorder
    from nexus.record.writer import RecordWriter
    from nexus.runtime.startup import start

    vehicle = assemble("astro_max_base", "empty", mission="short", estimator="truth")  # the bits truth flights had
    components = [
        guidance_class(c.name, MissionProfile.short()) if isinstance(c, MissionGuidance) else c
        for c in vehicle.components
    ]
    recorder = Recorder.for_components(components, capacity=2500)
    loop = Loop([*components, recorder], device="cpu").build()
    writer = RecordWriter(out, recorder)
    start(loop, vehicle.plant)
    result = loop.run(2500)  # the short mission ends in under 10 s: 2500 ticks, one table
    writer.pending = result.ticks
    writer.close()
    loop.close()
    return loop.plan.text(), result.ticks, result.reason, pq.read_table(out)


def test_host_guidance_still_plans_a_host_stage_and_flies_the_same_bits(tmp_path):
    # The planner still cuts at a host guide stage, and both guidances fly the short mission to the
    # same tick and the same recorded bits: the kernel evaluates the plan in the host's float64 order.
    device = fly_short(MissionGuidance, tmp_path / "device.parquet")
    host = fly_short(HostMissionGuidance, tmp_path / "host.parquet")
    assert "host(" not in device[0]
    assert host[0].endswith("-> truth_estimate) host(mission) graph(pid) graph(record)")
    assert device[2] == host[2] == "done"
    assert device[1] == host[1] and device[1] < 2500
    assert device[3].equals(host[3])


def test_the_start_also_waits_for_a_valid_horizontal_position():
    # Aligned with its origin (1 | 2 | 256) but no valid horizontal position (64): the kernel stays in align
    # (index 6), disarmed, its goal the start; with the bit set at 0.5 s the take-off starts then.
    profile = MissionProfile.short()
    guidance, stage, io = guidance_at_rest(profile, position=(0.0, 0.0, 0.0), yaw=0.0)
    for k in range(200):
        now = k * 0.004
        io.at(now)
        io["estimate_status"].fill_((1 | 2 | 256 | 128) if now < 0.5 else (1 | 2 | 256 | 128 | 64))
        stage.run(io)
        if now < 0.5:
            assert int(io["armed"].numpy()[0]) == 0 and int(io["mission_phase"].numpy()[0]) == 6
            assert io["setpoint"].numpy()[0]["position"].tolist() == [0.0, 0.0, 0.0]
    assert int(io["armed"].numpy()[0]) == 1 and guidance.phase == "takeoff"
    assert guidance.transitions == [(0.0, "align"), (0.5, "takeoff")]
