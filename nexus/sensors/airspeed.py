"""A pitot-static airspeed sensor: the differential pressure of the air along the body's forward axis [Pa].

The air's velocity relative to the sensor is the wind less the mount point's velocity (world
frame, ENU; the mount moves with the base's centre of mass plus ``omega x r``, see
:mod:`nexus.sensors.relative_air`):

    a   = wind - (v_com + omega x R·(mount - com))       [m/s]
    u   = -(R^T a)_x                                     [m/s]  (the forward airspeed: positive flying into the air)
    rho = p / (R_air · T)                                [kg/m^3] ISA at the mount's altitude (1.225 at sea level)
    q   = 1/2 · rho · u · |u|                            [Pa]

The sign follows the pitot: air from behind reads negative (PX4's Gazebo airspeed plugin does
the same). ``wind`` is the wind field's signal (:mod:`nexus.air.wind_field`), read as the
force stage wrote it this tick; with no wind stage the air is still. The rotors' own downwash
is not modelled. The reading gets a constant ``offset`` [Pa] (a pitot's zero error, which an
autopilot calibrates away) and white noise, both left out with ``noise`` off.

This file is the whole sensor: its sample type, spec (USD schema ``NexusAirspeedAPI``), kernel
and component. PX4 gets the reading as HIL_SENSOR's ``diff_pressure`` [hPa]
(:mod:`nexus.px4.controller`).
"""

from __future__ import annotations

import warp as wp

from nexus.core.spec import Output, Param, Spec, non_negative
from nexus.plant.body_state import BodyState
from nexus.sensors.barometer import isa_density
from nexus.sensors.noise import normal1
from nexus.sensors.relative_air import WIND_INPUT, relative_air
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate

#: White noise on the differential pressure [Pa] (PX4's Gazebo airspeed plugin: 0.01 hPa).
NOISE_SIGMA = 1.0


@wp.struct
class AirspeedSample:
    """One airspeed reading."""

    time: wp.float64
    #: Differential (pitot minus static) pressure [Pa]: 1/2 rho u |u|, offset and noise included.
    differential_pressure: wp.float32
    #: The true forward airspeed u [m/s] the reading came from (no noise).
    airspeed: wp.float32


AIRSPEED_SPEC = Spec(
    name="Airspeed",
    schema="NexusAirspeedAPI",
    bases=(SENSOR,),
    doc="A pitot-static airspeed sensor: the differential pressure 1/2 rho u |u| of the air's velocity relative to "
        "the mount along the body's forward axis (wind less the vehicle's velocity), ISA density at the mount's "
        "altitude, with a constant offset and white noise.",
    params=(
        sensor_rate(50.0),
        non_negative("noise_sigma", "nexus:noiseSigma", NOISE_SIGMA, "Pa", "White noise on the differential pressure, 1 sigma"),
        Param("offset", "nexus:offset", "float", 0.0, "Pa", "Constant error added to every reading (the zero offset)"),
    ),
    inputs=(WIND_INPUT,),
    outputs=(Output("airspeed", AirspeedSample, recorded=True,
                    doc="Differential pressure [Pa] and the true forward airspeed [m/s]"),),
    stage="airspeed",
)

@wp.func
def pitot_speed(differential_pressure: float, density: float) -> float:
    """The true airspeed [m/s] a pitot's ``q = ½·ρ·u·|u|`` [Pa] gives at air density ``density`` [kg/m³]: √(2·max(q, 0)/ρ)
    (the readers' one formula: the fixed-wing stack, the EKF's airspeed fusion, the VTOL's transitions)."""
    return wp.sqrt(2.0 * wp.max(differential_pressure, 0.0) / density)


@wp.kernel
def sample_airspeed(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    wind: wp.array(dtype=wp.vec3),
    ned_origin: wp.array(dtype=wp.vec3),
    origin_altitude: wp.float64,
    mount: wp.vec3,
    offset: wp.float32,
    sigma: wp.float32,
    seeds: wp.array(dtype=wp.int32),
    noise_scale: wp.array(dtype=wp.float32),
    out: wp.array(dtype=AirspeedSample),
):
    world = wp.tid()
    if due(clock, world) < wp.int64(0):
        return
    state = body[world]
    position = wp.transform_point(state.pose, mount)
    altitude = origin_altitude + wp.float64(position[2] - ned_origin[world][2])
    air = wp.quat_rotate_inv(wp.transform_get_rotation(state.pose), relative_air(state, wind[world], mount))
    u = wp.float64(-air[0])
    pressure = wp.float64(0.5) * isa_density(altitude) * u * wp.abs(u)
    noise = normal1(seeds[world], clock.tick[world], sigma * noise_scale[world])
    sample = AirspeedSample()
    sample.time = clock.time[world]
    sample.differential_pressure = wp.float32(pressure) + offset + noise
    sample.airspeed = wp.float32(u)
    out[world] = sample


class Airspeed(Sensor):
    """Writes ``airspeed`` (:class:`AirspeedSample`); ``noise_sigma`` and ``offset`` [Pa]."""

    spec = AIRSPEED_SPEC

    def __init__(self, name: str, *, plant, **params):
        super().__init__(name, **params)
        self.plant = plant
        self.noise_sigma = float(self.values["noise_sigma"])
        self.offset = float(self.values["offset"])

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Airspeed:
        return super().from_prim(prim, values, ctx, plant=ctx.plant, **extra)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        sigma, offset = (self.noise_sigma, self.offset) if self.noise else (0.0, 0.0)
        self._args = [self.plant.ned_origin, wp.float64(self.plant.origin.altitude), self.mount, offset, sigma,
                      self.world_seeds(ctx, ("airspeed",), wp.int32), self.noise_scale]

    def launch(self, io) -> None:
        wp.launch(sample_airspeed, self.worlds, inputs=[*self.clock_inputs(io), io["wind"], *self._args],
                  outputs=[io[self.signal]], device=io.device)


__all__ = ["AIRSPEED_SPEC", "Airspeed", "AirspeedSample", "sample_airspeed"]
