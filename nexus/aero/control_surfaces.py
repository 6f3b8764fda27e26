"""A control surface (aileron, elevator, rudder or flap) as an actuator with travel and rate limits.

Each tick the surface reads its channel of the ``controls`` row (a servo command in
[−1, 1], PX4's convention for servos), asks for ``command × travel`` [rad] and moves
toward it at no more than its rate limit:

    δ ← δ + clamp(clamp(u, −1, 1)·travel − δ, −rate·Δt, rate·Δt)

so the deflection never leaves ``[−travel, travel]`` and never moves faster than
``rate`` [rad/s].

A plane's surfaces that read the same controls and run one after the other in the ring move in one launch,
from the first one's stage (a launch costs about as much on the CPU as a surface's arithmetic, as for the ESCs):
the launch reaches each surface's deflection and output through their addresses, and computes what each
surface's own launch would, bit for bit (``tests/fixed_wing/test_fused_surfaces.py``). A run whose state does not
advance in place (a taped run) launches each surface by itself. The deflection is the component's state (reset to :attr:`ControlSurface.initial`,
0 unless a caller starts the vehicle trimmed) and is written to ``surface/<role>``,
which the wing reads (:mod:`nexus.aero.fixed_wing_forces`). Signs are Beard and
McLain's: a positive elevator is trailing edge down.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component
from nexus.core.errors import BuildError
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


@wp.func
def moved_toward(now: wp.float32, command: wp.float32, travel: wp.float32, max_step: wp.float32) -> wp.float32:
    """The deflection [rad] after one tick from ``now`` toward ``command`` (in [−1, 1]) × ``travel``, at most
    ``max_step`` [rad] (the rate limit over the tick)."""
    target = wp.clamp(command, -1.0, 1.0) * travel
    return now + wp.clamp(target - now, -max_step, max_step)


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
    moved = moved_toward(deflection_in[world, 0], controls[world, channel], travel, max_step)
    deflection_out[world, 0] = moved
    surface[world] = moved


@wp.func_native("return ((const float*)address)[index];")
def float_at(address: wp.uint64, index: wp.int32) -> wp.float32:
    """The float ``index`` of the buffer at device ``address``."""
    ...


@wp.func_native("((float*)address)[index] = value;")
def put_float(address: wp.uint64, index: wp.int32, value: wp.float32):
    """Write ``value`` to the float ``index`` of the buffer at device ``address``."""
    ...


@wp.struct
class SurfaceGroup:
    """The surfaces one launch moves, one entry each, in ring order."""

    channel: wp.array(dtype=wp.int32)
    travel: wp.array(dtype=wp.float32)
    max_step: wp.array(dtype=wp.float32)
    #: Address of each surface's deflection state (one float a world, advanced in place) and of its output.
    deflection: wp.array(dtype=wp.uint64)
    surface: wp.array(dtype=wp.uint64)


@wp.kernel
def move_surfaces(controls: wp.array2d(dtype=wp.float32), group: SurfaceGroup):
    """Every surface of ``group`` in one launch, one thread per world and surface: ``move_surface``'s arithmetic."""
    world, i = wp.tid()
    moved = moved_toward(float_at(group.deflection[i], world), controls[world, group.channel[i]], group.travel[i],
                         group.max_step[i])
    put_float(group.deflection[i], world, moved)
    put_float(group.surface[i], world, moved)


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

    #: One launch for the surfaces that run one after the other on the same controls (False: one launch each,
    #: the reference the tests compare with).
    fuse = True

    def prepare(self, ctx) -> None:
        self._model = [self.channel, self.travel, self.rate * float(ctx.dt)]
        group = fused_group(self, ctx) if ControlSurface.fuse else []
        # Every member finds the same group and the same answer, so none needs another to tell it. A state that does
        # not advance in place (a taped run) launches each surface by itself.
        fused = len(group) >= 2 and all(io.state_in["deflection"].ptr == io.state_out["deflection"].ptr
                                        for _, io in group)
        #: The surface whose launch moves this one (itself when it leads the group), or None: its own launch.
        self.leader = group[0][0] if fused else None
        self._group = None
        if self.leader is self:
            g = SurfaceGroup()
            g.channel = wp.array([s.channel for s, _ in group], dtype=wp.int32, device=ctx.device)
            g.travel = wp.array([s.travel for s, _ in group], dtype=wp.float32, device=ctx.device)
            g.max_step = wp.array([s.rate * float(ctx.dt) for s, _ in group], dtype=wp.float32, device=ctx.device)
            g.deflection = wp.array([io.state_in["deflection"].ptr for _, io in group], dtype=wp.uint64,
                                    device=ctx.device)
            g.surface = wp.array([io[f"surface/{s.role}"].ptr for s, io in group], dtype=wp.uint64, device=ctx.device)
            self._group = (g, len(group), group[0][1]["controls"].ptr)

    def run(self, io) -> None:
        if self.leader is self:
            group, count, controls = self._group
            if io["controls"].ptr != controls or io.state_in["deflection"].ptr != io.state_out["deflection"].ptr:
                raise BuildError(f"control surface {self.name}: its buffers are not those its fused launch was "
                                 "prepared with; set ControlSurface.fuse = False for this run")
            wp.launch(move_surfaces, (io["controls"].shape[0], count), inputs=[io["controls"], group],
                      device=io.device)
            return
        if self.leader is not None:
            return  # the first surface's launch moved this one
        wp.launch(move_surface, io[f"surface/{self.role}"].shape[0],
                  inputs=[io["controls"], io.state_in["deflection"], *self._model],
                  outputs=[io.state_out["deflection"], io[f"surface/{self.role}"]], device=io.device)


def fused_group(surface: ControlSurface, ctx) -> list:
    """The run of surfaces (with their stage buffers) that ``surface``'s stage belongs to: consecutive in the ring,
    all reading the same controls buffer, so that moving them all at the first one's place changes what no stage
    reads in between. Empty when the context does not give the ring's buffers."""
    runs, current = [], []
    for stage, io in getattr(ctx, "stage_ios", ()) or ():
        member = isinstance(stage.component, ControlSurface) and not stage.host
        if member and current and io["controls"].ptr == current[-1][1]["controls"].ptr:
            current.append((stage.component, io))
            continue
        if current:
            runs.append(current)
        current = [(stage.component, io)] if member else []
    if current:
        runs.append(current)
    return next((run for run in runs if any(c is surface for c, _ in run)), [])
