"""An MP4 preview plays at the camera's declared rate, which its frame folder keeps (issue 43, point 3).

Frames are taken on 250 Hz ticks: a 30 Hz camera's frame k on tick ceil(k * 250 / 30). A run whose last
frame is frame 89 has it on tick ceil(741.67) = 742, 2.968 s after the first: the frames' mean spacing
gives 89 / 2.968 = 29.99 fps, where the camera's rate is 30. The frame folder now keeps the rate the
sensor declared (``nexus.rate_hz``; every tick's rate when the sensor is faster than the tick), and the
preview plays at it.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from nexus.render.frames import FrameWriter
from nexus.render.preview import write_preview

TICK_HZ = 250
SENSORS = str(Path(__file__).parents[1] / "data" / "astro_max_sensors.usda")


def camera_frames(folder: Path, rate_hz: float | None) -> int:
    """Frames 0..89 of a 30 Hz 16x12 camera on 250 Hz ticks (the folder keeps ``rate_hz``); returns 90."""
    writer = FrameWriter(folder, worlds=1, rate_hz=rate_hz)
    for k in range(90):
        tick = math.ceil(k * TICK_HZ / 30.0 - 1e-9)
        writer.add(tick, tick / TICK_HZ, {"color": np.full((1, 12, 16, 4), 2 * k, dtype=np.uint8)})
    writer.close()
    return 90


def fps_of(path: Path) -> tuple[float, int]:
    imageio = pytest.importorskip("imageio.v2")
    reader = imageio.get_reader(path)
    try:
        return reader.get_meta_data()["fps"], reader.count_frames()
    finally:
        reader.close()


def test_a_30_hz_cameras_preview_plays_at_30_not_its_mean_spacing(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    declared, spaced = tmp_path / "declared.parquet", tmp_path / "spaced.parquet"
    camera_frames(declared, 30.0)
    camera_frames(spaced, None)  # a frame folder written before the rate was kept: the mean spacing
    assert write_preview(declared, tmp_path / "declared.mp4") is not None
    assert write_preview(spaced, tmp_path / "spaced.mp4") is not None
    fps, frames = fps_of(tmp_path / "declared.mp4")
    assert frames == 90 and fps == pytest.approx(30.0, abs=1e-6)
    fps, frames = fps_of(tmp_path / "spaced.mp4")
    assert frames == 90 and fps == pytest.approx(89 / 2.968, abs=0.005)  # 29.99


@pytest.mark.parametrize("tick_hz, rates", [
    (250.0, {"Camera": 25.0, "Thermal": 25.0, "Lidar": 10.0}),  # the vehicle file's nexus:rate
    (20.0, {"Camera": 20.0, "Thermal": 20.0, "Lidar": 10.0}),  # 25 Hz is faster than a 20 Hz tick: every tick
])
def test_each_render_sensor_hands_its_rate_to_its_frame_folder(tmp_path, tick_hz, rates):
    import pyarrow.parquet as pq

    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig

    flight = build_flight(RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="inline",
                                    tick_hz=tick_hz), "cpu", start_render=False)
    try:
        hub = flight.render
        assert {name.rsplit("/", 1)[-1]: rate for name, rate in hub.rates.items()} == rates
        hub.record_to(tmp_path)
        for name, writer in hub.writers.items():
            writer.add(0, 0.0, {"x": np.zeros((1, 2), dtype=np.float32)})
            writer.close()
            kept = pq.read_schema(next(writer.path.glob("part-*.parquet"))).metadata[b"nexus.rate_hz"]
            assert float(kept) == rates[name.rsplit("/", 1)[-1]]
    finally:
        flight.loop.close()
