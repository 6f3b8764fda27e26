"""The magnetometer: the Earth's field from the World Magnetic Model, in FRD [T].

The field is evaluated once, when the run is prepared, with ``pygeomag``
(WMM-2025) at the scene's geodetic origin for the plant's decimal year
(``plant.origin``, ``plant.decimal_year``, read then, not at assembly), and
taken as uniform over the flight. Each sample rotates that NED field into the
body: ``B_frd = frd(R⁻¹ · enu(B_ned))``, then adds white noise.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import warp as wp
from pygeomag import GeoMag

from nexus.core.spec import Output, Spec, non_negative
from nexus.plant.body_state import BodyState
from nexus.plant.frames import flu_to_frd, ned_to_enu_np
from nexus.sensors.noise import normal3
from nexus.sensors.samples import MagSample
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate

#: One gauss in tesla; the prim's noise is in gauss, as in PX4's Gazebo models.
TESLA_PER_GAUSS = 1.0e-4
#: Default white noise per axis [gauss].
NOISE_SIGMA_GAUSS = 0.005

MAGNETOMETER_SPEC = Spec(
    name="Magnetometer",
    schema="NexusMagnetometerAPI",
    bases=(SENSOR,),
    doc="A three-axis magnetometer: the World Magnetic Model's field at the scene's geodetic origin, rotated "
        "into the body (FRD), with white noise.",
    params=(
        sensor_rate(100.0),
        non_negative("noise_sigma", "nexus:noiseSigma", NOISE_SIGMA_GAUSS, "gauss", "White noise per axis, 1 sigma"),
    ),
    outputs=(Output("mag", MagSample, recorded=True, doc="Magnetic flux density [T], FRD"),),
    stage="mag",
)


@lru_cache(maxsize=8)
def _geomag():
    return GeoMag()  # reads the WMM coefficients: once per process


def earth_field_ned(latitude: float, longitude: float, altitude: float, decimal_year: float) -> np.ndarray:
    """The WMM field (north, east, down) [T] at a geodetic point (deg, deg, m above MSL) and date."""
    result = _geomag().calculate(glat=latitude, glon=longitude, alt=altitude / 1000.0, time=decimal_year)
    return np.array([result.x, result.y, result.z], dtype=np.float64) * 1.0e-9  # nT -> T


@wp.kernel
def sample_mag(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    field_enu: wp.vec3,
    sigma: wp.vec3,
    seeds: wp.array(dtype=wp.int32),
    noise_scale: wp.array(dtype=wp.float32),
    out: wp.array(dtype=MagSample),
):
    world = wp.tid()
    if due(clock, world) < wp.int64(0):
        return
    q = wp.transform_get_rotation(body[world].pose)
    sample = MagSample()
    sample.time = clock.time[world]
    sample.field = flu_to_frd(wp.quat_rotate_inv(q, field_enu)) + normal3(seeds[world], clock.tick[world], sigma * noise_scale[world])
    out[world] = sample


class Magnetometer(Sensor):
    """Writes ``mag`` (:class:`MagSample`) for the plant's origin and date; ``noise_sigma`` [gauss] per axis."""

    spec = MAGNETOMETER_SPEC

    def __init__(self, name: str, *, plant, **params):
        super().__init__(name, **params)
        self.plant = plant
        self.noise_sigma = float(self.values["noise_sigma"])
        #: The field at the origin [T], NED; computed in :meth:`prepare`.
        self.field_ned = None

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Magnetometer:
        return super().from_prim(prim, values, ctx, plant=ctx.plant, **extra)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        origin = self.plant.origin
        self.field_ned = earth_field_ned(origin.latitude, origin.longitude, origin.altitude, self.plant.decimal_year)
        self.seed = self.world_seeds(ctx, ("mag",), wp.int32)
        sigma = self.noise_sigma * TESLA_PER_GAUSS if self.noise else 0.0
        self._args = [wp.vec3(*ned_to_enu_np(self.field_ned)), wp.vec3(sigma), self.seed, self.noise_scale]

    def launch(self, io) -> None:
        wp.launch(sample_mag, self.worlds, inputs=[*self.clock_inputs(io), *self._args], outputs=[io[self.signal]], device=io.device)
