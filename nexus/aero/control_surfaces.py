"""A control surface (aileron, elevator, rudder or flap) as an actuator with travel and rate limits.

Each tick the surface reads its channel of the ``controls`` row (a servo command in
[−1, 1], PX4's convention for servos), asks for ``command × travel`` [rad] and moves
toward it at no more than its rate limit:

    δ ← δ + clamp(clamp(u, −1, 1)·travel − δ, −rate·Δt, rate·Δt)

so the deflection never leaves ``[−travel, travel]`` and never moves faster than
``rate`` [rad/s]. The deflection is the component's state (reset to :attr:`ControlSurface.initial`,
0 unless a caller starts the vehicle trimmed) and is written to ``surface/<role>``,
which the wing reads (:mod:`nexus.aero.fixed_wing_forces`). Signs are Beard and
McLain's: a positive elevator is trailing edge down.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component
from nexus.core.spec import Input, Output, Param, Spec, StateVar, positive
from nexus.plant.controls import CONTROLS_WIDTH


def _initial(surface: ControlSurface, ctx) -> list[float]:
    return [surface.initial]


CONTROL_SURFACE_SPEC = Spec(
    name="ControlSurface",
    schema="NexusControlSurfaceAPI",
    noun="control surface",
    doc="A control surface (aileron, elevator, rudder or flap) driven by one channel of the controls row (a "
        "servo command in [-1, 1]): it deflects toward command times travel at no more than its rate limit.",
    params=(
        Param("role", "nexus:role", "token", "elevator", "-", "Which surface this is: the wing's derivatives it moves",
              choices=("aileron", "elevator", "rudder", "flap")),
        Param("channel", "nexus:channel", "int", 0, "-", "Index of the controls row's element that commands it",
              low=0, high=CONTROLS_WIDTH - 1),
        positive("travel", "nexus:travel", 0.5236, "rad", "Largest deflection either way (command 1)"),
        positive("rate", "nexus:rateLimit", 6.98, "rad/s", "Fastest the surface moves (servo slew rate)"),
    ),
    inputs=(
        Input("controls", wp.float32, (1, CONTROLS_WIDTH), default=0.0, connectable=True,
              doc="The prim whose stage writes the `controls` signal (a controller)."),
    ),
    outputs=(Output("surface/{role}", wp.float32, recorded=True, doc="The surface's deflection [rad]"),),
    state=(StateVar("deflection", wp.float32, (1,), _initial, "the surface's deflection [rad]"),),
    stage="surface",
    kind="command",
)


@wp.kernel
def move_surface(
    # In:
    controls: wp.array2d(dtype=wp.float32),
    deflection_in: wp.array2d(dtype=wp.float32),
    # Model:
    channel: wp.int32,
    travel: wp.float32,
    max_step: wp.float32,
    # Out:
    deflection_out: wp.array2d(dtype=wp.float32),
    surface: wp.array(dtype=wp.float32),
):
    world = wp.tid()
    target = wp.clamp(controls[world, channel], -1.0, 1.0) * travel
    now = deflection_in[world, 0]
    moved = now + wp.clamp(target - now, -max_step, max_step)
    deflection_out[world, 0] = moved
    surface[world] = moved


class ControlSurface(Component):
    """One surface's servo, one kernel a tick over the worlds (see the module doc)."""

    spec = CONTROL_SURFACE_SPEC

    def __init__(self, name: str, role: str = "elevator", channel: int = 0, travel: float = 0.5236,
                 rate: float = 6.98):
        super().__init__(name)
        self.role, self.channel, self.travel, self.rate = role, int(channel), float(travel), float(rate)
        #: The deflection [rad] each run starts at (a vehicle started at its trim starts with its trimmed surfaces).
        self.initial = 0.0

    @classmethod
    def from_prim(cls, prim, values, ctx) -> ControlSurface:
        return cls(str(prim.GetPath()), **values)

    def prepare(self, ctx) -> None:
        self._model = [self.channel, self.travel, self.rate * float(ctx.dt)]

    def run(self, io) -> None:
        wp.launch(move_surface, io[f"surface/{self.role}"].shape[0],
                  inputs=[io["controls"], io.state_in["deflection"], *self._model],
                  outputs=[io.state_out["deflection"], io[f"surface/{self.role}"]], device=io.device)
