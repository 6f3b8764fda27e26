"""The GPS receiver: geodetic position and NED velocity of the antenna.

The antenna's offset from the NED origin (where start-up settled the base,
which stands on the scene's geodetic origin; in a fleet, vehicle k's base
stands its place from vehicle 0 away from it: ``plant.geodetic_anchor``) is
taken as a vector in the origin's ENU tangent plane and converted exactly to latitude and longitude
on WGS-84 (:mod:`nexus.sensors.geodesy`). The altitude is the origin's
altitude plus the height above the NED origin, the same height the barometer
sees: the simulated ground is flat, so an altitude that followed the Earth's
curvature would drift from it (by 7.8 m at 10 km).

Position error = white noise + a slow drift (a first-order Gauss-Markov
process, ``d ← φ·d + σ_d·√(1 - φ²)·n``, ``φ = exp(-Δt/τ)``), in NED metres;
velocity error = white noise. Reports a 3D fix, the configured satellite
count, and eph/epv as the combined 1σ of white noise and drift.
"""

from __future__ import annotations

import math

import warp as wp

from nexus.core.spec import Output, Param, Spec, StateVar, non_negative, positive
from nexus.plant.body_state import BodyState
from nexus.plant.frames import enu_to_ned, ned_to_enu
from nexus.sensors.geodesy import ecef_to_latitude_longitude, enu_to_ecef_rotation, geodetic_to_ecef
from nexus.sensors.noise import normal3
from nexus.sensors.samples import GpsSample
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate

FIX_3D = 3


GPS_SPEC = Spec(
    name="Gps",
    schema="NexusGpsAPI",
    bases=(SENSOR,),
    doc="A GNSS receiver: the antenna's geodetic position (WGS-84) and NED velocity around the scene's geodetic "
        "origin, with white noise and a slow, correlated position drift (first-order Gauss-Markov).",
    params=(
        sensor_rate(10.0),
        non_negative("horizontal_sigma", "nexus:horizontalNoiseSigma", 0.02, "m", "Horizontal position white noise, 1 sigma"),
        non_negative("vertical_sigma", "nexus:verticalNoiseSigma", 0.04, "m", "Vertical position white noise, 1 sigma"),
        non_negative("velocity_sigma", "nexus:velocityNoiseSigma", 0.05, "m/s", "Velocity white noise per axis, 1 sigma"),
        Param("satellites", "nexus:satellites", "int", 10, "-", "Satellites the receiver reports", low=0),
        non_negative("horizontal_drift_sigma", "nexus:horizontalDriftSigma", 0.3, "m", "Horizontal drift, settled 1 sigma"),
        non_negative("vertical_drift_sigma", "nexus:verticalDriftSigma", 0.5, "m", "Vertical drift, settled 1 sigma"),
        positive("drift_correlation_time", "nexus:driftCorrelationTime", 60.0, "s", "Correlation time of the drift"),
    ),
    outputs=(Output("gps", GpsSample, recorded=True, doc="Latitude, longitude [deg], altitude [m], NED velocity [m/s]"),),
    state=(StateVar("drift", wp.vec3, (1,), 0.0, "position drift [m], NED"),),
    stage="gps",
)


@wp.kernel
def sample_gps(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    anchor: wp.array(dtype=wp.vec3),
    origin_ecef: wp.vec3d,
    enu_to_ecef: wp.mat33d,
    origin_altitude: wp.float64,
    mount: wp.vec3,
    position_sigma: wp.vec3,
    drift_sigma: wp.vec3,
    velocity_sigma: wp.vec3,
    correlation_time: wp.float32,
    world_seeds: wp.array(dtype=wp.vec3i),
    noise_scale: wp.array(dtype=wp.float32),
    satellites: wp.int32,
    eph: wp.float32,
    epv: wp.float32,
    drift_in: wp.array2d(dtype=wp.vec3),
    drift_out: wp.array2d(dtype=wp.vec3),
    out: wp.array(dtype=GpsSample),
):
    world = wp.tid()
    seeds = world_seeds[world]
    scale = noise_scale[world]
    drift = drift_in[world, 0]
    drift_out[world, 0] = drift
    elapsed_ns = due(clock, world)
    if elapsed_ns < wp.int64(0):
        return
    now = clock.tick[world]
    state = body[world]
    q = wp.transform_get_rotation(state.pose)
    antenna = wp.transform_point(state.pose, mount)
    lever = wp.quat_rotate(q, mount - state.com)

    # Slow drift: the first sample draws it from its settled distribution (φ = 0).
    keep = wp.float32(0.0)
    if elapsed_ns > wp.int64(0):
        keep = wp.exp(-wp.float32(wp.float64(elapsed_ns) * wp.float64(1.0e-9)) / correlation_time)
    walked = drift * keep + normal3(seeds[2], now, drift_sigma * wp.sqrt(1.0 - keep * keep))
    drift_out[world, 0] = walked

    offset_ned = enu_to_ned(antenna - anchor[world]) + walked + normal3(seeds[0], now, position_sigma * scale)
    offset_enu = ned_to_enu(offset_ned)
    ecef = origin_ecef + enu_to_ecef * wp.vec3d(
        wp.float64(offset_enu[0]), wp.float64(offset_enu[1]), wp.float64(offset_enu[2])
    )
    latitude_longitude = ecef_to_latitude_longitude(ecef)
    velocity = enu_to_ned(state.velocity + wp.cross(state.angular_velocity, lever))

    sample = GpsSample()
    sample.time = clock.time[world]
    sample.latitude = latitude_longitude[0]
    sample.longitude = latitude_longitude[1]
    sample.altitude = origin_altitude + wp.float64(offset_enu[2])
    sample.velocity = velocity + normal3(seeds[1], now, velocity_sigma * scale)
    sample.fix_type = wp.int32(FIX_3D)
    sample.satellites = satellites
    sample.eph = eph
    sample.epv = epv
    out[world] = sample


class Gps(Sensor):
    """Writes ``gps`` (:class:`GpsSample`) around the plant's geodetic origin.

    White noise: ``horizontal_sigma``, ``vertical_sigma`` [m], ``velocity_sigma``
    [m/s]; drift: ``horizontal_drift_sigma``, ``vertical_drift_sigma`` [m] with
    ``drift_correlation_time`` [s].
    """

    spec = GPS_SPEC

    def __init__(self, name: str, *, plant, **params):
        super().__init__(name, **params)
        self.plant = plant
        v = self.values
        self.horizontal_sigma, self.vertical_sigma = float(v["horizontal_sigma"]), float(v["vertical_sigma"])
        self.velocity_sigma = float(v["velocity_sigma"])
        self.horizontal_drift_sigma = float(v["horizontal_drift_sigma"])
        self.vertical_drift_sigma = float(v["vertical_drift_sigma"])
        self.drift_correlation_time = float(v["drift_correlation_time"])
        self.satellites = int(v["satellites"])

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        origin = self.plant.origin
        # The MSL altitude stands in for the ellipsoidal height (the geoid's undulation is ignored).
        origin_ecef = geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude)
        rotation = enu_to_ecef_rotation(origin.latitude, origin.longitude)
        scale = 1.0 if self.noise else 0.0
        h, v = self.horizontal_sigma, self.vertical_sigma
        dh, dv = self.horizontal_drift_sigma, self.vertical_drift_sigma
        self.seeds = self.world_seeds(ctx, ("gps/position", "gps/velocity", "gps/drift"), wp.vec3i)
        self._args = [
            self.plant.geodetic_anchor, wp.vec3d(*origin_ecef), wp.mat33d(*rotation.ravel()), wp.float64(origin.altitude),
            self.mount, wp.vec3(h * scale, h * scale, v * scale), wp.vec3(dh * scale, dh * scale, dv * scale),
            wp.vec3(self.velocity_sigma * scale),
            self.drift_correlation_time, self.seeds, self.noise_scale, self.satellites,
            math.hypot(h, dh), math.hypot(v, dv),
        ]

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Gps:
        return super().from_prim(prim, values, ctx, plant=ctx.plant, **extra)

    def launch(self, io) -> None:
        wp.launch(
            sample_gps, self.worlds,
            inputs=[*self.clock_inputs(io), *self._args, io.state_in["drift"], io.state_out["drift"]],
            outputs=[io[self.signal]], device=io.device,
        )
