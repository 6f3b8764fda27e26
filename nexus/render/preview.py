"""MP4 previews of the ray-traced cameras: ``frames/<sensor>.mp4`` beside each camera's frame folder.

The Parquet frame folders (:mod:`nexus.render.frames`) are the lossless record;
an MP4 is only a quick look, encoded lossily (H.264) from world 0's frames:

* a camera with ``color``: its RGB (the alpha channel dropped);
* a camera without color: ``depth`` in grey, white at 0 m to black at the
  run's *depth scale* ``D`` and beyond; a pixel that hit nothing is black.
  ``D`` is the 95th percentile of world 0's valid depths over the whole run,
  rounded up to 1, 2 or 5 times a power of ten, so one grey means one
  depth in every frame;
* a camera with neither: ``segmentation`` (one fixed colour per label id,
  sky black) or ``normal`` (x, y, z mapped from -1..1 to 0..255);
* a thermal camera: ``temperature`` through the inferno colour map (black,
  purple, red, orange, pale yellow) from the lowest to the highest
  temperature world 0 read over the whole run, fixed for the whole video.

The mapping each preview used is in its MP4's ``comment`` metadata
(``ffprobe -show_format FILE``) and in the run's log. Images are scaled up by
a whole factor (nearest pixel) to at least :data:`MIN_WIDTH` pixels wide and
padded to an even size (H.264 needs one); the frame rate is the sensor's
declared rate, kept in its frame folder (a folder written without it: its
frames' mean spacing), so a video plays as long as the flight it shows. A lidar gets no video (``nexus view`` draws its
sweeps). The same colour mappings serve ``nexus view`` and ``nexus plot``.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from nexus.core.lazy import load_module

log = logging.getLogger(__name__)

#: A preview is at least this many pixels wide (small sensors are scaled up by a whole factor).
MIN_WIDTH = 320
#: imageio's quality (0..10) for the H.264 previews.
QUALITY = 8
#: The inferno colour map at five evenly spaced stops (matplotlib's values, RGB 0..255), linearly interpolated.
INFERNO = np.array([[0, 0, 4], [87, 16, 110], [188, 55, 84], [249, 142, 9], [252, 255, 164]], dtype=np.float64)
#: A segmentation pixel that hit nothing.
NO_LABEL = 0xFFFFFFFF
#: A camera's channels in the order a single picture of it prefers them.
CAMERA_CHANNELS = ("color", "depth", "segmentation", "normal")


# -- reading ----------------------------------------------------------------------------------------


def sensor_kind(arrays) -> str:
    """``camera``, ``thermal`` or ``lidar``, from the arrays a frame folder holds (names or a dict)."""
    names = set(arrays)
    if "points" in names or "range" in names:
        return "lidar"
    if "temperature" in names:
        return "thermal"
    return "camera"


def image_channel(arrays) -> str | None:
    """The array one picture of a camera or thermal frame shows (``color``, ``depth``..., ``temperature``)."""
    names = set(arrays)
    if "temperature" in names:
        return "temperature"
    return next((name for name in CAMERA_CHANNELS if name in names), None)


def frame_layout(folder: Path) -> dict[str, dict]:
    """Each array's shape and dtype, from the first part's schema metadata: name -> {"shape", "dtype"}."""

    parts = _parts(folder)
    return json.loads(pq.read_schema(parts[0]).metadata[b"nexus.arrays"])


def read_world_frames(folder: str | Path, world: int = 0, arrays: tuple[str, ...] | None = None) -> dict:
    """One world's frames from a frame folder, in time order: ``tick``, ``time`` and each array, stacked.

    As :func:`nexus.render.frames.read_frames`, but only world ``world``'s rows (Parquet row filter) and only
    ``arrays`` (default: all), so a run of many worlds is read one world at a time.
    """

    folder = Path(folder)
    parts = _parts(folder)
    meta = frame_layout(folder)
    names = [name for name in meta if arrays is None or name in arrays]
    tables = [pq.read_table(p, columns=["tick", "time", "world", *names], filters=[("world", "=", int(world))])
              for p in parts]
    table = pa.concat_tables(tables)
    order = np.argsort(table["time"].to_numpy(), kind="stable")
    out = {"tick": table["tick"].to_numpy()[order], "time": table["time"].to_numpy()[order]}
    for name in names:
        info = meta[name]
        raw = b"".join(table[name].to_pylist())
        out[name] = np.frombuffer(raw, dtype=info["dtype"]).reshape(-1, *info["shape"])[order]
    return out


def _parts(folder: Path) -> list[Path]:
    parts = sorted(Path(folder).glob("part-*.parquet"))
    if not parts:
        raise FileNotFoundError(f"{folder}: no frame parts (part-*.parquet) found")
    return parts


def declared_rate(folder: Path) -> float | None:
    """The sensor's declared frame rate [Hz] its frame folder keeps (``nexus.rate_hz``), or None."""

    value = (pq.read_schema(_parts(folder)[0]).metadata or {}).get(b"nexus.rate_hz")
    return float(value) if value is not None else None


def frame_rate(times: np.ndarray) -> float:
    """A sensor's frame rate [Hz] from its frames' times [s]: frames less one over the time from first to last
    (1 Hz for a single frame). Frames are taken on ticks, so a 30 Hz camera on a 250 Hz tick is 8, 8, 9 ticks
    apart: the mean spacing is the sensor's period, the median (32 ms) is not, and a video at 1/median played
    4 % fast."""
    times = np.unique(np.asarray(times, dtype=np.float64))
    span = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    return (len(times) - 1) / span if span > 0.0 else 1.0


# -- colours ----------------------------------------------------------------------------------------


def inferno(values01: np.ndarray) -> np.ndarray:
    """Values in 0..1 (clipped) as inferno colours, uint8 RGB of shape ``values01.shape + (3,)``."""
    v = np.clip(np.nan_to_num(np.asarray(values01, dtype=np.float64), nan=0.0), 0.0, 1.0)
    stops = np.linspace(0.0, 1.0, len(INFERNO))
    rgb = np.stack([np.interp(v, stops, INFERNO[:, c]) for c in range(3)], axis=-1)
    return np.round(rgb).astype(np.uint8)


def nice_ceiling(value: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that is at least ``value`` (> 0)."""
    if not value > 0.0 or not math.isfinite(value):
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1.0, 2.0, 5.0, 10.0):
        if step * power >= value * (1.0 - 1e-12):
            return step * power
    return 10.0 * power


@dataclass(frozen=True)
class Scale:
    """How one array becomes a picture: the channel, the value range (for depth and temperature) and words for it."""

    channel: str
    low: float = 0.0
    high: float = 1.0
    unit: str = ""

    def describe(self) -> str:
        if self.channel == "color":
            return "color: the camera's RGB"
        if self.channel == "depth":
            return (f"depth: grey, white at {self.low:g} m to black at {self.high:g} m and beyond (the 95th "
                    "percentile of the valid depths, rounded up); nothing hit is black")
        if self.channel == "temperature":
            return (f"temperature: inferno colour map from {self.low:.2f} K (black) to {self.high:.2f} K (pale "
                    "yellow), the lowest and highest temperature of the run")
        if self.channel == "segmentation":
            return "segmentation: one fixed colour per label id (run.json's render.labels), nothing hit black"
        return "normal: x, y, z from -1..1 to red, green, blue"


def scale_for(channel: str, stack: np.ndarray) -> Scale:
    """The fixed mapping of ``channel`` for a whole run's frames ``stack`` (frames, H, W[, k])."""
    if channel == "depth":
        valid = stack[stack > 0.0]
        top = float(np.percentile(valid, 95.0)) if valid.size else 1.0
        return Scale("depth", 0.0, nice_ceiling(top), "m")
    if channel == "temperature":
        finite = stack[np.isfinite(stack)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return Scale("temperature", low, high if high > low else low + 1.0, "K")
    return Scale(channel)


def to_rgb(image: np.ndarray, scale: Scale) -> np.ndarray:
    """One frame's array (H, W[, k]) as uint8 RGB (H, W, 3), by ``scale``."""
    channel = scale.channel
    if channel == "color":
        return np.ascontiguousarray(image[..., :3], dtype=np.uint8)
    if channel == "depth":
        depth = np.asarray(image, dtype=np.float64)
        grey = 1.0 - np.clip((depth - scale.low) / (scale.high - scale.low), 0.0, 1.0)
        grey[~(depth > 0.0)] = 0.0
        return np.repeat(np.round(grey * 255.0).astype(np.uint8)[..., None], 3, axis=-1)
    if channel == "temperature":
        return inferno((np.asarray(image, dtype=np.float64) - scale.low) / (scale.high - scale.low))
    if channel == "segmentation":
        return label_colours(image)
    normal = np.nan_to_num(np.asarray(image[..., :3], dtype=np.float64))
    return np.round((np.clip(normal, -1.0, 1.0) + 1.0) * 127.5).astype(np.uint8)


def label_colours(ids: np.ndarray) -> np.ndarray:
    """Segmentation ids as fixed, well-spread colours (a hash of the id); nothing hit (0xFFFFFFFF) black."""
    ids = np.asarray(ids, dtype=np.uint32)
    h = (ids.astype(np.uint64) * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    rgb = np.stack([(h >> np.uint64(s)) & np.uint64(0xFF) for s in (0, 8, 16)], axis=-1).astype(np.uint8)
    rgb = (rgb // 2 + 96).astype(np.uint8)  # neither very dark nor white
    rgb[ids == NO_LABEL] = 0
    return rgb


def upscale(rgb: np.ndarray, min_width: int = MIN_WIDTH, even: bool = True) -> np.ndarray:
    """``rgb`` (H, W, 3) scaled up by the smallest whole factor that makes it ``min_width`` wide (nearest pixel),
    then (``even``) padded by repeating its last row and column to an even height and width."""
    factor = max(1, -(-min_width // rgb.shape[1]))
    if factor > 1:
        rgb = np.repeat(np.repeat(rgb, factor, axis=0), factor, axis=1)
    if even and (rgb.shape[0] % 2 or rgb.shape[1] % 2):
        rgb = np.pad(rgb, ((0, rgb.shape[0] % 2), (0, rgb.shape[1] % 2), (0, 0)), mode="edge")
    return np.ascontiguousarray(rgb)


def preview_factor(width: int, min_width: int = MIN_WIDTH) -> int:
    """The whole factor :func:`upscale` scales an image ``width`` pixels wide by."""
    return max(1, -(-min_width // width))


# -- writing ----------------------------------------------------------------------------------------


def write_preview(folder: Path, out: Path, world: int = 0) -> tuple[Path, Scale] | None:
    """World ``world``'s frames of the camera or thermal camera in ``folder`` as an H.264 MP4 at ``out``.

    Returns the file and the mapping used, or None for a sensor with no picture (a lidar) or no frames of
    that world.
    """
    import imageio.v2 as imageio  # noqa: PLC0415  (reason: imageio loads only to write a preview)

    layout = frame_layout(folder)
    if sensor_kind(layout) == "lidar":
        return None
    channel = image_channel(layout)
    if channel is None:
        return None
    frames = read_world_frames(folder, world, (channel,))
    stack = frames[channel]
    if not len(stack):
        return None
    scale = scale_for(channel, stack)
    fps = declared_rate(folder) or frame_rate(frames["time"])  # the mean spacing: 29.99 for a 30 Hz camera
    partial = out.with_name(out.stem + ".partial.mp4")  # renamed into place whole
    writer = imageio.get_writer(partial, fps=fps, codec="libx264", quality=QUALITY, macro_block_size=1,
                                pixelformat="yuv420p", ffmpeg_log_level="error",
                                output_params=["-metadata", f"comment=nexus preview of {folder.name}, world "
                                               f"{world}, {len(stack)} frames at {fps:.4g} Hz; {scale.describe()}"])
    try:
        for image in stack:
            writer.append_data(upscale(to_rgb(image, scale)))
    finally:
        writer.close()
    partial.replace(out)
    return out, scale


def encoder_missing() -> str | None:
    """Why MP4 previews cannot be written here (imageio or imageio-ffmpeg cannot be imported), or None."""
    for module, package in (("imageio", "imageio"), ("imageio_ffmpeg", "imageio-ffmpeg")):
        try:
            load_module(module)
        except ImportError:
            return f"{package} is not installed (pip install {package})"
    return None


def write_previews(frames_folder: Path) -> list[Path]:
    """``frames/<sensor>.mp4`` for each camera and thermal camera folder in ``frames_folder``: the files written.

    A sensor whose preview fails is logged and skipped; the frame folders are only read. Without imageio or
    imageio-ffmpeg (the GPU machine gets no imageio-ffmpeg: docs/benchmarking.md, "The GPU check") no preview
    is written and one line says so.
    """
    frames_folder = Path(frames_folder)
    written: list[Path] = []
    if not frames_folder.is_dir():
        return written
    folders = [p for p in sorted(frames_folder.iterdir())
               if p.is_dir() and p.suffix == ".parquet" and any(p.glob("part-*.parquet"))]
    why = encoder_missing() if folders else None
    if why is not None:
        log.warning("MP4 previews skipped: %s; the frames in %s are the record (nexus view shows them)",
                    why, frames_folder)
        return written
    for folder in folders:
        out = folder.with_suffix(".mp4")
        try:
            made = write_preview(folder, out)
        except Exception as error:  # a preview is never worth a run: say so, keep going
            log.warning("could not write the preview %s: %s", out, error)
            for stale in (out.with_name(out.stem + ".partial.mp4"),):
                stale.unlink(missing_ok=True)
            continue
        if made is not None:
            log.info("preview %s (%s)", made[0], made[1].describe())
            written.append(made[0])
    return written
