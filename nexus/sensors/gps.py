"""The GPS receiver: geodetic position and NED velocity of the antenna.

The antenna's offset from the NED origin (where start-up settled the base,
which stands on the scene's geodetic origin) is taken as a vector in the
origin's ENU tangent plane and converted exactly to latitude and longitude
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

from nexus.core.errors import BuildError
from nexus.core.types import BodyState, GpsSample
from nexus.plant.frames import enu_to_ned, ned_to_enu
from nexus.plant.loading import attr
from nexus.sensors.geodesy import ecef_to_latitude_longitude, enu_to_ecef_rotation, geodetic_to_ecef
from nexus.sensors.noise import normal3, stream_seed
from nexus.sensors.prims import common_settings, non_negative, where
from nexus.sensors.schedule import take_if_due
from nexus.sensors.sensor import Sensor

FIX_3D = 3


@wp.kernel
def sample_gps(
    body: wp.array(dtype=BodyState),
    time: wp.array(dtype=wp.float64),
    time_ns: wp.array(dtype=wp.int64),
    tick: wp.array(dtype=wp.int64),
    period_ns: wp.int64,
    schedule: wp.array(dtype=wp.int64),
    ned_origin: wp.array(dtype=wp.vec3),
    origin_ecef: wp.vec3d,
    enu_to_ecef: wp.mat33d,
    origin_altitude: wp.float64,
    mount: wp.vec3,
    position_sigma: wp.vec3,
    drift_sigma: wp.vec3,
    velocity_sigma: wp.vec3,
    correlation_time: wp.float32,
    seeds: wp.vec3i,
    satellites: wp.int32,
    eph: wp.float32,
    epv: wp.float32,
    drift: wp.array(dtype=wp.vec3),
    out: wp.array(dtype=GpsSample),
):
    elapsed_ns = take_if_due(time_ns[0], period_ns, schedule)
    if elapsed_ns < wp.int64(0):
        return
    now = tick[0]
    state = body[0]
    q = wp.transform_get_rotation(state.pose)
    antenna = wp.transform_point(state.pose, mount)
    lever = wp.quat_rotate(q, mount - state.com)

    # Slow drift: the first sample draws it from its settled distribution (φ = 0).
    keep = wp.float32(0.0)
    if elapsed_ns > wp.int64(0):
        keep = wp.exp(-wp.float32(wp.float64(elapsed_ns) * wp.float64(1.0e-9)) / correlation_time)
    walked = drift[0] * keep + normal3(seeds[2], now, drift_sigma * wp.sqrt(1.0 - keep * keep))
    drift[0] = walked

    offset_ned = enu_to_ned(antenna - ned_origin[0]) + walked + normal3(seeds[0], now, position_sigma)
    offset_enu = ned_to_enu(offset_ned)
    ecef = origin_ecef + enu_to_ecef * wp.vec3d(
        wp.float64(offset_enu[0]), wp.float64(offset_enu[1]), wp.float64(offset_enu[2])
    )
    latitude_longitude = ecef_to_latitude_longitude(ecef)
    velocity = enu_to_ned(state.velocity + wp.cross(state.angular_velocity, lever))

    sample = GpsSample()
    sample.time = time[0]
    sample.latitude = latitude_longitude[0]
    sample.longitude = latitude_longitude[1]
    sample.altitude = origin_altitude + wp.float64(offset_enu[2])
    sample.velocity = velocity + normal3(seeds[1], now, velocity_sigma)
    sample.fix_type = wp.int32(FIX_3D)
    sample.satellites = satellites
    sample.eph = eph
    sample.epv = epv
    out[0] = sample


class Gps(Sensor):
    """Writes ``gps`` (:class:`GpsSample`) around the plant's geodetic origin.

    White noise: ``horizontal_sigma``, ``vertical_sigma`` [m], ``velocity_sigma``
    [m/s]; drift: ``horizontal_drift_sigma``, ``vertical_drift_sigma`` [m] with
    ``drift_correlation_time`` [s].
    """

    signal = "gps"
    sample_type = GpsSample

    def __init__(self, name: str, *, plant, horizontal_sigma: float = 0.02, vertical_sigma: float = 0.04,
                 velocity_sigma: float = 0.05, horizontal_drift_sigma: float = 0.3, vertical_drift_sigma: float = 0.5,
                 drift_correlation_time: float = 60.0, satellites: int = 10, **common):
        super().__init__(name, **common)
        if not drift_correlation_time > 0.0:
            raise BuildError(f"sensor prim {name}: the drift correlation time must be positive, "
                             f"got {drift_correlation_time} s")
        self.plant = plant
        self.horizontal_sigma, self.vertical_sigma = float(horizontal_sigma), float(vertical_sigma)
        self.velocity_sigma = float(velocity_sigma)
        self.horizontal_drift_sigma, self.vertical_drift_sigma = float(horizontal_drift_sigma), float(vertical_drift_sigma)
        self.drift_correlation_time = float(drift_correlation_time)
        self.satellites = int(satellites)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        origin = self.plant.origin
        # The MSL altitude stands in for the ellipsoidal height (the geoid's undulation is ignored).
        origin_ecef = geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude)
        rotation = enu_to_ecef_rotation(origin.latitude, origin.longitude)
        scale = 1.0 if self.noise else 0.0
        h, v = self.horizontal_sigma, self.vertical_sigma
        dh, dv = self.horizontal_drift_sigma, self.vertical_drift_sigma
        self.seeds = wp.vec3i(*(stream_seed(ctx.rng, s, self.name) for s in ("gps/position", "gps/velocity", "gps/drift")))
        self.drift = wp.zeros(1, dtype=wp.vec3, device=ctx.device)
        self._args = [
            self.plant.ned_origin, wp.vec3d(*origin_ecef), wp.mat33d(*rotation.ravel()), wp.float64(origin.altitude),
            self.mount, wp.vec3(h * scale, h * scale, v * scale), wp.vec3(dh * scale, dh * scale, dv * scale),
            wp.vec3(self.velocity_sigma * scale),
            self.drift_correlation_time, self.seeds, self.satellites,
            math.hypot(h, dh), math.hypot(v, dv), self.drift,
        ]

    def launch(self, io) -> None:
        wp.launch(sample_gps, 1, inputs=[*self.clock_inputs(io), *self._args], outputs=[io[self.signal]], device=io.device)


def build_gps(prim, ctx) -> Gps:
    """A :class:`Gps` from a prim applying ``NexusGpsAPI``."""
    correlation_time = float(attr(prim, "nexus:driftCorrelationTime"))
    if not correlation_time > 0.0:
        raise BuildError(f"{where(prim, ctx)}: nexus:driftCorrelationTime is {correlation_time}; it must be positive [s]")
    return Gps(
        str(prim.GetPath()),
        plant=ctx.plant,
        horizontal_sigma=non_negative(prim, ctx, "nexus:horizontalNoiseSigma"),
        vertical_sigma=non_negative(prim, ctx, "nexus:verticalNoiseSigma"),
        velocity_sigma=non_negative(prim, ctx, "nexus:velocityNoiseSigma"),
        horizontal_drift_sigma=non_negative(prim, ctx, "nexus:horizontalDriftSigma"),
        vertical_drift_sigma=non_negative(prim, ctx, "nexus:verticalDriftSigma"),
        drift_correlation_time=correlation_time,
        satellites=int(attr(prim, "nexus:satellites")),
        **common_settings(prim, ctx),
    )


