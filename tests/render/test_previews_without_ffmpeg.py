"""Without imageio-ffmpeg (a GPU machine's bundle leaves it behind) a run's MP4 previews are skipped with one note."""

from __future__ import annotations

import logging
import sys

import numpy as np

from nexus.render.frames import FrameWriter
from nexus.render.preview import write_previews


def _frames(folder, name, arrays_of):
    writer = FrameWriter(folder / name, worlds=1)
    for tick in range(4):
        writer.add(tick * 10, tick * 0.04, arrays_of(tick))
    writer.close()


def test_without_imageio_ffmpeg_the_previews_are_skipped_with_one_note(tmp_path, monkeypatch, caplog):
    frames = tmp_path / "frames"
    _frames(frames, "vehicle.body.base.Camera.parquet",
            lambda t: {"color": np.full((1, 6, 8, 4), 40 * t, np.uint8), "depth": np.ones((1, 6, 8), np.float32)})
    _frames(frames, "vehicle.body.base.Thermal.parquet",
            lambda t: {"temperature": np.full((1, 6, 8), 290.0 + t, np.float32)})
    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # import imageio_ffmpeg now raises ImportError
    with caplog.at_level(logging.INFO, logger="nexus"):
        assert write_previews(frames) == []
    notes = [r.getMessage() for r in caplog.records if r.name.startswith("nexus")]
    assert notes == [f"MP4 previews skipped: imageio-ffmpeg is not installed (pip install imageio-ffmpeg); "
                     f"the frames in {frames} are the record (nexus view shows them)"]
    assert sorted(p.name for p in frames.iterdir()) == ["vehicle.body.base.Camera.parquet",
                                                         "vehicle.body.base.Thermal.parquet"]
    # The same frames with the encoder back: both previews are written (the skip above was the encoder's).
    monkeypatch.delitem(sys.modules, "imageio_ffmpeg")
    assert [p.name for p in write_previews(frames)] == ["vehicle.body.base.Camera.mp4", "vehicle.body.base.Thermal.mp4"]
