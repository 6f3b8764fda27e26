"""A downward rangefinder: distance to the ground along the body's down axis [m].

A single-beam laser like the TeraRanger or LightWare units PX4 supports. The
beam leaves the mount point ``p`` (world, ENU) along the body's down axis
``d = R·(0, 0, -1)`` and meets the scene's ground plane ``z = 0``:

    distance = p_z / (-d_z)        (only while the beam points down, d_z < 0)

A reading is valid while the true distance lies in ``[minDistance,
maxDistance]``; then white noise is added. Out of range (too close, too far,
or the beam pointing at the sky) the sample reports ``valid = 0`` and a
distance of ``maxDistance`` plus 1 cm, as an autopilot expects from a sensor
that sees nothing. The prim sits below the body it is mounted on, like every
sensor (:data:`~nexus.sensors.sensor.SENSOR`).

This file is the whole sensor: its sample type, spec (and so its USD schema
``NexusRangefinderAPI``), kernel and component, and the ``DISTANCE_SENSOR``
message it sends PX4 when PX4 flies (the spec's ``extras`` name it; the PX4
exchange forwards any sensor that does). ``docs/components.md`` walks through it.
"""

from __future__ import annotations

import warp as wp

from nexus.core.errors import BuildError
from nexus.core.spec import Output, Param, Spec, non_negative, positive
from nexus.plant.body_state import BodyState
from nexus.sensors.noise import normal1
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate

#: Added to ``maxDistance`` for an out-of-range reading [m].
OUT_OF_RANGE_MARGIN = 0.01
#: MAVLink's MAV_DISTANCE_SENSOR_LASER, MAV_SENSOR_ROTATION_PITCH_270 (facing down), and the
#: DISTANCE_SENSOR covariance that means "unknown".
LASER, FACING_DOWN, UNKNOWN_COVARIANCE = 0, 25, 255


@wp.struct
class RangeSample:
    """One rangefinder reading."""

    time: wp.float64
    #: Distance along the beam [m]; ``maxDistance`` + 1 cm when not valid.
    distance: wp.float32
    #: 1 while the ground is within range, else 0.
    valid: wp.int32


RANGEFINDER_SPEC = Spec(
    name="Rangefinder",
    schema="NexusRangefinderAPI",
    bases=(SENSOR,),
    doc="A downward single-beam rangefinder (a TeraRanger or LightWare laser): the distance from the mount "
        "along the body's down axis to the ground plane z = 0, with white noise, valid between minDistance "
        "and maxDistance.",
    params=(
        sensor_rate(50.0),
        non_negative("min_distance", "nexus:minDistance", 0.2, "m", "Shortest distance the sensor reads"),
        positive("max_distance", "nexus:maxDistance", 14.0, "m", "Longest distance the sensor reads"),
        non_negative("noise_sigma", "nexus:noiseSigma", 0.02, "m", "White noise on the distance, 1 sigma"),
        Param("field_of_view", "nexus:fieldOfView", "float", 0.0524, "rad",
              "Beam width, reported to the autopilot only", low=0.0, high=3.1416),
    ),
    outputs=(Output("range", RangeSample, recorded=True, doc="Distance to the ground [m] and whether it is valid"),),
    stage="range",
    extras={"mavlink": "DISTANCE_SENSOR"},
)


@wp.kernel
def sample_range(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    mount: wp.vec3,
    min_distance: wp.float32,
    max_distance: wp.float32,
    sigma: wp.float32,
    seeds: wp.array(dtype=wp.int32),
    noise_scale: wp.array(dtype=wp.float32),
    out: wp.array(dtype=RangeSample),
):
    world = wp.tid()
    if due(clock, world) < wp.int64(0):
        return
    pose = body[world].pose
    origin = wp.transform_point(pose, mount)
    down = wp.quat_rotate(wp.transform_get_rotation(pose), wp.vec3(0.0, 0.0, -1.0))
    sample = RangeSample()
    sample.time = clock.time[world]
    sample.valid = 0
    sample.distance = max_distance + OUT_OF_RANGE_MARGIN
    if down[2] < -1.0e-6:
        truth = origin[2] / -down[2]
        if truth >= min_distance and truth <= max_distance:
            sample.valid = 1
            sample.distance = truth + normal1(seeds[world], clock.tick[world], sigma * noise_scale[world])
    out[world] = sample


class Rangefinder(Sensor):
    """Writes ``range`` (:class:`RangeSample`): distance to the ground below the body [m]."""

    spec = RANGEFINDER_SPEC

    def __init__(self, name: str, **params):
        super().__init__(name, **params)
        v = self.values
        min_distance, max_distance = v["min_distance"], v["max_distance"]
        noise_sigma, field_of_view = v["noise_sigma"], v["field_of_view"]
        if not 0.0 <= min_distance < max_distance:
            raise BuildError(f"sensor prim {name}: nexus:minDistance ({min_distance} m) must be below "
                             f"nexus:maxDistance ({max_distance} m)")
        self.min_distance, self.max_distance = float(min_distance), float(max_distance)
        self.noise_sigma, self.field_of_view = float(noise_sigma), float(field_of_view)

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Rangefinder:
        try:
            return super().from_prim(prim, values, ctx, **extra)
        except BuildError as error:
            raise BuildError(f"{ctx.path}: {error}") from None

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        sigma = self.noise_sigma if self.noise else 0.0
        self._args = [self.mount, self.min_distance, self.max_distance, sigma, self.world_seeds(ctx, ("range",), wp.int32),
                      self.noise_scale]

    def mavlink_message(self, mav, time_usec: int, sample):
        """The sample as PX4 takes it (``DISTANCE_SENSOR``): centimetres, facing down, quality 100 or 1 (invalid)."""
        variance_cm2 = (100.0 * self.noise_sigma) ** 2 if self.noise else 0.0
        return mav.distance_sensor_encode(
            time_usec // 1000,
            round(100.0 * self.min_distance), round(100.0 * self.max_distance),
            min(65535, round(100.0 * float(sample.distance))),
            LASER, 0, FACING_DOWN,
            min(UNKNOWN_COVARIANCE - 1, round(variance_cm2)),
            self.field_of_view, self.field_of_view, [0.0, 0.0, 0.0, 0.0],
            100 if int(sample.valid) else 1,
        )

    def launch(self, io) -> None:
        wp.launch(sample_range, self.worlds, inputs=[*self.clock_inputs(io), *self._args], outputs=[io[self.signal]],
                  device=io.device)


__all__ = ["RANGEFINDER_SPEC", "RangeSample", "Rangefinder", "sample_range"]
