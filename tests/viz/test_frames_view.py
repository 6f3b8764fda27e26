"""Ray-traced sensor frames in ``nexus view`` and ``nexus plot``, and the MP4 previews ``nexus run`` writes.

One 2 s flight of the sensor test vehicle (camera 48x36 at 25 Hz, thermal 16x12 at 25 Hz, lidar 8 x 128 at
10 Hz), rendered inline, shared by every test here.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tests.viz.browser import Browser, chromium_path

VEHICLE = "tests/data/astro_max_sensors.usda"
CAMERA, THERMAL, LIDAR = "vehicle.body.base.Camera", "vehicle.body.base.Thermal", "vehicle.body.base.Lidar"


@pytest.fixture(scope="module")
def sensor_run(tmp_path_factory) -> Path:
    from nexus.runtime.run import run_flight
    from nexus.runtime.config import RunConfig

    scene = "obstacles" if Path("scenes/obstacles.usda").is_file() else "empty"
    out = tmp_path_factory.mktemp("frames") / "sensors"
    run_flight(RunConfig(vehicle=VEHICLE, scene=scene, mission="short", render="inline", device="cpu", duration=2.0),
               out, progress=False)
    print(f"\nframes artefacts (previews, contact sheets, screenshots) in {out}")
    return out


def world0(run: Path, sensor: str) -> dict:
    from nexus.render.frames import read_frames

    frames = read_frames(run / "frames" / f"{sensor}.parquet")
    keep = frames["world"] == 0
    return {k: v[keep] for k, v in frames.items()}


# -- MP4 previews ---------------------------------------------------------------------------------


@pytest.mark.parametrize("sensor, size", [(CAMERA, (336, 252)), (THERMAL, (320, 240))])
def test_each_camera_has_an_mp4_preview_of_every_frame(sensor_run, sensor, size):
    import imageio.v2 as imageio

    from nexus.render.preview import scale_for, to_rgb, upscale

    frames = world0(sensor_run, sensor)
    path = sensor_run / "frames" / f"{sensor}.mp4"
    reader = imageio.get_reader(path)
    try:
        meta = reader.get_metadata() if hasattr(reader, "get_metadata") else reader.get_meta_data()
        count = reader.count_frames()
        first = reader.get_data(len(frames["time"]) // 2)
    finally:
        reader.close()
    assert count == len(frames["time"]) > 40  # 2 s at 25 Hz, less the last frame still in flight
    assert tuple(meta["size"]) == size  # 48x36 x7, 16x12 x20: at least 320 wide, even
    assert meta["fps"] == pytest.approx(25.0)
    channel = "color" if sensor == CAMERA else "temperature"
    stack = frames[channel]
    expected = upscale(to_rgb(stack[len(stack) // 2], scale_for(channel, stack)))
    assert np.abs(first.astype(float) - expected).mean() < 8.0  # lossy, but the same picture
    assert (sensor_run / "frames" / f"{LIDAR}.mp4").exists() is False  # a lidar has no video
    info = json.loads((sensor_run / "run.json").read_text())
    assert f"{sensor}.mp4" in info["render"]["previews"]


def test_a_broken_frame_folder_costs_its_preview_only(tmp_path, caplog):
    from nexus.render.preview import write_previews

    broken = tmp_path / "frames" / "vehicle.body.base.Camera.parquet"
    broken.mkdir(parents=True)
    (broken / "part-000000.parquet").write_bytes(b"not parquet")
    with caplog.at_level("WARNING"):
        assert write_previews(tmp_path / "frames") == []
    assert "could not write the preview" in caplog.text
    assert sorted(p.name for p in (tmp_path / "frames").iterdir()) == [broken.name]  # nothing half-written left
    assert write_previews(tmp_path / "nothing here") == []
    from nexus.viz.frames import find_streams

    notes = []
    assert find_streams(tmp_path, {}, notes) == []  # the viewer and the report leave it out, saying so
    assert "not readable frames" in notes[0]


def test_upscale_is_a_whole_factor_to_320_wide_and_even():
    from nexus.render.preview import nice_ceiling, scale_for, to_rgb, upscale

    assert upscale(np.zeros((36, 48, 3), np.uint8)).shape == (252, 336, 3)
    assert upscale(np.zeros((7, 13, 3), np.uint8)).shape == (176, 326, 3)  # x25 = 175 x 325, padded to even
    assert upscale(np.zeros((480, 640, 3), np.uint8)).shape == (480, 640, 3)
    image = np.arange(6, dtype=np.uint8).reshape(2, 3, 1).repeat(3, axis=2)
    big = upscale(image, 30)
    assert np.array_equal(big[::10, ::10], image)  # nearest pixel, no blending
    assert [nice_ceiling(v) for v in (0.7, 1.0, 1.3, 4.2, 7.5, 12.0)] == [1.0, 1.0, 2.0, 5.0, 10.0, 20.0]
    depth = np.array([[[0.0, 2.0, 6.0, 8.0]]], np.float32)
    scale = scale_for("depth", depth)
    assert scale.high == 10.0  # the 95th percentile of 2, 6, 8 m (7.8 m), rounded up
    assert to_rgb(depth[0], scale)[0, :, 0].tolist() == [0, 204, 102, 51]  # nothing hit black, near white
    hot = scale_for("temperature", np.array([[[230.0, 300.0]]]))
    assert (hot.low, hot.high) == (230.0, 300.0)
    assert to_rgb(np.array([[230.0, 300.0]]), hot).tolist() == [[[0, 0, 4], [252, 255, 164]]]


# -- the viewer's data ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def streams(sensor_run):
    from nexus.viz.frames import find_streams

    info = json.loads((sensor_run / "run.json").read_text())
    return {s.short: s for s in find_streams(sensor_run, info)}


def test_streams_are_found_with_their_mounts(streams):
    assert [(s.kind, s.size) for s in streams.values()] == [("camera", (48, 36)), ("thermal", (16, 12)),
                                                            ("lidar", (1024, 1))]
    assert streams["Camera"].channels == ["color", "depth", "segmentation"]
    assert streams["Lidar"].prim.mount == pytest.approx((0.0, 0.0, 0.2))  # the vehicle file's nexus:mountOffset
    assert streams["Thermal"].prim.tilt == pytest.approx(0.3)


def test_the_frame_shown_is_the_last_at_or_before_the_slider(streams):
    camera, lidar = streams["Camera"], streams["Lidar"]
    times = camera.frames()["time"]
    assert times[:3] == pytest.approx([0.0, 0.04, 0.08])
    assert [camera.index_at(t) for t in (-0.01, 0.0, 0.039, 0.04, 0.05, 10.0)] == [-1, 0, 0, 1, 1, len(times) - 1]
    # A lidar shows its last whole sweep: the first (0 to 0.096 s) from its last column on.
    end = lidar.frames()["end"]
    assert end[0] == pytest.approx(0.096)
    assert [lidar.index_at(t) for t in (0.05, 0.096, 0.15, 0.2)] == [-1, 0, 0, 1]


def test_a_lidar_point_lands_where_the_pose_and_mount_put_it(streams):
    from nexus.viz.frames import lidar_world_points, poses_at

    yaw = np.pi / 2  # turned 90 degrees counter-clockwise: body +x is world north
    pose = np.array([1.0, 2.0, 3.0, 0.0, 0.0, np.sin(yaw / 2), np.cos(yaw / 2)])
    mount = streams["Lidar"].prim.mount
    placed = lidar_world_points(np.array([[3.0, 0.0, 0.0], [0.0, 1.0, -0.5]]), np.array([0.5, 0.5]), mount,
                                np.array([0.0, 1.0]), np.stack([pose, pose]))
    assert placed == pytest.approx(np.array([[1.0, 5.0, 3.2], [0.0, 2.0, 2.7]]), abs=1e-6)
    # Between two rows the pose is interpolated: a column taken a quarter of the way.
    moving = np.stack([pose, pose + [2.0, 0, 0, 0, 0, 0, 0]])
    assert poses_at(np.array([0.25]), np.array([0.0, 1.0]), moving)[0, :3] == pytest.approx([1.5, 2.0, 3.0])


def test_a_recorded_sweep_lies_on_the_scene(sensor_run, streams):
    """The middle sweep's returns, placed in the world, are on the ground (z 0) or above it, none below."""
    from nexus.viz.frames import sweep_in_world
    from nexus.viz.run_data import load_run

    run = load_run(sensor_run)
    lidar = streams["Lidar"]
    points, ranges = sweep_in_world(lidar, lidar.index_at(1.6), run.time, run.vector("body/base.pose", 7))
    assert len(points) > 100
    assert points[:, 2].min() > -0.1  # range noise 2 cm: nothing under the ground
    assert np.mean(np.abs(points[:, 2]) < 0.1) > 0.3  # the low channels hit the ground


# -- nexus plot -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def plotted(sensor_run):
    from click.testing import CliRunner

    from nexus.cli import main

    made = CliRunner().invoke(main, ["plot", str(sensor_run)])
    assert made.exit_code == 0, made.output
    return sensor_run, made


@pytest.mark.parametrize("name", ["frames-Camera", "frames-Thermal", "lidar-Lidar"])
def test_plot_draws_a_contact_sheet_per_camera_and_the_lidar(plotted, name):
    from PIL import Image

    run, made = plotted
    png = run / "plots" / f"{name}.png"
    assert str(png) in made.output
    image = np.asarray(Image.open(png).convert("RGB"), dtype=np.float64)
    assert image.shape[1] >= 800
    assert image.std() > 20.0  # drawn, not a blank page
    coloured = np.mean(image.max(axis=2) - image.min(axis=2) > 60)  # frames, or the range-coloured points
    assert coloured > (0.005 if name.startswith("lidar") else 0.2), f"{name}: {coloured:.1%} of it is coloured"
    page = (run / "report.html").read_text()
    assert f"id='fig-{name}'" in page


def test_the_contact_sheet_shows_twelve_frames_with_their_times(streams):
    from nexus.viz.frames_figures import contact_sheet, sheet_indices

    assert sheet_indices(49).tolist() == [0, 4, 9, 13, 17, 22, 26, 31, 35, 39, 44, 48]
    assert sheet_indices(5).tolist() == [0, 1, 2, 3, 4]
    figure = contact_sheet(streams["Camera"])
    titles = [ax.get_title() for ax in figure.axes if ax.get_images()]
    times = streams["Camera"].frames()["time"][sheet_indices(streams["Camera"].count())]
    assert titles == [f"{t:.2f} s" for t in times]
    assert len(titles) == 12


def test_a_run_without_frames_gets_no_frame_figure(tmp_path):
    from nexus.viz.report import _frame_figures
    from nexus.viz.run_data import RunData

    assert _frame_figures(RunData(tmp_path, {}, {"time": np.zeros(1)}), 0) == ({}, [])


# -- nexus view -------------------------------------------------------------------------------------


def test_view_shows_the_camera_panels_and_the_lidar_cloud(sensor_run, streams):
    from nexus.viz.frames import sweep_in_world
    from nexus.viz.frames_view import POINT_LIFT
    from nexus.viz.replay_view import open_replay

    replay = open_replay(sensor_run, "127.0.0.1", 0)
    try:
        panels = replay.sensors
        replay.slider.value = 1.5  # hovering near 2 m: a sweep with whole ground rings
        replay.frame(0.0)
        row = replay.row_at(1.5)
        camera = panels.images["/vehicle/body/base/Camera"]
        index = streams["Camera"].index_at(replay.time[row])
        assert camera.image.shape == (252, 336, 3)  # 48x36 shown 7x
        assert np.array_equal(camera.image[::7, ::7], streams["Camera"].frames()["color"][index][..., :3])
        assert camera.label.startswith(f"Camera color: frame {index + 1} of ")
        thermal = panels.images["/vehicle/body/base/Thermal"]
        assert thermal.image.shape == (240, 320, 3) and " K black to " in thermal.label
        cloud = panels.clouds["/sensors/Lidar"]
        sweep = streams["Lidar"].index_at(replay.time[row])
        expected, _ = sweep_in_world(streams["Lidar"], sweep, replay.time, replay.poses)
        assert np.asarray(cloud.points) - (0.0, 0.0, POINT_LIFT) == pytest.approx(expected, abs=1e-4)
        if chromium_path() is None:
            pytest.skip("chromium is not installed: the panels were checked in the server only")
        replay.view.look_at(replay.poses[row, :3], distance=20.0)  # back far enough to see the sweep's ground rings
        stop = threading.Event()

        def serve():  # the display loop of Replay.serve, until the test is done
            while not stop.is_set():
                replay.frame(1.0 / 30.0)
                time.sleep(1.0 / 30.0)

        serving = threading.Thread(target=serve, daemon=True)
        serving.start()
        with Browser(1280, 800) as browser:
            browser.open(replay.view.url)
            sizes = browser.wait_for("(() => { const s = [...document.querySelectorAll('img')]"
                                     ".filter(i => i.src.startsWith('blob:') && i.naturalWidth > 0)"
                                     ".map(i => [i.naturalWidth, i.naturalHeight]);"
                                     " return s.length >= 2 ? s : null; })()", 60)
            assert sorted(map(tuple, sizes or [])) == [(320, 240), (336, 252)], sizes
            time.sleep(2.0)  # SwiftShader draws a few frames
            with_cloud = browser.screenshot(sensor_run / "view_sensors.png")
            assert browser.evaluate("""(() => {
                const l = [...document.querySelectorAll('label')].find(e => e.textContent.trim() === 'Show lidar');
                const box = l && document.getElementById(l.htmlFor);
                if (!box) return false; box.click(); return true; })()""")
            assert browser.wait_for("document.body.innerText.includes('Lidar: hidden')", 10)
            time.sleep(2.0)
            without = browser.screenshot(sensor_run / "view_sensors_no_lidar.png")
        stop.set()
        serving.join()
    finally:
        replay.view.close()
    from PIL import Image

    full, empty = (np.asarray(Image.open(p).convert("RGB"), dtype=np.float64)[:, :900] for p in (with_cloud, without))
    changed = np.mean(np.abs(full - empty).max(axis=2) > 40)
    assert changed > 0.002, f"the lidar cloud changed {changed:.2%} of the canvas"
