"""A thermal camera: a temperature image [K] from each prim's ``nexus:temperature``, ray-traced by Newton.

A pixel reads the temperature of the prim its ray hits: the prim's own
``nexus:temperature`` [K], or its nearest ancestor's, or
``nexus:ambientTemperature`` when none has one; a ray that hits nothing reads
``nexus:skyTemperature``. Noise: Gaussian, 1 sigma the noise equivalent
temperature difference ``nexus:netd`` [K], per pixel, drawn per world and
frame from the run's random tree. Geometry, rate and latency as the camera's
(:mod:`nexus.sensors.camera`); the frame is an ``Image`` with one array,
``temperature`` (worlds, height, width) [K], on the host signal ``thermal_camera``.
"""

from __future__ import annotations

import numpy as np

from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec, non_negative, positive
from nexus.render.request import ViewSpec
from nexus.render.views import vertical_fov
from nexus.sensors.camera import Image, image_size
from nexus.sensors.render_sensor import LATENCY, TILT, RenderSensor, image_params
from nexus.sensors.sensor import SENSOR, sensor_rate

THERMAL_SPEC = Spec(
    name="ThermalCamera",
    schema="NexusThermalCameraAPI",
    bases=(SENSOR,),
    doc="A thermal camera ray-traced by Newton: each pixel the temperature [K] of the prim it sees "
        "(nexus:temperature on the scene's and vehicle's prims), with NETD noise.",
    params=(
        sensor_rate(9.0),
        LATENCY,
        *image_params(80, 60, 0.9),
        TILT,
        positive("ambient", "nexus:ambientTemperature", 293.15, "K", "Temperature of prims that declare none"),
        positive("sky", "nexus:skyTemperature", 230.0, "K", "What a ray that hits nothing reads"),
        non_negative("netd", "nexus:netd", 0.05, "K", "Noise equivalent temperature difference, 1 sigma"),
    ),
    outputs=(Output("thermal_camera", Image, doc="The latest temperature image [K] (Image)"),),
    stage="thermal",
    host=True,
)


class ThermalCamera(RenderSensor):
    """Writes ``thermal_camera`` (an :class:`~nexus.sensors.camera.Image` with ``temperature`` [K])."""

    spec = THERMAL_SPEC

    def __init__(self, name: str, **params):
        super().__init__(name, **params)
        v = self.values
        width, height, horizontal_fov, tilt = v["width"], v["height"], v["horizontal_fov"], v["tilt"]
        ambient, sky, netd = v["ambient"], v["sky"], v["netd"]
        image_size(name, width, height, horizontal_fov, "thermal")
        for attr, value in (("nexus:ambientTemperature", ambient), ("nexus:skyTemperature", sky)):
            if not value > 0.0:
                raise BuildError(f"sensor prim {name}: {attr} is {value} K; a temperature is above 0 K")
        self.width, self.height, self.horizontal_fov = int(width), int(height), float(horizontal_fov)
        self.tilt, self.ambient, self.sky, self.netd = float(tilt), float(ambient), float(sky), float(netd)

    def view_spec(self) -> ViewSpec:
        return ViewSpec(self.name, "thermal", self.width, self.height,
                        vertical_fov(self.horizontal_fov, self.width, self.height), self.body_index,
                        tuple(float(x) for x in self.mount), (), self.tilt, self.ambient, self.sky)

    def finish(self, frame: dict, due_tick: int, shows_s: float, extra=None) -> Image:
        if self.noise and self.netd > 0.0:
            temperature = frame["temperature"]
            for world in range(temperature.shape[0]):
                sigma = np.float32(self.netd * self.world_noise_scale[world])
                temperature[world] += self.rng(world, self.frames).standard_normal(
                    temperature[world].shape, dtype=np.float32) * sigma
        return Image(shows_s, due_tick, frame)
