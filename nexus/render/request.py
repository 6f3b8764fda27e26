"""What a render sensor asks the renderer for: one frozen description per sensor, picklable.

The same :class:`ViewSpec` goes to a peer process or to an in-process
renderer, so both render exactly the same rays from exactly the same poses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: What each kind of render sensor can return.
CAMERA_CHANNELS = ("color", "depth", "normal", "segmentation")
KINDS = ("camera", "thermal", "lidar")


@dataclass(frozen=True)
class ViewSpec:
    """One render sensor's fixed geometry.

    ``width`` x ``height`` pixels (lidar: columns x channels); ``fov`` the vertical field of view
    [rad] (lidar: the channels' vertical spread); ``body`` world 0's index of the body it sits on;
    ``offset`` its mount on that body, FLU [m]; ``tilt`` a camera's downward tilt [rad].
    A thermal camera's prims without ``nexus:temperature`` read ``ambient`` [K], and rays that hit
    nothing ``sky`` [K].
    """

    name: str
    kind: str
    width: int
    height: int
    fov: float
    body: int
    offset: tuple[float, float, float]
    channels: tuple[str, ...] = ()
    tilt: float = 0.0
    ambient: float = 293.15
    sky: float = 230.0

    @property
    def outputs(self) -> tuple[str, ...]:
        """The arrays a render of this sensor returns, by name."""
        if self.kind == "camera":
            return self.channels
        return ("temperature",) if self.kind == "thermal" else ("range",)


def output_layout(spec: ViewSpec, worlds: int) -> dict[str, tuple[tuple[int, ...], str]]:
    """Name -> (shape, NumPy dtype) of each array one render of ``spec`` returns, for ``worlds`` worlds."""
    h, w = spec.height, spec.width
    shapes = {
        "color": ((worlds, h, w, 4), "uint8"),
        "depth": ((worlds, h, w), "float32"),
        "normal": ((worlds, h, w, 3), "float32"),
        "segmentation": ((worlds, h, w), "uint32"),
        "temperature": ((worlds, h, w), "float32"),
        "range": ((worlds, h, w), "float32"),
    }
    return {name: shapes[name] for name in spec.outputs}


def frame_bytes(spec: ViewSpec, worlds: int) -> int:
    """Bytes of one frame of every output of ``spec``."""

    return sum(int(np.prod(shape)) * np.dtype(dtype).itemsize for shape, dtype in output_layout(spec, worlds).values())
