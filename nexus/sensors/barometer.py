"""The barometer: ISA troposphere pressure and temperature at the sensor's altitude.

The sensor's altitude above mean sea level is the origin's altitude plus its
height above the NED origin (the point start-up settled the base at, which
stands on the scene's geodetic origin):

    h = h_origin + (p_sensor - p_ned_origin)·up        [m]
    T = 288.15 - 0.0065·h                              [K]
    p = 101325·(T / 288.15)^5.25588                    [Pa]

A static port on a moving vehicle also feels part of the dynamic pressure of the air going
past it; ``dynamicPressureCoefficient`` C says how much (0, the default, leaves it out):

    a   = the air's velocity relative to the mount [m/s] (:mod:`nexus.sensors.relative_air`)
    rho = p / (287.05287 · T)                          [kg/m^3]  (ISA: 1.225 at sea level)
    p  += C · 1/2 · rho · |a|²                         [Pa]

A slow drift, the in-run error of a real sensor's zero, walks the height the
sensor thinks it is at: each sample adds ``d ← d + driftRandomWalk·√Δt·n``
(``Δt`` the time since the last sample, ``n`` a standard normal from the
sensor's own ``baro/drift`` stream, 0 at start), and ``p`` is the ISA pressure
at ``h + d`` (the dynamic-pressure term keeps the true ``h``), so the pressure
altitude below is off by ``d``. Without a walk (the default) ``d`` stays 0.

White noise is added to ``p``; the pressure altitude is the ISA altitude of
the noisy pressure, ``(288.15 / 0.0065)·(1 - (p / 101325)^(1 / 5.25588))``,
as an autopilot would compute it. The temperature carries no noise.
"""

from __future__ import annotations

import warp as wp

from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec, StateVar, non_negative
from nexus.plant.body_state import BodyState
from nexus.sensors.noise import normal1
from nexus.sensors.relative_air import WIND_INPUT, relative_air
from nexus.sensors.samples import BaroSample
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate

#: International Standard Atmosphere, troposphere (ISO 2533).
SEA_LEVEL_TEMPERATURE = 288.15  # [K]
LAPSE_RATE = 0.0065  # [K/m]
SEA_LEVEL_PRESSURE = 101325.0  # [Pa]
PRESSURE_EXPONENT = 5.25588  # g·M / (R·L) [-]
AIR_GAS_CONSTANT = 287.05287  # specific gas constant of dry air [J/(kg·K)]
#: PX4 Gazebo barometer white noise [Pa].
NOISE_SIGMA = 3.0

BAROMETER_SPEC = Spec(
    name="Barometer",
    schema="NexusBarometerAPI",
    bases=(SENSOR,),
    doc="A static-pressure barometer: ISA troposphere pressure and temperature at the mount's altitude above "
        "the scene's geodetic origin, white noise on the pressure, and the pressure altitude an autopilot derives.",
    params=(
        sensor_rate(50.0),
        non_negative("noise_sigma", "nexus:noiseSigma", NOISE_SIGMA, "Pa", "White noise on the pressure, 1 sigma"),
        non_negative("dynamic_pressure_coefficient", "nexus:dynamicPressureCoefficient", 0.0, "-",
                     "Share C of the relative air's dynamic pressure the static port feels: p + C 1/2 rho |a|^2 "
                     "(0: none)"),
        non_negative("drift_walk", "nexus:driftRandomWalk", 0.0, "m/sqrt(s)",
                     "Random walk of the height the sensor reads (its drift): 1 sigma after t seconds is this "
                     "times sqrt(t); 0 holds it at 0"),
    ),
    inputs=(WIND_INPUT,),
    outputs=(Output("baro", BaroSample, recorded=True, doc="Pressure [Pa], temperature [K], pressure altitude [m]"),),
    state=(StateVar("drift", wp.float64, (1,), 0.0, "the drift's height offset [m], 0 at start"),),
    stage="baro",
)

# Typed for kernels: a bare Python float in a kernel is a float32 literal.
_T0 = wp.constant(wp.float64(SEA_LEVEL_TEMPERATURE))
_L = wp.constant(wp.float64(LAPSE_RATE))
_P0 = wp.constant(wp.float64(SEA_LEVEL_PRESSURE))
_N = wp.constant(wp.float64(PRESSURE_EXPONENT))
_INVERSE_N = wp.constant(wp.float64(1.0 / PRESSURE_EXPONENT))
_T0_OVER_L = wp.constant(wp.float64(SEA_LEVEL_TEMPERATURE / LAPSE_RATE))
_R_AIR = wp.constant(wp.float64(AIR_GAS_CONSTANT))


@wp.func
def isa_temperature(altitude: wp.float64) -> wp.float64:
    return _T0 - _L * altitude


@wp.func
def isa_pressure(altitude: wp.float64) -> wp.float64:
    return _P0 * wp.pow(isa_temperature(altitude) / _T0, _N)


@wp.func
def isa_density(altitude: wp.float64) -> wp.float64:
    """ISA air density [kg/m^3] at ``altitude`` [m] above mean sea level: p / (R·T)."""
    return isa_pressure(altitude) / (_R_AIR * isa_temperature(altitude))


@wp.func
def pressure_altitude(pressure: wp.float64) -> wp.float64:
    return _T0_OVER_L * (wp.float64(1.0) - wp.pow(pressure / _P0, _INVERSE_N))


@wp.kernel
def sample_baro(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    wind: wp.array(dtype=wp.vec3),
    ned_origin: wp.array(dtype=wp.vec3),
    origin_altitude: wp.float64,
    mount: wp.vec3,
    dynamic_coefficient: wp.float64,
    sigma: wp.float32,
    seeds: wp.array(dtype=wp.int32),
    noise_scale: wp.array(dtype=wp.float32),
    drift_walk: wp.float32,
    drift_seeds: wp.array(dtype=wp.int32),
    drift_in: wp.array2d(dtype=wp.float64),
    drift_out: wp.array2d(dtype=wp.float64),
    out: wp.array(dtype=BaroSample),
):
    world = wp.tid()
    drift = drift_in[world, 0]
    drift_out[world, 0] = drift
    elapsed_ns = due(clock, world)
    if elapsed_ns < wp.int64(0):
        return
    position = wp.transform_point(body[world].pose, mount)
    altitude = origin_altitude + wp.float64(position[2] - ned_origin[world][2])
    pressure = isa_pressure(altitude)
    if drift_walk > 0.0:  # without a drift the pressure keeps exactly its bits
        root_dt = wp.sqrt(wp.float32(wp.float64(elapsed_ns) * wp.float64(1.0e-9)))
        drift = drift + wp.float64(normal1(drift_seeds[world], clock.tick[world], drift_walk * root_dt))
        drift_out[world, 0] = drift
        pressure = isa_pressure(altitude + drift)
    if dynamic_coefficient > wp.float64(0.0):  # 0 leaves the pressure exactly as without the term
        air = wp.vec3d(relative_air(body[world], wind[world], mount))
        pressure = pressure + dynamic_coefficient * wp.float64(0.5) * isa_density(altitude) * wp.dot(air, air)
    pressure = pressure + wp.float64(normal1(seeds[world], clock.tick[world], sigma * noise_scale[world]))
    sample = BaroSample()
    sample.time = clock.time[world]
    sample.pressure = wp.float32(pressure)
    sample.temperature = wp.float32(isa_temperature(altitude))
    sample.pressure_altitude = wp.float32(pressure_altitude(pressure))
    out[world] = sample


class Barometer(Sensor):
    """Writes ``baro`` (:class:`BaroSample`); ``noise_sigma`` [Pa], ``dynamic_pressure_coefficient`` [-],
    ``drift_walk`` [m/√s]."""

    spec = BAROMETER_SPEC

    def __init__(self, name: str, *, plant, **params):
        super().__init__(name, **params)
        self.plant = plant
        self.noise_sigma = float(self.values["noise_sigma"])
        self.dynamic_pressure_coefficient = float(self.values["dynamic_pressure_coefficient"])
        self.drift_walk = float(self.values["drift_walk"])
        param = self.spec.param("drift_walk")
        why = param.problem(self.drift_walk)  # the bound the prim reader checks, for barometers built in code
        if why is not None:
            raise BuildError(f"sensor {name}: {param.attr} is {self.drift_walk} {param.unit}; it {why}")

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Barometer:
        return super().from_prim(prim, values, ctx, plant=ctx.plant, **extra)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        self.seed = self.world_seeds(ctx, ("baro",), wp.int32)
        sigma = self.noise_sigma if self.noise else 0.0
        self.drift_seed = self.world_seeds(ctx, ("baro/drift",), wp.int32)
        drift_walk = self.drift_walk if self.noise else 0.0
        self._args = [self.plant.ned_origin, wp.float64(self.plant.origin.altitude), self.mount,
                      wp.float64(self.dynamic_pressure_coefficient), sigma, self.seed, self.noise_scale,
                      drift_walk, self.drift_seed]

    def launch(self, io) -> None:
        wp.launch(sample_baro, self.worlds,
                  inputs=[*self.clock_inputs(io), io["wind"], *self._args, io.state_in["drift"], io.state_out["drift"]],
                  outputs=[io[self.signal]], device=io.device)
