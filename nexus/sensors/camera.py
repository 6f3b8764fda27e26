"""A pinhole camera: color, depth, normals and segmentation, ray-traced by Newton on its own frame rate.

The camera sits on its body at ``nexus:mountOffset`` (FLU) and looks along the
body's +x, tilted down by ``nexus:tilt`` [rad]; its image is ``width`` x
``height`` pixels over a horizontal field of view ``nexus:horizontalFov``
[rad] (square pixels). Channels (``nexus:channels``, comma-separated): any of
``color`` (RGBA, 8 bits each), ``depth`` (forward depth [m], 0 where nothing
is hit), ``normal`` (world-frame unit normals) and ``segmentation`` (one id per
prim, the index into the run's label list; 0xFFFFFFFF for sky).

Depth noise model: each valid depth ``d`` gets Gaussian noise of 1 sigma
``depthNoise · d`` (range-proportional), and drops out (reads 0) with
probability ``depthDropout``; both drawn per world and frame from the run's
random tree. The frame is an :class:`Image` host signal (``camera``), written
``latency`` frames after the tick it shows (:mod:`nexus.sensors.render_sensor`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from nexus.core.errors import BuildError
from nexus.core.spec import Output, Param, Spec, non_negative
from nexus.render.request import CAMERA_CHANNELS, ViewSpec
from nexus.render.views import vertical_fov
from nexus.sensors.render_sensor import LATENCY, TILT, RenderSensor, image_params
from nexus.sensors.sensor import SENSOR, sensor_rate


@dataclass(frozen=True)
class Image:
    """One frame of every world: ``arrays`` name -> (worlds, height, width[, k]); ``time`` [s] it shows."""

    time: float
    tick: int
    arrays: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]


def image_size(name: str, width, height, fov, what: str = "camera") -> None:
    """One-line errors for a bad image size or field of view."""
    for attr, value in (("nexus:width", width), ("nexus:height", height)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise BuildError(f"sensor prim {name}: {attr} is {value}; a {what} image needs a whole number of "
                             "pixels, 1 or more")
    if not 0.0 < fov < np.pi:
        raise BuildError(f"sensor prim {name}: nexus:horizontalFov is {fov} rad; it must lie in (0, pi)")


CAMERA_SPEC = Spec(
    name="Camera",
    schema="NexusCameraAPI",
    bases=(SENSOR,),
    doc="A pinhole camera ray-traced by Newton: color, depth, normals and segmentation at its own frame rate, "
        "written latency frames after the tick each frame shows.",
    params=(
        sensor_rate(30.0),
        LATENCY,
        *image_params(160, 120, 1.5708),
        Param("channels", "nexus:channels", "string", "color,depth", "-",
              "Comma-separated channels among color, depth, normal, segmentation"),
        TILT,
        non_negative("depth_noise", "nexus:depthNoise", 0.001, "-", "Depth noise, 1 sigma, as a fraction of the depth"),
        Param("depth_dropout", "nexus:depthDropout", "float", 0.0, "-", "Probability a depth pixel reads 0",
              low=0.0, high=1.0),
    ),
    outputs=(Output("camera", Image, doc="The latest frame (Image), latency frames after the tick it shows"),),
    stage="camera",
    host=True,
)


def parse_channels(name: str, text: str, allowed=CAMERA_CHANNELS) -> tuple[str, ...]:
    channels = tuple(part.strip() for part in str(text).split(",") if part.strip())
    if not channels:
        raise BuildError(f"sensor prim {name}: nexus:channels is empty; name at least one of {', '.join(allowed)}")
    unknown = [c for c in channels if c not in allowed]
    if unknown:
        raise BuildError(f"sensor prim {name}: nexus:channels names {', '.join(unknown)}; choose among "
                         f"{', '.join(allowed)}")
    return tuple(dict.fromkeys(channels))


class Camera(RenderSensor):
    """Writes ``camera`` (:class:`Image`)."""

    spec = CAMERA_SPEC

    def __init__(self, name: str, **params):
        super().__init__(name, **params)
        v = self.values
        width, height, horizontal_fov, channels = v["width"], v["height"], v["horizontal_fov"], v["channels"]
        tilt, depth_noise, depth_dropout = v["tilt"], v["depth_noise"], v["depth_dropout"]
        image_size(name, width, height, horizontal_fov)
        self.width, self.height, self.horizontal_fov = int(width), int(height), float(horizontal_fov)
        self.channels = parse_channels(name, channels)
        self.tilt, self.depth_noise, self.depth_dropout = float(tilt), float(depth_noise), float(depth_dropout)

    def view_spec(self) -> ViewSpec:
        return ViewSpec(self.name, "camera", self.width, self.height,
                        vertical_fov(self.horizontal_fov, self.width, self.height), self.body_index,
                        tuple(float(x) for x in self.mount), self.channels, self.tilt)

    def finish(self, frame: dict, due_tick: int, shows_s: float, extra=None) -> Image:
        if "depth" in frame and self.noise and (self.depth_noise > 0.0 or self.depth_dropout > 0.0):
            depth = frame["depth"]
            for world in range(depth.shape[0]):
                rng = self.rng(world, self.frames)
                valid = depth[world] > 0.0
                scale = self.depth_noise * self.world_noise_scale[world]
                noisy = depth[world] + rng.standard_normal(depth[world].shape, dtype=np.float32) * (
                    np.float32(scale) * depth[world])
                if self.depth_dropout > 0.0:
                    valid &= rng.random(depth[world].shape, dtype=np.float32) >= self.depth_dropout
                depth[world] = np.where(valid, np.maximum(noisy, np.float32(0.0)), np.float32(0.0))
        return Image(shows_s, due_tick, frame)
