"""A run's camera frames as Foxglove ``foxglove.RawImage`` messages (JSON), one channel per sensor, array and world.

A run with a ray-traced camera or thermal camera keeps every frame losslessly
in ``frames/<sensor>.parquet/`` (:mod:`nexus.render.frames`). Each image
array exports as it is, without a colour mapping, so nothing is lost:
``color`` as ``rgba8`` (``rgb8`` with three channels), ``depth`` [m] and
``temperature`` [K] as ``32FC1`` (Foxglove's Image panel colours a float
image itself). A message's log time is the sim time of the tick the frame
shows. Arrays Foxglove has no raw encoding for (a camera's ``segmentation``
and ``normal``, a lidar's sweeps) are left out, each with a note.

Frames are read one part file at a time (32 frames), so an export of a long
run holds a few frames in memory, not the run's.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nexus.render.frames import sensor_file
from nexus.render.preview import frame_layout, sensor_kind

#: The run folder's frame folder (``nexus run`` writes it).
FRAMES = "frames"
#: Foxglove's schema name for a raw image (its JSON encoding: bytes as base64 text).
RAW_IMAGE = "foxglove.RawImage"


def raw_image_schema() -> dict:
    """The JSON Schema of ``foxglove.RawImage``, as Foxglove documents the message's fields."""
    return {
        "title": RAW_IMAGE,
        "description": "A raw image",
        "type": "object",
        "properties": {
            "timestamp": {"type": "object", "title": "time", "description": "Sim time of the tick the frame shows",
                          "properties": {"sec": {"type": "integer", "minimum": 0},
                                         "nsec": {"type": "integer", "minimum": 0, "maximum": 999999999}}},
            "frame_id": {"type": "string", "description": "The sensor: world and prim name"},
            "width": {"type": "integer", "minimum": 0, "description": "Image width [px]"},
            "height": {"type": "integer", "minimum": 0, "description": "Image height [px]"},
            "encoding": {"type": "string", "description": "rgba8, rgb8, or 32FC1 (depth [m], temperature [K])"},
            "step": {"type": "integer", "minimum": 0, "description": "Bytes of one image row"},
            "data": {"type": "string", "contentEncoding": "base64", "description": "The pixels, row by row"},
        },
    }


@dataclass
class FrameArray:
    """One image array of one sensor's frame folder that exports: its name, encoding and image size."""

    name: str
    encoding: str
    width: int
    height: int
    #: Bytes per pixel.
    pixel: int


@dataclass
class FrameStream:
    """One sensor's frame folder and the arrays of it that export."""

    #: The sensor prim's path (``/vehicle/body/base/Camera``).
    prim: str
    folder: Path
    arrays: list[FrameArray]

    def topic(self, world: int, array: str, vehicle: int | None = None) -> str:
        """``/world0/vehicle/body/base/Camera/color``; a fleet's ``/world0/vehicle1/vehicle/body/base/Camera/color``."""
        place = f"/world{world}" + ("" if vehicle is None else f"/vehicle{vehicle}")
        return f"{place}/{self.prim.strip('/')}/{array}"

    def messages(self, slots: list[int], places: dict[int, str] | None = None):
        """(log time [ns], slot, array name, JSON bytes) of every frame of ``slots``, in time order, read a part at
        a time. A frame file's ``world`` column counts slots (a fleet's vehicle ``k`` of world ``w`` is slot
        ``w·K + k``); ``places`` names each slot in the frame id (default ``world<slot>``)."""
        short = self.prim.rstrip("/").rsplit("/", 1)[-1]
        for part in sorted(self.folder.glob("part-*.parquet")):
            table = pq.read_table(part, columns=["time", "world", *(a.name for a in self.arrays)])
            table = table.filter(pc.is_in(table.column("world"), value_set=_int32(slots)))
            times, world_of = table.column("time").to_numpy(), table.column("world").to_numpy()
            order = np.argsort(times, kind="stable")
            blobs = {a.name: table.column(a.name) for a in self.arrays}
            for row in order:
                time_ns = int(np.rint(times[row] * 1e9))
                world = int(world_of[row])
                place = places[world] if places is not None else f"world{world}"
                for array in self.arrays:
                    data = blobs[array.name][int(row)].as_py()
                    message = {"timestamp": {"sec": time_ns // 1_000_000_000, "nsec": time_ns % 1_000_000_000},
                               "frame_id": f"{place}/{short}", "width": array.width, "height": array.height,
                               "encoding": array.encoding, "step": array.width * array.pixel,
                               "data": base64.b64encode(data).decode("ascii")}
                    yield time_ns, world, array.name, json.dumps(message, separators=(",", ":")).encode()


def _int32(values):
    return pa.array(values, pa.int32())


def frame_streams(run: Path, info: dict, notes: list[str]) -> list[FrameStream]:
    """The run's frame folders (run.json's order) with the arrays of each that export; ``notes`` gets a line for
    each array or folder left out."""
    folder = Path(run) / FRAMES
    if not folder.is_dir():
        return []
    found = {p.name: p for p in sorted(folder.iterdir())
             if p.is_dir() and p.suffix == ".parquet" and any(p.glob("part-*.parquet"))}
    names = {sensor_file(name): name for name in (info.get("render") or {}).get("sensors", [])}
    ordered = [f for f in names if f in found] + [f for f in found if f not in names]
    streams = []
    for file in ordered:
        prim = names.get(file, "/" + file.removesuffix(".parquet").replace(".", "/"))
        try:
            layout = frame_layout(found[file])
        except Exception as error:  # noqa: BLE001 (pyarrow raises several types for a damaged part)
            notes.append(f"{found[file]}: not readable frames ({error}); left out")
            continue
        if sensor_kind(layout) == "lidar":
            notes.append(f"{prim}: a lidar's sweeps have no Foxglove raw image; left out (they stay in the run's "
                         "frames folder; `nexus view` draws them)")
            continue
        arrays = []
        for name, spec in layout.items():
            array = _exported(name, tuple(spec["shape"]), np.dtype(spec["dtype"]))
            if array is None:
                notes.append(f"{prim}: array '{name}' {tuple(spec['shape'])} {spec['dtype']} has no Foxglove raw "
                             "image encoding; left out (it stays in the run's frames folder)")
            else:
                arrays.append(array)
        if arrays:
            streams.append(FrameStream(prim, found[file], arrays))
    return streams


def _exported(name: str, shape: tuple, dtype: np.dtype) -> FrameArray | None:
    if name == "color" and dtype == np.uint8 and len(shape) == 3 and shape[2] in (3, 4):
        return FrameArray(name, "rgba8" if shape[2] == 4 else "rgb8", shape[1], shape[0], shape[2])
    if name in ("depth", "temperature") and dtype == np.float32 and len(shape) == 2:
        return FrameArray(name, "32FC1", shape[1], shape[0], 4)
    return None
