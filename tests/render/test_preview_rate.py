"""An MP4 preview plays at its sensor's rate, so it lasts as long as the flight it shows.

Frames are taken on control ticks (250 Hz, 4 ms): a sensor of rate f takes frame k
on the first tick at or after k / f. A 30 Hz camera's frames are then 8, 8, 9 ticks
apart (32, 32, 36 ms), a 9 Hz thermal camera's 28, 28, 28, 28, 27, ... ticks; the
median spacing (32 ms, 112 ms) gave videos at 31.25 and 8.93 frames per second.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.render.frames import FrameWriter
from nexus.render.preview import write_preview

TICK_HZ = 250


def frames_at(folder, rate_hz: float, seconds: float, array: str, dtype) -> int:
    """Frames of a 16x12 sensor taken at ``rate_hz`` on 250 Hz ticks for ``seconds``; returns how many."""
    writer = FrameWriter(folder, worlds=1)
    count = int(round(seconds * rate_hz)) + 1  # frames at 0, 1/f, ..., seconds
    for k in range(count):
        tick = math.ceil(k * TICK_HZ / rate_hz - 1e-9)
        image = np.full((1, 12, 16, 4) if array == "color" else (1, 12, 16), 10 * k % 250, dtype=dtype)
        writer.add(tick, tick / TICK_HZ, {array: image})
    writer.close()
    return count


@pytest.mark.parametrize("rate_hz, seconds, array, dtype", [
    (30.0, 3.0, "color", np.uint8),  # 91 frames, the last on tick 750 (3.000 s): 90 / 3 s = 30 fps
    (9.0, 3.0, "temperature", np.float32),  # 28 frames, the last on tick 750: 27 / 3 s = 9 fps
])
def test_a_preview_plays_at_the_sensors_rate(tmp_path, rate_hz, seconds, array, dtype):
    imageio = pytest.importorskip("imageio.v2")
    pytest.importorskip("imageio_ffmpeg")
    folder = tmp_path / "sensor.parquet"
    count = frames_at(folder, rate_hz, seconds, array, dtype)
    out = tmp_path / "sensor.mp4"
    assert write_preview(folder, out) is not None
    reader = imageio.get_reader(out)
    try:
        meta = reader.get_meta_data()
        frames = reader.count_frames()
    finally:
        reader.close()
    assert frames == count
    assert meta["fps"] == pytest.approx(rate_hz, abs=0.01)
    # count frames at the rate play for count / rate: 91 / 30 = 3.033 s, 28 / 9 = 3.111 s.
    assert meta["duration"] == pytest.approx(count / rate_hz, abs=0.05)
