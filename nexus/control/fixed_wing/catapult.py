"""A catapult: the plane starts at rest on its wheels and a launcher's shuttle pushes it up to its launch speed.

The other way to start a plane (the first, :mod:`.air_start`, puts it in the air at its release). A vehicle file
applies ``NexusCatapultAPI`` (on any prim) and the start-up settles the plane on its wheels, as a multirotor on its
gear (:func:`nexus.runtime.startup.start`); its resting place is the NED origin. From ``nexus:holdTime`` on (time at
rest: an estimator aligns there), a force stage pushes the base along the heading it rests on (horizontal) with
``m·a``, ``a`` = ``nexus:acceleration``, until its speed along that line reaches ``nexus:launchSpeed``; then the
shuttle lets go, once and for good. The stroke lasts about ``launchSpeed / a`` (0.45 s at 18 m/s and 40 m/s²,
8.1 m of rail; the wheels' friction and the drag make it a little longer).

Until it lets go the shuttle grips the plane, as a launcher's cradle does: wind and gusts must not roll the plane
along the ground or turn it away from the rail before the push. The grip is a stiff, critically damped spring
(natural frequency :data:`GRIP_FREQUENCY`) on the base's horizontal position and its heading, about where it rested
on the first tick: the whole horizontal position while at rest, the position across the rail during the stroke.
Without it a plane in moderate turbulence was turned off its rail during the 8 s a PX4 flight waits before the push,
and the push along the rail then read below PX4's launch threshold along the nose (19.8 against 30 m/s²): PX4 never
detected the launch and the plane rolled to a stop.

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
    state=(StateVar("catapult", wp.vec3, (3,), wp.vec3(0.0, 0.0, 0.0),
                    "the rail's direction (east, north) [-] and 1 once the shuttle let go; where the base rested "
                    "[m, world]; the heading it rested at [rad, from east, counter-clockwise]"),),
    stage="catapult",
    kind="force",
)


#: The grip's natural frequency [rad/s], critically damped: stiff against a gust (a 10 N gust moves the 11 kg
#: Aerosonde about 9 mm), slow against the 4 ms tick (0.04 rad a tick).
GRIP_FREQUENCY = 10.0


@wp.func
def heading_of(q: wp.quat) -> float:
    """The nose's heading [rad], from east counter-clockwise (world ENU)."""
    nose = wp.quat_rotate(q, wp.vec3(1.0, 0.0, 0.0))
    return wp.atan2(nose[1], nose[0])


@wp.kernel
def push_on_the_rail(
    time: wp.array(dtype=wp.float64),
    state_in: wp.array2d(dtype=wp.vec3),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    base: wp.int32,
    bodies_per_world: wp.int32,
    mass: float,
    yaw_inertia: float,
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
    rest = state_in[world, 1]
    rest_heading = state_in[world, 2][0]
    position = wp.transform_get_translation(body_q[b])
    rotation = wp.transform_get_rotation(body_q[b])
    rail = wp.vec3(s[0], s[1], 0.0)
    if s[0] == 0.0 and s[1] == 0.0:  # the first tick: the rail runs along the heading the plane rests on
        nose = wp.quat_rotate(rotation, wp.vec3(1.0, 0.0, 0.0))
        rail = wp.normalize(wp.vec3(nose[0], nose[1], 0.0))
        rest = position
        rest_heading = heading_of(rotation)
    released = s[2]
    velocity = wp.spatial_top(body_qd[b])
    along = wp.dot(velocity, rail)
    on = float(0.0)
    if released == 0.0 and time[world] >= hold_time:
        if along >= launch_speed:
            released = 1.0
        else:
            on = 1.0
    force = rail * (mass * acceleration * on)
    torque = wp.vec3(0.0)
    if released == 0.0:  # the grip: horizontal position (across the rail only, once pushing) and heading
        offset = wp.vec3(position[0] - rest[0], position[1] - rest[1], 0.0)
        drift = wp.vec3(velocity[0], velocity[1], 0.0)
        if on == 1.0:
            offset = offset - wp.dot(offset, rail) * rail
            drift = drift - wp.dot(drift, rail) * rail
        w = GRIP_FREQUENCY
        force = force - mass * (w * w * offset + 2.0 * w * drift)
        turn = heading_of(rotation) - rest_heading
        turn = wp.atan2(wp.sin(turn), wp.cos(turn))
        yaw_rate = wp.spatial_bottom(body_qd[b])[2]
        torque = wp.vec3(0.0, 0.0, -yaw_inertia * (w * w * turn + 2.0 * w * yaw_rate))
    body_f[b] = body_f[b] + wp.spatial_vector(force, torque)
    push[world] = acceleration * on
    state_out[world, 0] = wp.vec3(rail[0], rail[1], released)
    state_out[world, 1] = rest
    state_out[world, 2] = wp.vec3(rest_heading, 0.0, 0.0)


class Catapult(Component):
    """The launcher's push on the base body, one thread per world (see the module doc)."""

    spec = CATAPULT_SPEC

    def __init__(self, name: str, plant: Plant, launch_speed: float = 18.0, acceleration: float = 40.0,
                 hold_time: float = 1.0):
        super().__init__(name)
        self.plant = plant
        self.launch_speed, self.acceleration, self.hold_time = float(launch_speed), float(acceleration), float(hold_time)
        #: The yaw inertia the grip's heading spring works on [kg·m²]: the base body's about its vertical axis.
        self.yaw_inertia = float(plant.model.body_inertia.numpy()[plant.base][2][2])

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Catapult:
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def run(self, io) -> None:
        plant = self.plant
        wp.launch(push_on_the_rail, plant.worlds,
                  inputs=[io["time"], io.state_in["catapult"], plant.state.body_q, plant.state.body_qd, plant.base,
                          plant.bodies_per_world, float(plant.mass), self.yaw_inertia, self.launch_speed,
                          self.acceleration,
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


__all__ = ["CATAPULT_SPEC", "Catapult", "GRIP_FREQUENCY", "check_one_start", "has_catapult", "push_on_the_rail"]
