"""A standard VTOL's controller: the multicopter PID on the lift rotors and the fixed-wing stack on the pusher and
surfaces, each run every tick into its own row, blended by the mission's phase and the airspeed.

One ``control`` stage of three launches, one thread per world each, after the mission's own stage has written
which loops run, the PID's setpoint and status and the stack's task:

1. the PID law (:func:`nexus.control.pid.pid_control`, the vehicle's ``NexusPidControllerAPI`` gains and its
   rotors' allocation) on the setpoint its mission writes, run only while the mission switches the rotors on
   (off, it clears its integrators), and flying level without a position hold in the transitions (the status
   its mission passes has no ``HORIZONTAL_VALID``: the PID's flight without a position);
2. the fixed-wing stack (:func:`nexus.control.fixed_wing.controller.fixed_wing_control`) on its mission's task,
   run only in the transitions and on the wing;
3. the blend: the rotors' slots get the PID's commands times ``w`` and the surfaces the wing's times ``1 − w``,
   where ``w`` is 1 on the rotors, 0 on the wing, and in a transition falls from 1 at the blend airspeed to 0 at
   the transition airspeed (PX4's VT_ARSP_BLEND and VT_ARSP_TRANS); the pusher gets the wing's throttle, which its
   task sets (full in the front transition, off in the back transition and on the rotors). ``vtol_blend``
   records ``w``.

The vehicle file is a plane (wing, pusher, aileron, elevator, rudder: :func:`~.fixed_wing.controller.plane_controller`)
with rotors whose ESCs take outputs 0 to n − 1, and a ``NexusPidControllerAPI`` prim for the rotors' gains.
"""

from __future__ import annotations

import warp as wp

from nexus.control.fixed_wing.controller import FIXED_WING_STATE, FixedWingController, fixed_wing_control
from nexus.control.pid import PID_STATE, PidController, pid_control
from nexus.control.vtol.mission import BACK_TRANSITION, FIXED_WING, FRONT_TRANSITION, VtolMission
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Spec
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.sensors.airspeed import AirspeedSample

VTOL_CONTROLLER_SPEC = Spec(
    name="VtolController",
    doc="A standard VTOL's controller: the multicopter PID on the lift rotors and the fixed-wing stack on the pusher "
        "and surfaces, blended by the VTOL mission's phase and the airspeed.",
    inputs=(
        Input("estimate", PoseTwist, connectable=True, doc="The prim whose stage writes the `estimate` signal."),
        Input("vtol_phase", wp.int32, doc="The VTOL mission's phase"),
        Input("airspeed", AirspeedSample, default=AirspeedSample(),
              doc="The pitot's reading (nexus/sensors/airspeed.py); read only when the vehicle has one"),
    ),
    outputs=(Output("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True,
                    doc="ESC commands in [0, 1] at the lift rotors' channels and the pusher's, servo commands in "
                        "[-1, 1] at the surfaces'"),
             Output("plane_airspeed", wp.float32, recorded=True, default=0.0,
                    doc="The airspeed the wing's stack flew this tick [m/s]"),
             Output("airspeed_source", wp.int32, recorded=True, default=0,
                    doc="0 the speed over the ground (no pitot), 1 the pitot, 2 none: the pitot failed"),
             Output("vtol_blend", wp.float32, recorded=True, default=1.0,
                    doc="The rotors' share w of the blend: 1 on the rotors, 0 on the wing [-]")),
    state=(PID_STATE, FIXED_WING_STATE),
    stage="vtol",
    kind="control",
    noun="controller",
)


@wp.kernel
def blend_vtol(
    phase: wp.array(dtype=wp.int32),
    airspeed: wp.array(dtype=wp.float32),
    rotors: wp.array2d(dtype=wp.float32),
    wing: wp.array2d(dtype=wp.float32),
    blend_airspeed: float,
    transition_airspeed: float,
    throttle_channel: int,
    controls: wp.array2d(dtype=wp.float32),
    blend_out: wp.array(dtype=wp.float32),
):
    world = wp.tid()
    f = phase[world]
    w = float(1.0)
    if f == FIXED_WING:
        w = 0.0
    elif f == FRONT_TRANSITION or f == BACK_TRANSITION:
        share = (airspeed[world] - blend_airspeed) / (transition_airspeed - blend_airspeed)
        w = 1.0 - wp.clamp(share, 0.0, 1.0)
    for i in range(CONTROLS_WIDTH):
        controls[world, i] = rotors[world, i] * w + wing[world, i] * (1.0 - w)
    controls[world, throttle_channel] = wing[world, throttle_channel]
    blend_out[world] = w


class VtolController(Component):
    """The PID and the fixed-wing stack, blended (see the module's doc). ``rotors`` is the vehicle's
    :class:`PidController`, ``wing`` its :class:`FixedWingController`; a :class:`VtolMission` writes their inputs."""

    spec = VTOL_CONTROLLER_SPEC
    #: The start-up settles it on its gear (it takes off on its rotors: no air start, no launcher).
    vertical_takeoff = True

    def __init__(self, name: str, rotors: PidController, wing: FixedWingController, connections=None):
        super().__init__(name, connections)
        if wing.gains.airspeed_fallback:
            raise BuildError(f"{wing.gains.where or name}: nexus:airspeedFallback is not flown by the VTOL controller "
                             "yet; set it to 0")
        channels = [wing.channels[role] for role in ("aileron", "elevator", "rudder", "throttle")]
        taken = [c for c in channels if c < rotors.rotor_count]
        if taken:
            raise BuildError(f"{name}: the wing's outputs {channels} (aileron, elevator, rudder, pusher) overlap the "
                             f"lift rotors' 0 to {rotors.rotor_count - 1}; give the surfaces and the pusher outputs "
                             f"from {rotors.rotor_count} on (nexus:channel)")
        self.rotors, self.wing = rotors, wing
        self.mission: VtolMission | None = None

    def prepare(self, ctx) -> None:
        if self.mission is None:
            raise BuildError(f"{self.name}: the VTOL controller flies a VTOL mission; none was built")
        self.worlds, self.dt = ctx.worlds, float(ctx.dt)
        self.rotors.prepare(ctx)
        self.wing.prepare(ctx)
        device = ctx.device
        self.setpoint = wp.zeros(ctx.worlds, dtype=Setpoint, device=device)
        self.multicopter_on = wp.zeros(ctx.worlds, dtype=wp.int32, device=device)
        self.wing_on = wp.zeros(ctx.worlds, dtype=wp.int32, device=device)
        self.multicopter_status = wp.zeros(ctx.worlds, dtype=wp.int32, device=device)
        self.rotor_row = wp.zeros((ctx.worlds, CONTROLS_WIDTH), dtype=wp.float32, device=device)
        self.wing_row = wp.zeros((ctx.worlds, CONTROLS_WIDTH), dtype=wp.float32, device=device)
        self.no_wind = wp.zeros(ctx.worlds, dtype=wp.vec3, device=device)
        self.no_clock = wp.zeros(ctx.worlds, dtype=wp.int64, device=device)

    def run(self, io) -> None:
        r, w = self.rotors, self.wing
        wp.launch(pid_control, dim=self.worlds,
                  inputs=[io["estimate"], self.setpoint, self.multicopter_on, self.multicopter_status, r._params,
                          io.state_in["pid"], self.dt, r.mix, self.no_clock],
                  outputs=[io.state_out["pid"], self.rotor_row], device=io.device)
        wp.launch(fixed_wing_control, dim=self.worlds,
                  inputs=[io["estimate"], self.wing_on, io["airspeed"], self.no_wind, self.multicopter_status, w.task,
                          io.state_in["fixed_wing"], w._params, self.dt],
                  outputs=[io.state_out["fixed_wing"], self.wing_row, io["plane_airspeed"], io["airspeed_source"]],
                  device=io.device)
        wp.launch(blend_vtol, dim=self.worlds,
                  inputs=[io["vtol_phase"], io["plane_airspeed"], self.rotor_row, self.wing_row,
                          self.mission.blend_airspeed, self.mission.transition_airspeed, int(w.channels["throttle"])],
                  outputs=[io["controls"], io["vtol_blend"]], device=io.device)


__all__ = ["VTOL_CONTROLLER_SPEC", "VtolController", "blend_vtol"]
