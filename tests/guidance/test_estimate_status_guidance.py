"""The mission guidance flies on what the estimator says of its estimate: the default vehicle, the real engine.

An EKF is not needed to drive the guidance: ``StatusSchedule``, a component defined only in this file, writes
``estimate_status`` and ``estimate_reset`` from a timetable (a device stage of kind ``estimate``, so the
mission reads it on the same tick), and ``RaisedEstimate`` is the truth estimator with its height raised by a
fixed amount from a given time on (an estimated height that sits off the ground). The vehicle is the default
Astro Max with the PID, flying the short mission (``MissionProfile.short()``):

takeoff 2.0 m in 1.6 s, hold 1.0 s, yaw legs 3.9 s, return 0.2 s (min time), then land at 1.0 m/s, resting
0.3 s on the ground before disarming; 0.004 s ticks, landing checks every 0.04 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.core import Component, Loop
from nexus.core.spec import Input, Output, Spec
from nexus.estimation.pose_twist import PoseTwist
from nexus.estimation.truth import TruthEstimator
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.guidance.host_mission import HostMissionGuidance
from nexus.guidance.steps import StepMission
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start

#: Status bits, written out (nexus.estimation.estimate_status): tilt 1, yaw 2, horizontal 64, vertical 128,
#: origin 256.
ALIGNED_NO_ORIGIN = 1 | 2 | 64 | 128
TRUSTED = 1 | 2 | 256 | 64 | 128
NO_HORIZONTAL = 1 | 2 | 256 | 128
#: PHASES indices (takeoff 0 ... landed 5, then the three new ones).
TAKEOFF, HOLD, LAND, LANDED, ALIGN, POSITION_HOLD, POSITION_LAND = 0, 1, 4, 5, 6, 7, 8
TICK = 0.004


@wp.kernel
def write_schedule(time: wp.array(dtype=wp.float64), starts: wp.array(dtype=wp.float64),
                   flags: wp.array(dtype=wp.int32), resets: wp.array(dtype=wp.vec3),
                   status: wp.array(dtype=wp.int32), reset: wp.array(dtype=wp.vec3)):
    world = wp.tid()
    k = int(0)
    for i in range(starts.shape[0]):
        if time[world] >= starts[i]:
            k = i
    status[world] = flags[k]
    reset[world] = resets[k]


STATUS_SCHEDULE_SPEC = Spec(
    name="StatusSchedule",
    noun="status schedule",
    doc="Writes the estimate's status and reset sum from a timetable, in place of an estimator's.",
    inputs=(Input("time", wp.float64),),
    outputs=(Output("estimate_status", wp.int32, recorded=True), Output("estimate_reset", wp.vec3, recorded=True)),
    stage="status_schedule",
    kind="estimate",
)


class StatusSchedule(Component):
    """From each (time [s], status bits, reset [m, NED]) row's time on, writes its status and reset."""

    spec = STATUS_SCHEDULE_SPEC

    def __init__(self, rows, name: str = "/test/status"):
        super().__init__(name)
        self.rows = rows

    def prepare(self, ctx) -> None:
        self.worlds = ctx.worlds
        self.starts = wp.array([r[0] for r in self.rows], dtype=wp.float64, device=ctx.device)
        self.flags = wp.array([r[1] for r in self.rows], dtype=wp.int32, device=ctx.device)
        self.resets = wp.array([wp.vec3(*r[2]) for r in self.rows], dtype=wp.vec3, device=ctx.device)

    def run(self, io) -> None:
        wp.launch(write_schedule, self.worlds, inputs=[io["time"], self.starts, self.flags, self.resets],
                  outputs=[io["estimate_status"], io["estimate_reset"]], device=io.device)


@wp.kernel
def raise_estimate(time: wp.array(dtype=wp.float64), since: float, by: float, estimate: wp.array(dtype=PoseTwist)):
    world = wp.tid()
    if time[world] >= wp.float64(since):
        e = estimate[world]
        e.position = wp.vec3(e.position[0], e.position[1], e.position[2] - by)
        estimate[world] = e


class RaisedEstimate(TruthEstimator):
    """The truth estimator, its height raised by ``by`` [m] (NED z less ``by``) from sim time ``since`` [s] on."""

    def __init__(self, truth: TruthEstimator, since: float, by: float):
        super().__init__(truth.name, truth.ned_origin, body=truth.body, rate=truth.rate)
        self.since, self.by = float(since), float(by)

    def run(self, io) -> None:
        super().run(io)
        wp.launch(raise_estimate, self.worlds, inputs=[io["time"], self.since, self.by], outputs=[io["estimate"]],
                  device=io.device)


@dataclass
class Flight:
    time: np.ndarray  # [s]
    phase: np.ndarray  # PHASES index
    armed: np.ndarray
    goal: np.ndarray  # setpoint position [m, NED]
    estimate: np.ndarray  # [m, NED]
    height: np.ndarray  # true height of the base above where it rested [m]
    north_east: np.ndarray  # true horizontal position from where it rested [m] (north, east)
    controls: np.ndarray  # first four
    reason: str
    guidance: MissionGuidance

    def at(self, time: float) -> int:
        """Row of the tick at sim time ``time``."""
        return int(np.flatnonzero(np.isclose(self.time, time, atol=1e-9))[0])


def fly(rows, seconds: float, profile: MissionProfile | None = None, raised: tuple[float, float] | None = None,
        guidance_class=MissionGuidance) -> Flight:
    """The default vehicle on the short mission (or ``profile``) with ``rows`` as the estimator's status."""
    # The guidance's own behaviour on the true state; the test component plays the estimator's status.
    vehicle = assemble("astro_max_base", "empty", mission="short", estimator="truth")
    components = []
    for c in vehicle.components:
        if isinstance(c, MissionGuidance):
            c = guidance_class(c.name, profile or MissionProfile.short())
            guidance = c
        elif isinstance(c, TruthEstimator) and raised is not None:
            c = RaisedEstimate(c, *raised)
        components.append(c)
    loop = Loop([*components, StatusSchedule(rows)], device="cpu").build()
    start(loop, vehicle.plant)
    names = ("estimate", "setpoint", "armed", "mission_phase", "controls", "body/base")
    outputs = {name: loop.output(name) for name in names}
    rest = outputs["body/base"].numpy()[0]["pose"][:3].copy()  # world ENU [m]
    rows_out, reason = [], "ticks"
    for _ in range(int(round(seconds / TICK))):
        done = loop.tick()
        values = {name: outputs[name].numpy()[0] for name in names}
        pose = values["body/base"]["pose"]
        rows_out.append((loop.sim_time, int(values["mission_phase"]), int(values["armed"]),
                         values["setpoint"]["position"].copy(), values["estimate"]["position"].copy(),
                         float(pose[2] - rest[2]), np.array([pose[1] - rest[1], pose[0] - rest[0]]),
                         values["controls"][:4].copy()))
        if done:
            reason = "done"
            break
    loop.close()
    c = [np.array(x) for x in zip(*rows_out)]
    return Flight(*c, reason=reason, guidance=guidance)


# -- alignment gate, and a reset, in one flight -------------------------------------------------------------
#: Aligned with no origin until 1.0 s, then ready; a reset of 3 m north from 3.0 s (during the hold: 2.6-3.6 s).
GATE_S, RESET_S = 1.0, 3.0


@pytest.fixture(scope="module")
def gated():
    return fly([(0.0, ALIGNED_NO_ORIGIN, (0, 0, 0)), (GATE_S, TRUSTED, (0, 0, 0)), (RESET_S, TRUSTED, (3, 0, 0))],
               3.4)


def test_the_start_waits_disarmed_on_the_ground_until_the_estimate_is_ready(gated):
    before = gated.time < GATE_S - 1e-9
    assert before.sum() == 249  # ticks at 0.004 ... 0.996 s
    assert (gated.phase[before] == ALIGN).all() and (gated.armed[before] == 0).all()
    np.testing.assert_array_equal(gated.controls[before], 0.0)  # PID outputs zeros while disarmed
    assert np.abs(gated.height[before]).max() < 0.005  # never leaves the ground
    first = gated.at(GATE_S)
    assert gated.phase[first] == TAKEOFF and gated.armed[first] == 1


def test_the_plan_runs_later_by_the_wait(gated):
    # The short mission's takeoff (1.6 s) now starts at 1.0 s, so the hold begins at 2.6 s, not 1.6 s.
    times = dict((phase, time) for time, phase in gated.guidance.transitions)
    assert times["align"] == pytest.approx(0.0, abs=1e-9)
    assert times["takeoff"] == pytest.approx(1.0, abs=1e-9)
    assert times["hold"] == pytest.approx(2.6, abs=1e-9)
    plan = gated.guidance.plan  # planned from the first estimate, to start at 0 s
    for time in (1.0, 1.4, 1.8, 2.2):
        _, goal, _ = plan.at(time - GATE_S)
        # The height the plan is flown from is the estimate's at 1.0 s: the resting vehicle's, within 1 mm.
        np.testing.assert_allclose(gated.goal[gated.at(time)], goal, atol=1e-3)
    assert gated.height[gated.at(2.6)] > 1.7  # and it has climbed by the hold


def test_a_reset_shifts_the_position_goal_by_exactly_the_reset(gated):
    plan = gated.guidance.plan
    for time in (2.996, 3.0, 3.2):
        _, goal, _ = plan.at(time - GATE_S)
        shift = 3.0 if time >= RESET_S else 0.0
        got = gated.goal[gated.at(time)]
        # The kernel adds the reset to the plan's float64 goal and rounds once; the hold's goal is the top of the
        # climb, so only the north changes, by 3 m.
        assert got[0] == np.float32(goal[0] + shift + 0.0) or (shift == 0.0 and got[0] == np.float32(goal[0]))
    before, after = gated.goal[gated.at(2.996)], gated.goal[gated.at(3.0)]
    assert after[0] - before[0] == pytest.approx(3.0, abs=1e-6)
    assert after[1] == before[1] and after[2] == before[2]


# -- the horizontal position lost at the hover ----------------------------------------------------------------
#: Lost at 2.0 s (the hold: 1.6-2.6 s, at 2.0 m); hold 2.0 s (shorter than the 5 s default, for the test's time).
LOST_S, LOSS_HOLD_S = 2.0, 2.0


@pytest.fixture(scope="module")
def lost():
    return fly([(0.0, TRUSTED, (0, 0, 0)), (LOST_S, NO_HORIZONTAL, (0, 0, 0))], 9.0,
               profile=MissionProfile.short().with_(position_loss_hold=LOSS_HOLD_S))


def test_a_position_loss_holds_the_height_then_lands_in_place_and_ends_the_run(lost):
    times = dict((phase, time) for time, phase in lost.guidance.transitions)
    assert times["position_hold"] == pytest.approx(LOST_S, abs=1e-9)
    assert times["position_land"] == pytest.approx(LOST_S + LOSS_HOLD_S, abs=1e-9)
    assert "yaw" not in times and "return" not in times and "land" not in times  # the mission never resumes
    holding = (lost.time >= LOST_S) & (lost.time < LOST_S + LOSS_HOLD_S)
    assert (lost.phase[holding] == POSITION_HOLD).all()
    # The height goal held is the top of the climb: 2.0 m above the start. The vehicle holds it within 5 cm.
    assert np.abs(lost.height[holding] - 2.0).max() < 0.05
    # The horizontal goal is the estimate itself (the truth estimator's here), to the bit.
    np.testing.assert_array_equal(lost.goal[holding][:, :2], lost.estimate[holding][:, :2])
    # The descent from 4.0 s: the goal sinks from 2.0 m at the profile's land_speed (1.0 m/s in the short profile),
    # reaching the start height at 6.0 s; the run ends 0.3 s of rest after that at the earliest (6.3 s), and at
    # most 0.5 s later (the vehicle settling, checks every 0.04 s).
    assert lost.reason == "done" and lost.phase[-1] == LANDED and lost.armed[-1] == 0
    assert 6.3 - 1e-9 <= lost.time[-1] <= 6.8
    np.testing.assert_array_equal(lost.controls[-1], 0.0)
    # Landed in place: within 5 cm of where it was when the position was lost, never a fly-away.
    where = lost.north_east[lost.at(LOST_S)]
    assert np.linalg.norm(lost.north_east[lost.time >= LOST_S] - where, axis=1).max() < 0.05
    assert abs(lost.height[-1]) < 0.02


# -- an estimated height that sits off the ground -------------------------------------------------------------
#: From 0.5 s on, the estimate says the vehicle is 0.3 m higher than it is.
RAISE_S, RAISE_M = 0.5, 0.3


@pytest.fixture(scope="module")
def raised():
    return fly([(0.0, TRUSTED, (0, 0, 0))], 10.0, raised=(RAISE_S, RAISE_M))


def test_a_landing_ends_when_the_estimated_height_sits_0_3_m_off_the_ground(raised):
    # The landing starts at 6.7 s from 2.0 m (estimated) at 1.0 m/s: its goal sinks to the start height at 8.7 s.
    # The vehicle is on the ground before that (its estimate reads 0.3 m up there), so resting counts from the first
    # check at or after 8.7 s and the run ends 0.3 s later: 9.0 s to 9.0 + 0.04 s (a check period) + a tick.
    assert raised.reason == "done" and raised.phase[-1] == LANDED and raised.armed[-1] == 0
    assert 9.0 - 1e-9 <= raised.time[-1] <= 9.044 + 1e-9
    assert abs(raised.height[-1]) < 0.02  # truly on the ground
    # ... while the estimate sits 0.3 m above the start, beyond landed_height (0.1 m).
    start_z = raised.guidance.plan.ground_z
    assert raised.estimate[-1][2] - start_z == pytest.approx(-0.3, abs=0.02)


def test_the_host_mission_flies_the_position_loss_to_the_same_bits(lost):
    # The host stage is the same mission in Python: the same goals, arming, phases and last tick, bit for bit.
    host = fly([(0.0, TRUSTED, (0, 0, 0)), (LOST_S, NO_HORIZONTAL, (0, 0, 0))], 9.0,
               profile=MissionProfile.short().with_(position_loss_hold=LOSS_HOLD_S), guidance_class=HostMissionGuidance)
    assert host.reason == "done" and len(host.time) == len(lost.time)
    for name in ("goal", "armed", "phase", "estimate"):
        assert getattr(host, name).tobytes() == getattr(lost, name).tobytes(), name
    assert host.guidance.transitions == lost.guidance.transitions


# -- the scenario steps, on a vehicle that follows its goal (no simulator) ------------------------------------
STEP_TICK = 0.01


class Port:
    def __init__(self, value=None):
        self.value, self.writes = value, []

    def read(self):
        return self.value

    def write(self, value):
        self.value = value
        self.writes.append((round(NOW[0], 6), value))


NOW = [0.0]


class StepIo(dict):
    finished = False

    def finish(self):
        self.finished = True


def fly_steps(steps, seconds: float, status, reset=lambda t: (0.0, 0.0, 0.0), drift_east: float = 0.0):
    """Call the stage every 0.01 s; the estimate is the goal written the tick before (never below the ground).
    Once the position is lost the horizontal goal is the estimate, which asks for no motion: the vehicle stays
    where it was and its estimate drifts east at ``drift_east`` [m/s] (dead reckoning)."""
    mission = StepMission(steps)
    estimate = SimpleNamespace(position=[0.0, 0.0, 0.0], velocity=[0.0, 0.0, 0.0], attitude=[0.0, 0.0, 0.0, 1.0])
    io = StepIo(time=Port(), estimate=Port(estimate), setpoint=Port(), armed=Port(), mission_step=Port(0),
                mission_timeouts=Port(0), mission_phase=Port(-1), estimate_status=Port(), estimate_reset=Port())
    drift = 0.0
    for k in range(int(round(seconds / STEP_TICK)) + 1):
        NOW[0] = k * STEP_TICK
        io["time"].value = NOW[0]
        io["estimate_status"].value = status(NOW[0])
        io["estimate_reset"].value = reset(NOW[0])
        mission.run(io)
        if io.finished:
            break
        goal = io["setpoint"].value
        if mission.lost is None:
            truth = [goal.position[0], goal.position[1]]
        else:  # a horizontal goal on the estimate asks for no motion: the vehicle stays, its estimate drifts
            drift += drift_east * STEP_TICK
        estimate.position = [truth[0], truth[1] + drift, min(goal.position[2], 0.0)]
    return io, mission


HOVER_STEPS = [
    {"do": "takeoff", "to": [0.0, 0.0, 1.0], "keep_xy": True, "speed": 1.0, "tolerance": 0.1},  # 1 m in 1 s
    {"do": "hold", "time": 10.0},
    {"do": "land", "speed": 1.0},
]


def test_steps_wait_for_the_estimate_to_be_ready():
    io, _ = fly_steps(HOVER_STEPS[:1], 2.0, status=lambda t: TRUSTED if t >= 0.5 - 1e-9 else ALIGNED_NO_ORIGIN)
    assert io["armed"].writes == [(0.0, 0), (0.5, 1)]
    assert io["mission_phase"].writes[:2] == [(0.0, ALIGN), (0.5, -1)]
    # The take-off's 1 s curve starts at 0.5 s and ends at 1.5 s, the vehicle then within its tolerance.
    assert io["mission_step"].writes == [(0.5, 0), (1.5, 1)]


def test_steps_losing_the_position_hold_then_descend_in_place_and_end_the_run():
    # Lost at 2.0 s, in the 1 m hover; the estimate then drifts east at 0.1 m/s.
    io, mission = fly_steps(HOVER_STEPS, 12.0, status=lambda t: NO_HORIZONTAL if t >= 2.0 - 1e-9 else TRUSTED,
                            drift_east=0.1)
    # Hold 5 s (2.0-7.0 s), then the goal sinks from 1 m at 0.7 m/s. The estimate (the goal of the tick before)
    # is within 0.1 m of the start height once the goal is, 7.0 + 0.9 / 0.7 = 8.286 s, so from the 8.30 s tick;
    # at rest there 0.5 s: landed at 8.80 s, disarmed, the run over. The steps never resume (the hold step is
    # the last step entered).
    assert io["mission_phase"].writes == [(0.0, -1), (2.0, POSITION_HOLD), (7.0, POSITION_LAND), (8.8, LANDED)]
    assert io["armed"].writes == [(0.0, 1), (8.8, 0)] and io.finished
    assert io["mission_step"].writes == [(0.0, 0), (1.0, 1)]
    # The horizontal goal follows the estimate, so the drift never turns into a goal the vehicle chases back;
    # the height goal held is 1 m up.
    setpoint = io["setpoint"].value
    assert setpoint.position[1] == pytest.approx(0.1 * (8.8 - 2.0), abs=0.011)
    heights = [value.position[2] for t, value in io["setpoint"].writes if 2.0 <= t < 7.0]
    assert max(heights) == min(heights) == pytest.approx(-1.0, abs=1e-6)


def test_steps_shift_the_goal_by_the_reset():
    io, _ = fly_steps(HOVER_STEPS, 3.0, status=lambda t: TRUSTED,
                      reset=lambda t: (3.0, 0.0, 0.0) if t >= 2.0 - 1e-9 else (0.0, 0.0, 0.0))
    before = [v for t, v in io["setpoint"].writes if t < 2.0][-1]
    after = [v for t, v in io["setpoint"].writes if t >= 2.0][0]
    assert after.position[0] - before.position[0] == pytest.approx(3.0, abs=1e-6)
    assert after.position[2] == before.position[2]
