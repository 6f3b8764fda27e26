"""The PID kernel on hand-made estimates, its state as the engine owns it, and its prim's gains."""

import math

import numpy as np
import pytest
import warp as wp

from nexus.control.allocation import mix_tables, quad_x_allocation
from nexus.control.pid import PID_SPEC, PidController, PidGains, PidParams, PidState, device_params, pid_control
from nexus.core import Component, Stage, Write
from nexus.core.errors import BuildError
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import open_stage
from nexus.schemas.reader import read_prim

HOVER_COMMAND = 0.572


def heading(yaw):
    """A level FRD→NED attitude facing ``yaw`` [rad]."""
    return wp.quat(0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2))


def signals(position=(0, 0, 0), velocity=(0, 0, 0), rates=(0, 0, 0), yaw=0.0, goal=(0, 0, 0), yaw_goal=0.0, armed=1,
            status=451):
    """The kernel's estimate, setpoint, armed and estimator-status buffers (451: aligned, origin, both valid)."""
    estimate = PoseTwist()
    estimate.position, estimate.velocity, estimate.rates = wp.vec3(*position), wp.vec3(*velocity), wp.vec3(*rates)
    estimate.attitude = heading(yaw)
    setpoint = Setpoint()
    setpoint.position, setpoint.yaw = wp.vec3(*goal), yaw_goal
    return [wp.array([estimate], dtype=PoseTwist, device="cpu"), wp.array([setpoint], dtype=Setpoint, device="cpu"),
            wp.array([armed], dtype=wp.int32, device="cpu"), wp.array([status], dtype=wp.int32, device="cpu")]


PARAMS = device_params(PidGains(hover_thrust=HOVER_COMMAND), thrust_model_factor=0.5, gravity=9.80665)
#: PX4's quad-X mix (the allocation of a controller made without a vehicle), never failing.
QUAD_X = mix_tables(quad_x_allocation(), 1, "cpu")


def new_state():
    """One world's PidState, zeros, shaped (worlds, 1) as the engine allocates it."""
    return wp.zeros((1, 1), dtype=PidState, device="cpu")


def step(buffers, state_in, state_out):
    controls = wp.full((1, CONTROLS_WIDTH), 7.0, dtype=wp.float32, device="cpu")
    wp.launch(pid_control, 1, inputs=[*buffers, wp.array([PARAMS], dtype=PidParams, device="cpu"), state_in, 0.004,
                                      QUAD_X, wp.zeros(1, dtype=wp.int64, device="cpu")],
              outputs=[state_out, controls], device="cpu")
    return controls.numpy()[0]


def one_step(**kw):
    state = new_state()
    return step(signals(**kw), state, state)


def test_at_the_goal_every_rotor_gets_the_hover_command():
    controls = one_step()
    np.testing.assert_allclose(controls[:4], HOVER_COMMAND, atol=1e-5)
    np.testing.assert_array_equal(controls[4:], 0.0)


def test_disarmed_writes_zeros():
    controls = one_step(goal=(0, 0, -5), armed=0)
    np.testing.assert_array_equal(controls, np.zeros(CONTROLS_WIDTH, dtype=np.float32))


def test_below_the_goal_every_rotor_speeds_up():
    # Goal 1 m up (NED z −1): the collective rises above hover, equally on all four.
    controls = one_step(goal=(0, 0, -1))
    assert np.all(controls[:4] > HOVER_COMMAND)
    np.testing.assert_allclose(controls[:4], controls[0], atol=1e-6)


def test_heading_left_of_the_goal_speeds_up_the_counter_clockwise_rotors():
    # Facing 0 with a goal of +0.3 rad: turn right (+yaw), so slots 0 and 1 (CCW) rise.
    controls = one_step(yaw_goal=0.3)
    assert controls[0] > controls[2] and controls[1] > controls[3]


def test_goal_to_the_north_pitches_nose_down():
    # Facing north with the goal ahead: pitch down (−pitch), so the rear rotors rise.
    controls = one_step(goal=(2.0, 0, 0))
    assert controls[1] > controls[0] and controls[3] > controls[2]


def test_without_a_valid_horizontal_position_it_flies_level_whatever_the_goal():
    # Status 387 = 451 less HORIZONTAL_VALID (64): a goal 2 m north and 2 m east and a 1 m/s drift east ask for
    # nothing horizontal, so the level vehicle stays level: every rotor gets the hover command, as at the goal.
    # The vertical loop still works: 1 m below the goal, all four rise alike.
    controls = one_step(goal=(2.0, 2.0, 0), velocity=(0, 1.0, 0), status=387)
    np.testing.assert_allclose(controls[:4], HOVER_COMMAND, atol=1e-5)
    climbing = one_step(goal=(2.0, 2.0, -1.0), status=387)
    assert np.all(climbing[:4] > HOVER_COMMAND)
    np.testing.assert_allclose(climbing[:4], climbing[0], atol=1e-6)
    # With the bit (451) the same goal tilts it: the rotors differ.
    assert np.ptp(one_step(goal=(2.0, 2.0, 0), velocity=(0, 1.0, 0))[:4]) > 1e-3


def test_goal_to_the_east_rolls_right():
    # Facing north with the goal to the right (east): roll right, so the left rotors rise.
    controls = one_step(goal=(0, 2.0, 0))
    assert controls[1] > controls[0] and controls[2] > controls[3]


def test_vehicle_prim_gains_are_read():
    stage = open_stage(resolve_asset("vehicle", "astro_max_base"))
    prim = stage.GetPrimAtPath("/vehicle/controller")
    gains = PidGains.from_values(prim, read_prim(prim, PID_SPEC, "astro_max_base"), "astro_max_base")
    # As authored in vehicles/astro_max_base.usda; maxTilt is not authored: the schema's fallback, 45 deg.
    assert gains.hover_thrust == pytest.approx(HOVER_COMMAND)
    assert gains.rate_p == pytest.approx((0.15, 0.15, 3.0))
    assert gains.attitude_p == pytest.approx((6.5, 6.5, 5.0))
    assert gains.max_tilt == pytest.approx(0.7853982)


@pytest.mark.parametrize("attribute, value, expected", [
    ("nexus:hoverThrust", 1.0, "nexus:hoverThrust is 1; it must be in (0, 1)"),
    ("nexus:hoverThrust", 0.0, "nexus:hoverThrust is 0; it must be in (0, 1]"),
    ("nexus:maxTilt", 1.6, "nexus:maxTilt is 1.6 rad; it must be in (0, 1.5708]"),
    # The float32 nearest π/2 is 1.5707963705, above π/2 (1.5707963268): the closed bound refuses it already.
    ("nexus:maxTilt", math.pi / 2, "nexus:maxTilt is 1.570796 rad; it must be in (0, 1.5708]"),
])
def test_hover_command_and_tilt_must_lie_inside_their_open_ranges(attribute, value, expected):
    # Hover command in (0, 1) and tilt in (0, π/2) rad: both ends excluded (the old hand checks' ranges).
    from pxr import Sdf, Usd

    stage = Usd.Stage.CreateInMemory()  # not the vehicle file's stage: USD shares that layer with other tests
    prim = stage.DefinePrim("/vehicle/controller", "Scope")
    prim.AddAppliedSchema("NexusPidControllerAPI")
    prim.CreateAttribute(attribute, Sdf.ValueTypeNames.Float).Set(value)
    with pytest.raises(BuildError) as caught:
        PidGains.from_values(prim, read_prim(prim, PID_SPEC, "bad.usda"), "bad.usda")
    assert str(caught.value).startswith(f"bad.usda: controller prim /vehicle/controller: {expected}")


def test_velocity_integral_accumulates_through_the_state_tick_after_tick():
    # At the goal but drifting north at 0.5 m/s: the velocity goal is 0 (no position error, a still setpoint),
    # so the error is -0.5 m/s and the integral after n ticks of 0.004 s is -0.5 * 0.004 * n = -0.002 n [m].
    buffers, state = signals(velocity=(0.5, 0, 0)), new_state()
    for n in (1, 2, 3):
        step(buffers, state, state)
        s = state.numpy()[0, 0]
        assert s["velocity_integral"][0] == pytest.approx(-0.002 * n, rel=1e-5)
        assert s["velocity_integral"][1] == 0.0 and s["velocity_integral"][2] == 0.0
        assert s["previous_velocity"].tolist() == [0.5, 0.0, 0.0] and s["primed"] == 1.0


def test_state_in_is_read_and_state_out_written_so_a_rollout_can_keep_every_step():
    # A differentiable caller binds a fresh state_out per step: the kernel must leave state_in alone and carry its
    # integral forward. In: velocity integral 0.1 m; one tick at -0.5 m/s error: out 0.1 - 0.002 = 0.098 m.
    buffers = signals(velocity=(0.5, 0, 0))
    given = PidState()
    given.velocity_integral = wp.vec3(0.1, 0.0, 0.0)
    state_in = wp.array([given], dtype=PidState, device="cpu").reshape((1, 1))
    state_out = new_state()
    step(buffers, state_in, state_out)
    assert state_in.numpy()[0, 0]["velocity_integral"].tolist() == pytest.approx([0.1, 0.0, 0.0])
    assert state_in.numpy()[0, 0]["primed"] == 0.0
    assert state_out.numpy()[0, 0]["velocity_integral"][0] == pytest.approx(0.098, rel=1e-5)
    assert state_out.numpy()[0, 0]["primed"] == 1.0


class Held(Component):
    """Writes a fixed value to one signal every tick (a stand-in estimator or guidance)."""

    def __init__(self, name, kind, signal, dtype, value):
        super().__init__(name)
        self.kind, self.signal, self.dtype, self.value = kind, signal, dtype, value

    def stages(self):
        return [Stage(self.signal, self.kind, self.run, writes=(Write(self.signal, self.dtype, (1,)),))]

    def prepare(self, ctx):
        self.held = wp.array([self.value], dtype=self.dtype, device=ctx.device)

    def run(self, io):
        wp.copy(io[self.signal], self.held)


def test_the_engine_owns_the_pid_and_mission_state_restore_rewinds_them():
    # A captured ring: an estimate at rest at the start but drifting north at 0.5 m/s, the short mission, the PID.
    # Its take-off leg lasts 2 m / 1.25 m/s = 1.6 s = 400 ticks of 4 ms. Fly 390 ticks, snapshot, fly 20 (the PID's
    # integrators grow, the mission enters "hold" at tick 400), restore, fly the same 20 again: the controls repeat
    # bit for bit and the mission is back in "takeoff" at the restore. Had either kept its state on the component,
    # the restore would leave it 20 ticks ahead.
    from nexus.core import Loop
    from nexus.guidance import MissionGuidance, MissionProfile

    estimate = PoseTwist()
    estimate.attitude, estimate.velocity = heading(0.0), wp.vec3(0.5, 0.0, 0.0)
    mission = MissionGuidance("/scene/mission", MissionProfile.short())
    pid = PidController("/vehicle/controller", PidGains(hover_thrust=HOVER_COMMAND))
    loop = Loop([Held("/vehicle/estimator", "estimate", "estimate", PoseTwist, estimate), mission, pid],
                device="cpu").build()
    loop.run_kinds(("estimate", "guide"), first=True)  # the start-up: the mission plans from the estimate
    controls, state = loop.output("controls"), loop.states.of(pid)["pid"]

    def fly(ticks):
        rows = []
        for _ in range(ticks):
            loop.run(1)
            rows.append(controls.numpy()[0].copy())
        return np.array(rows), state.numpy().copy()

    fly(390)
    assert mission.phase == "takeoff"
    snapshot = loop.snapshot()
    first, state_first = fly(20)
    assert mission.phase == "hold"
    loop.restore(snapshot)
    assert mission.phase == "takeoff" and [p for _, p in mission.transitions] == ["takeoff"]
    again, state_again = fly(20)
    assert np.any(first[-1, :4] != first[0, :4])  # the integrators move the controls over these ticks
    assert first.tobytes() == again.tobytes() and state_first.tobytes() == state_again.tobytes()
    assert [p for _, p in mission.transitions] == ["takeoff", "hold"]
    loop.reset_state()  # back to the declared reset values: empty integrators, the mission unplanned
    assert state.numpy()[0, 0]["primed"] == 0.0 and state.numpy()[0, 0]["velocity_integral"].tolist() == [0.0] * 3
    assert mission.phase == "start" and mission.transitions == []


