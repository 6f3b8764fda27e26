"""A catapult: the plane starts at rest on its wheels and a launcher's shuttle pushes it up to its launch speed.

The other way to start a plane (the first, :mod:`.air_start`, puts it in the air at its release). A vehicle file
applies ``NexusCatapultAPI`` (on any prim) and the start-up settles the plane on its wheels, as a multirotor on its
gear (:func:`nexus.runtime.startup.start`); its resting place is the NED origin. From ``nexus:holdTime`` on (time at
rest: an estimator aligns there), a force stage pushes the base along the heading it rests on (horizontal) with
``m·a``, ``a`` = ``nexus:acceleration``, until its speed along that line reaches ``nexus:launchSpeed``; then the
shuttle lets go, once and for good. The stroke lasts about ``launchSpeed / a`` (0.45 s at 18 m/s and 40 m/s²,
8.1 m of rail; the wheels' friction and the drag make it a little longer).

The push is what PX4's launch detector waits for: a forward specific force above ``FW_LAUN_AC_THLD`` (30 m/s² by
default) for ``FW_LAUN_AC_T`` (0.05 s). At 40 m/s² (4 g, a pneumatic UAV launcher's order) it holds for the whole
stroke. The plane mission's launch phase (:mod:`.mission`) keeps the throttle off and the surfaces centred until
the plane moves faster than :data:`~.mission.LAUNCH_DETECT_SPEED`, then climbs out at full throttle.

It writes ``catapult_push`` [m/s²], the acceleration it applies this tick (0 before, after, and for a world whose
shuttle has let go), recorded.
"""

from __future__ import annotations

import warp as wp

from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar, positive
from nexus.plant.plant import Plant
from nexus.plant.usd_checks import nexus_apis

CATAPULT_SPEC = Spec(
    name="Catapult",
    schema="NexusCatapultAPI",
    noun="catapult",
    doc="A plane's launcher: the plane rests on its wheels for nexus:holdTime, then a shuttle pushes it along its "
        "heading at nexus:acceleration until it flies nexus:launchSpeed, and lets go.",
    params=(
        positive("launch_speed", "nexus:launchSpeed", 18.0, "m/s", "Speed along the rail at which the shuttle lets go"),
        Param("acceleration", "nexus:acceleration", "float", 40.0, "m/s^2",
              "The push per unit mass while on the shuttle (PX4's launch detector: FW_LAUN_AC_THLD, 30 by default)",
              low=0.0, high=200.0, open_low=True),
        Param("hold_time", "nexus:holdTime", "float", 1.0, "s", "Time at rest on the wheels before the push", low=0.0),
    ),
    inputs=(Input("time", wp.float64, doc="Sim time [s]"),),
    outputs=(Output("catapult_push", wp.float32, recorded=True, default=0.0,
                    doc="The catapult's push this tick per unit mass [m/s^2]; 0 off the shuttle"),),
    state=(StateVar("catapult", wp.vec3, (1,), wp.vec3(0.0, 0.0, 0.0),
                    "the rail's direction (east, north) [-] and 1 once the shuttle let go"),),
    stage="catapult",
    kind="force",
)


@wp.kernel
def push_on_the_rail(
    time: wp.array(dtype=wp.float64),
    state_in: wp.array2d(dtype=wp.vec3),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    base: wp.int32,
    bodies_per_world: wp.int32,
    mass: float,
    launch_speed: float,
    acceleration: float,
    hold_time: wp.float64,
    state_out: wp.array2d(dtype=wp.vec3),
    push: wp.array(dtype=wp.float32),
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    b = base + world * bodies_per_world
    s = state_in[world, 0]
    rail = wp.vec3(s[0], s[1], 0.0)
    if s[0] == 0.0 and s[1] == 0.0:  # the first tick: the rail runs along the heading the plane rests on
        nose = wp.quat_rotate(wp.transform_get_rotation(body_q[b]), wp.vec3(1.0, 0.0, 0.0))
        rail = wp.normalize(wp.vec3(nose[0], nose[1], 0.0))
    released = s[2]
    along = wp.dot(wp.spatial_top(body_qd[b]), rail)
    on = float(0.0)
    if released == 0.0 and time[world] >= hold_time:
        if along >= launch_speed:
            released = 1.0
        else:
            on = 1.0
    body_f[b] = body_f[b] + wp.spatial_vector(rail * (mass * acceleration * on), wp.vec3(0.0))
    push[world] = acceleration * on
    state_out[world, 0] = wp.vec3(rail[0], rail[1], released)


class Catapult(Component):
    """The launcher's push on the base body, one thread per world (see the module doc)."""

    spec = CATAPULT_SPEC

    def __init__(self, name: str, plant: Plant, launch_speed: float = 18.0, acceleration: float = 40.0,
                 hold_time: float = 1.0):
        super().__init__(name)
        self.plant = plant
        self.launch_speed, self.acceleration, self.hold_time = float(launch_speed), float(acceleration), float(hold_time)

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Catapult:
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def run(self, io) -> None:
        plant = self.plant
        wp.launch(push_on_the_rail, plant.worlds,
                  inputs=[io["time"], io.state_in["catapult"], plant.state.body_q, plant.state.body_qd, plant.base,
                          plant.bodies_per_world, float(plant.mass), self.launch_speed, self.acceleration,
                          wp.float64(self.hold_time)],
                  outputs=[io.state_out["catapult"], io["catapult_push"], plant.state.body_f], device=io.device)


def has_catapult(stage) -> bool:
    """Whether a vehicle file applies ``NexusCatapultAPI`` to some prim."""
    return any(CATAPULT_SPEC.schema in nexus_apis(prim) for prim in stage.Traverse())


def check_one_start(stage, path) -> None:
    """A plane starts one way: a file with both a catapult and an air start is refused in one line."""
    catapults = [prim for prim in stage.Traverse() if CATAPULT_SPEC.schema in nexus_apis(prim)]
    airs = [prim for prim in stage.Traverse() if "NexusAirStartAPI" in nexus_apis(prim)]
    if catapults and airs:
        raise BuildError(f"{path}: {catapults[0].GetPath()} applies NexusCatapultAPI and {airs[0].GetPath()} "
                         "NexusAirStartAPI; a plane starts one way: keep one")


__all__ = ["CATAPULT_SPEC", "Catapult", "check_one_start", "has_catapult", "push_on_the_rail"]
