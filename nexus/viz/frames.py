"""A run's ray-traced sensor frames for ``nexus view`` and ``nexus plot``: found, read once, indexed by time.

A run whose vehicle has a camera, thermal camera or lidar keeps every frame in
``frames/<sensor>.parquet/`` (:mod:`nexus.render.frames`). Here each folder
becomes a :class:`SensorStream`: its kind, the picture it gives
(:mod:`nexus.render.preview`'s colour mappings), its mount from the vehicle
file, and per world its frames, read on first use and then kept.

Time rule: at sim time ``t`` a camera or thermal camera shows its last frame
whose time (the tick it shows) is at or before ``t``; a lidar shows its last
*whole* sweep, the last one whose final column was taken at or before ``t``.

A lidar's points are in the sensor frame (FLU at the mount, each column at its
own time). In the world (ENU) a point ``p`` of a column taken at time ``s``
is ``x(s) + R(s) · (mount + p)``, with the body's recorded pose ``x``, ``R`` at
``s`` (linear in position, normalised linear in the quaternion between the
two record rows around ``s``; the first row before the record starts).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pxr import Usd, UsdPhysics

from nexus import schemas
from nexus.plant.frames import quat_rotate_np
from nexus.render.frames import sensor_file
from nexus.render.preview import (
    Scale,
    frame_layout,
    frame_rate,
    image_channel,
    inferno,
    nice_ceiling,
    read_world_frames,
    scale_for,
    sensor_kind,
)

#: The run folder's frame folder (``nexus run`` writes it; nexus.runtime.run.FRAMES).
FRAMES = "frames"
#: The part of the inferno map a lidar's ranges span, 0 m to the run's range scale (its black end would vanish
#: against the viewer's shadows).
RANGE_COLOURS = (0.25, 1.0)


@dataclass
class SensorPrim:
    """What the vehicle file says of a render sensor prim: where it sits and how it looks."""

    mount: tuple[float, float, float] = (0.0, 0.0, 0.0)
    tilt: float = 0.0
    #: The label of the rigid body it sits on (``base``), or None when the file does not say.
    body: str | None = None
    rate: float | None = None
    #: False when the vehicle file is gone or lacks the prim (the mount is then taken as zero).
    known: bool = False


@dataclass
class SensorStream:
    """One ray-traced sensor's frames (``frames/<sensor>.parquet``), read per world on first use."""

    #: The sensor prim's path (``/vehicle/body/base/Camera``).
    name: str
    folder: Path
    #: ``camera``, ``thermal`` or ``lidar``.
    kind: str
    #: Array name -> {"shape", "dtype"}, from the folder's metadata.
    layout: dict
    prim: SensorPrim = field(default_factory=SensorPrim)
    _worlds: dict = field(default_factory=dict, repr=False)
    _scales: dict = field(default_factory=dict, repr=False)

    @property
    def short(self) -> str:
        """The prim's last path element (``Camera``)."""
        return self.name.rstrip("/").rsplit("/", 1)[-1]

    @property
    def channels(self) -> list[str]:
        """The arrays a picture can show, the preferred first (``color``, ``depth``...; ``temperature``)."""
        if self.kind == "thermal":
            return ["temperature"]
        if self.kind == "lidar":
            return []
        first = image_channel(self.layout)
        return [first, *(c for c in ("color", "depth", "segmentation", "normal") if c in self.layout and c != first)]

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) [px] of a camera's or thermal camera's image; (columns·channels, 1) of a lidar."""
        shape = self.layout[self.channels[0]]["shape"] if self.channels else [1, self.layout["range"]["shape"][0]]
        return int(shape[1]), int(shape[0])

    def frames(self, world: int = 0) -> dict:
        """World ``world``'s frames (``tick``, ``time`` and every array), in time order; read once, then kept.

        A lidar's also get ``end``: each sweep's last column's time [s].
        """
        if world not in self._worlds:
            frames = read_world_frames(self.folder, world)
            if self.kind == "lidar":
                frames["end"] = frames["times"].max(axis=1) if len(frames["time"]) else frames["time"]
            self._worlds[world] = frames
        return self._worlds[world]

    def count(self, world: int = 0) -> int:
        return len(self.frames(world)["time"])

    def index_at(self, time: float, world: int = 0) -> int:
        """The frame shown at sim time ``time`` [s]: the last at or before it (a lidar: the last whole sweep);
        -1 before the first."""
        frames = self.frames(world)
        times = frames["end"] if self.kind == "lidar" else frames["time"]
        return int(np.searchsorted(times, float(time) + 1e-9, side="right")) - 1

    def scale(self, channel: str, world: int = 0) -> Scale:
        """The fixed colour mapping of ``channel`` over this world's whole run (:func:`scale_for`)."""
        key = (channel, world)
        if key not in self._scales:
            frames = self.frames(world)
            if channel == "range":
                valid = frames["range"][frames["valid"]]
                top = float(np.percentile(valid, 95.0)) if valid.size else 1.0
                self._scales[key] = Scale("range", 0.0, nice_ceiling(top), "m")
            else:
                self._scales[key] = scale_for(channel, frames[channel])
        return self._scales[key]

    def rate(self, world: int = 0) -> float:
        return frame_rate(self.frames(world)["time"])


def find_streams(folder: Path, info: dict, notes: list[str] | None = None) -> list[SensorStream]:
    """Every sensor frame folder of the run in ``folder`` (run.json's order), with its prim from the vehicle file.

    Empty when the run kept no frames (no ray-traced sensor, or it ended before writing one). A folder whose
    parts cannot be read is left out, with a line in ``notes``.
    """

    frames_folder = Path(folder) / FRAMES
    if not frames_folder.is_dir():
        return []
    folders = {p.name: p for p in sorted(frames_folder.iterdir())
               if p.is_dir() and p.suffix == ".parquet" and any(p.glob("part-*.parquet"))}
    if not folders:
        return []
    names = {sensor_file(name): name for name in (info.get("render") or {}).get("sensors", [])}
    ordered = [f for f in names if f in folders] + [f for f in folders if f not in names]
    prims = sensor_prims(Path((info.get("vehicle") or {}).get("path", "")),
                         [names.get(f, "/" + f.removesuffix(".parquet").replace(".", "/")) for f in ordered])
    streams = []
    for file in ordered:
        name = names.get(file, "/" + file.removesuffix(".parquet").replace(".", "/"))
        try:
            layout = frame_layout(folders[file])
        except Exception as error:  # pyarrow raises several types for a damaged file
            if notes is not None:
                notes.append(f"{folders[file]}: not readable frames ({error}); not shown")
            continue
        streams.append(SensorStream(name, folders[file], sensor_kind(layout), layout, prims.get(name, SensorPrim())))
    return streams


def sensor_prims(vehicle: Path, names: list[str]) -> dict[str, SensorPrim]:
    """The mount, tilt, body and rate of each named sensor prim of the vehicle file (read with ``pxr`` alone).

    A file that is gone or a prim it lacks gives no entry (the mount is then taken as zero).
    """
    if not names or not vehicle.is_file():
        return {}


    schemas.register()
    stage = Usd.Stage.Open(str(vehicle))
    if stage is None:
        return {}
    found = {}
    for name in names:
        prim = stage.GetPrimAtPath(name)
        if not prim or not prim.IsValid():
            continue
        body, parent = None, prim.GetParent()
        while parent and parent.GetPath().pathString != "/":
            if parent.HasAPI(UsdPhysics.RigidBodyAPI):
                body = parent.GetName()
                break
            parent = parent.GetParent()
        found[name] = SensorPrim(tuple(float(x) for x in _value(prim, "nexus:mountOffset", (0.0, 0.0, 0.0))),
                                 float(_value(prim, "nexus:tilt", 0.0)), body,
                                 _float_or_none(_value(prim, "nexus:rate", None)), known=True)
    return found


def _value(prim, name: str, default):
    attribute = prim.GetAttribute(name)
    value = attribute.Get() if attribute else None
    return default if value is None else value


def _float_or_none(value):
    return None if value is None else float(value)


# -- the lidar in the world ----------------------------------------------------------------------


def poses_at(times: np.ndarray, pose_time: np.ndarray, poses: np.ndarray) -> np.ndarray:
    """The body's pose at each of ``times`` [s] from recorded rows (``pose_time`` (rows,), ``poses`` (rows, 7):
    ENU position, (x, y, z, w) quaternion): linear between the rows around each time (the quaternion normalised,
    on the same hemisphere), the first or last row outside them."""
    pose_time = np.asarray(pose_time, dtype=np.float64)
    poses = np.asarray(poses, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64)
    if len(pose_time) == 1:
        return np.broadcast_to(poses[0], (*times.shape, 7)).copy()
    after = np.clip(np.searchsorted(pose_time, times, side="right"), 1, len(pose_time) - 1)
    before = after - 1
    span = pose_time[after] - pose_time[before]
    alpha = np.clip(np.where(span > 0, (times - pose_time[before]) / np.where(span > 0, span, 1.0), 0.0), 0.0, 1.0)
    a, b = poses[before], poses[after]
    position = a[..., :3] + alpha[..., None] * (b[..., :3] - a[..., :3])
    qa, qb = a[..., 3:], b[..., 3:]
    qb = np.where((np.sum(qa * qb, axis=-1) < 0.0)[..., None], -qb, qb)
    q = qa + alpha[..., None] * (qb - qa)
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    return np.concatenate([position, q], axis=-1)


def lidar_world_points(points: np.ndarray, times: np.ndarray, mount, pose_time: np.ndarray,
                       poses: np.ndarray) -> np.ndarray:
    """A sweep's points (n, 3) [m, sensor frame FLU], each taken at ``times`` (n,) [s], in the world (ENU) [m].

    ``mount`` is the sensor's ``nexus:mountOffset`` on its body (FLU [m]); ``pose_time``, ``poses`` the body's
    recorded rows (see :func:`poses_at`). A point p lands at x(s) + R(s)·(mount + p).
    """
    pose = poses_at(times, pose_time, poses)
    local = np.asarray(points, dtype=np.float64) + np.asarray(mount, dtype=np.float64)
    return pose[..., :3] + quat_rotate_np(pose[..., 3:], local)


def sweep_in_world(stream: SensorStream, index: int, pose_time: np.ndarray, poses: np.ndarray,
                   world: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Sweep ``index``'s valid points in the world (m, 3) [m ENU] and their ranges (m,) [m]."""
    frames = stream.frames(world)
    valid = frames["valid"][index]
    world_points = lidar_world_points(frames["points"][index][valid], frames["times"][index][valid],
                                      stream.prim.mount, pose_time, poses)
    return world_points, frames["range"][index][valid]


def range_colours(ranges: np.ndarray, top: float) -> np.ndarray:
    """Lidar ranges [m] as uint8 RGB: inferno over RANGE_COLOURS, purple at 0 m to pale yellow at ``top`` and beyond."""
    low, high = RANGE_COLOURS
    return inferno(low + (high - low) * np.clip(np.asarray(ranges, dtype=np.float64) / top, 0.0, 1.0))
