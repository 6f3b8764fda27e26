"""The ray-traced sensors: geometry worked out by hand, the latency rule, both render modes, bad input."""

import contextlib
import json
import math
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.plant.assets import with_base_prims
from nexus.render.frames import read_frames
from nexus.render.request import ViewSpec
from nexus.runtime.replay import replay
from nexus.runtime.run import run_flight

SENSORS = str(Path(__file__).parents[1] / "data" / "astro_max_sensors.usda")
TICK_S = 0.004


@pytest.fixture(scope="module")
def renderer():
    """The empty scene seen from a vehicle 2 m up: a camera looking straight down, a thermal camera looking up
    and one looking down, and a lidar in the middle of the hub, among the arms it must not see."""
    from nexus.render.renderer import SceneRenderer

    specs = [
        ViewSpec("down", "camera", 32, 24, 0.8, 0, (0.0, 0.0, -0.2), ("color", "depth", "segmentation"), math.pi / 2),
        ViewSpec("sky", "thermal", 8, 6, 0.8, 0, (0.3, 0.0, 0.05), (), -math.pi / 2, 290.0, 210.0),
        ViewSpec("floor", "thermal", 8, 6, 0.8, 0, (0.0, 0.0, -0.2), (), math.pi / 2, 291.5, 210.0),
        ViewSpec("lidar", "lidar", 64, 5, 0.5, 0, (0.0, 0.0, 0.0)),
    ]
    r = SceneRenderer("astro_max_base", "empty", 1, "cpu", specs)
    body_q = r.state.body_q.numpy().copy()
    body_q[:, 2] += 2.0 - body_q[0, 2]  # the base (and everything on it) 2 m above the ground, level
    return r, body_q


def test_a_camera_looking_down_from_1_8_m_sees_the_ground_at_1_8_m_in_every_pixel(renderer):
    r, body_q = renderer
    frame = r.render("down", body_q)
    # Base at 2 m, camera 0.2 m below it, looking straight down at the plane z = 0: forward depth 1.8 m.
    np.testing.assert_allclose(frame["depth"][0], 1.8, atol=2e-5)
    assert set(np.unique(frame["segmentation"][0])) == {r.labels.index("/scene/ground")}
    assert frame["color"].shape == (1, 24, 32, 4) and frame["color"].dtype == np.uint8


def test_thermal_reads_the_sky_above_and_the_ambient_ground_below(renderer):
    r, body_q = renderer
    np.testing.assert_array_equal(r.render("sky", body_q)["temperature"][0], np.float32(210.0))
    np.testing.assert_array_equal(r.render("floor", body_q)["temperature"][0], np.float32(291.5))


def test_lidar_channels_below_the_horizon_hit_the_ground_at_height_over_sine_through_its_own_vehicle(renderer):
    r, body_q = renderer
    poses = np.repeat(body_q[0][None, None], 64, axis=1)  # hovering still: every column from the same pose
    ranges = r.render("lidar", body_q, poses)["range"][0]  # (channels, columns), top channel first
    # Five channels over 0.5 rad: elevations +0.25, +0.125, 0, -0.125, -0.25 rad; the head is 2.0 m up, in
    # the hub: the arms and rotors around it are not seen (a lidar masks its own airframe out).
    np.testing.assert_array_equal(ranges[:3], 0.0)  # level and up: nothing to hit
    np.testing.assert_allclose(ranges[3], 16.0417, rtol=2e-5)  # 2.0 / sin(0.125)
    np.testing.assert_allclose(ranges[4], 8.0839, rtol=2e-5)  # 2.0 / sin(0.25)


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    """The sensor vehicle's short mission in the obstacles scene, 2 s, rendered by the peer and inline."""
    runs = {}
    for mode in ("peer", "inline"):
        out = tmp_path_factory.mktemp(mode)
        options = RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render=mode, device="cpu", duration=2.0)
        runs[mode] = (out, run_flight(options, out, progress=False))
    return runs


def test_peer_and_inline_render_the_same_bytes(flown):
    (peer, _), (inline, _) = flown["peer"], flown["inline"]
    names = sorted(p.name for p in (peer / "frames").iterdir() if p.suffix == ".parquet")
    assert names == ["vehicle.body.base.Camera.parquet", "vehicle.body.base.Lidar.parquet",
                     "vehicle.body.base.Thermal.parquet"]
    for name in names:
        a, b = read_frames(peer / "frames" / name), read_frames(inline / "frames" / name)
        assert a.keys() == b.keys()
        for key in a:
            assert a[key].tobytes() == b[key].tobytes(), (name, key)
    assert json.loads((peer / "run.json").read_text())["render"]["mode"] == "peer"


def test_frames_show_their_due_tick_and_count_the_latency(flown):
    out, summary = flown["peer"]
    assert summary.ticks == 500
    camera = read_frames(out / "frames" / "vehicle.body.base.Camera.parquet")
    # 25 Hz on a 250 Hz tick: due every 10 ticks from tick 0; one frame late = 10 ticks, so the frame due at
    # 490 arrives at 500, the last tick: 50 frames.
    np.testing.assert_array_equal(camera["tick"], np.arange(0, 500, 10))
    np.testing.assert_allclose(camera["time"], camera["tick"] * TICK_S, rtol=0, atol=1e-12)
    lidar = read_frames(out / "frames" / "vehicle.body.base.Lidar.parquet")
    # 10 Hz: a sweep of 25 ticks, sent at its last tick, arrives 25 ticks later: sweeps from 0, 25, ..., 450.
    np.testing.assert_array_equal(lidar["tick"], np.arange(0, 451, 25))
    # 8 channels x 128 columns; each point's time is its column's tick within the sweep.
    assert lidar["points"].shape == (19, 1024, 3)
    first_sweep_times = lidar["times"][0].reshape(8, 128)
    np.testing.assert_allclose(first_sweep_times[0, [0, 127]], [0.0, 24 * TICK_S], atol=1e-12)


def test_a_frame_reaches_the_signal_exactly_latency_ticks_after_the_tick_it_shows():
    from nexus.runtime.flight import build_flight
    from nexus.runtime.startup import start

    flight = build_flight(RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="inline"), "cpu")
    try:
        start(flight.loop, flight.vehicle.plant)
        slot = flight.loop.output("camera")
        seen = []
        for _ in range(30):
            flight.loop.tick()
            value = slot.read()
            seen.append(None if value is None else value.tick)
    finally:
        flight.loop.close()
        flight.render.close()
    # Ticks 1..30 after start-up: the frame of tick 0 appears at tick 10, that of tick 10 at tick 20.
    assert seen[:9] == [None] * 9 and seen[9:19] == [0] * 10 and seen[19:29] == [10] * 10 and seen[29] == 20


def test_ticks_between_frames_run_as_one_graph_with_the_same_bits_as_eager(flown, tmp_path):
    """The render sensors' host stages leave the ticks between their due and delivery ticks alone, so the
    captured loop runs those as one graph of the device stages; eager runs every stage every tick."""
    from nexus.record.parts import read_record

    peer_out, _ = flown["peer"]
    assert "between host ticks graph x16" in json.loads((peer_out / "run.json").read_text())["stage_plan"]
    eager = tmp_path / "eager"
    run_flight(RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="inline", eager=True, device="cpu",
                         duration=2.0), eager, progress=False)
    a, b = read_record(peer_out / "record.parquet"), read_record(eager / "record.parquet")
    assert a.num_rows == b.num_rows == 500 and a.column_names == b.column_names
    for name in a.column_names:
        assert a.column(name).equals(b.column(name)), name
    for name in sorted(p.name for p in (peer_out / "frames").iterdir() if p.suffix == ".parquet"):
        x, y = read_frames(peer_out / "frames" / name), read_frames(eager / "frames" / name)
        for key in x:
            assert x[key].tobytes() == y[key].tobytes(), (name, key)


def test_replay_regenerates_every_frame_bit_for_bit(flown):
    out, _ = flown["peer"]
    result = replay(out)
    assert result.identical, (result.first_difference, result.frame_difference)
    assert result.frames == {"vehicle.body.base.Camera": 50, "vehicle.body.base.Lidar": 19,
                             "vehicle.body.base.Thermal": 50}


def test_a_peer_that_dies_ends_the_run_render_peer_died_with_the_record_flushed(tmp_path):
    from nexus.runtime.flight import build_flight
    from nexus.render.errors import RenderPeerDied

    flight = build_flight(RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="peer"), "cpu")
    pid = flight.render.process.pid
    process = flight.render.process

    def kill_once_flying():
        deadline = time.monotonic() + 120.0
        while flight.loop.ticks < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        process.kill()

    threading.Thread(target=kill_once_flying, daemon=True).start()
    with pytest.raises(RenderPeerDied, match=rf"render peer \(pid {pid}\) ended"):
        run_flight(replace(flight.options, device="cpu", duration=60.0), tmp_path, progress=False, flight=flight)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "render-peer-died" and info["status"] == "failed"
    assert info["record_rows"] == info["ticks"] > 0


@pytest.mark.parametrize("attribute, value, says", [
    ("int nexus:width", "0", "nexus:width is 0"),
    ("float nexus:horizontalFov", "0", "nexus:horizontalFov"),
    ("int nexus:latency", "0", "nexus:latency"),
    ("float nexus:rate", "-5", "nexus:rate"),
    ("string nexus:channels", '"color,heat"', "heat"),
])
def test_a_bad_camera_attribute_is_one_line_naming_the_file_prim_and_attribute(tmp_path, attribute, value, says):
    from nexus.runtime.flight import build_flight

    bad = with_base_prims(tmp_path / "bad.usda", f"""
            def Scope "Camera" (
                prepend apiSchemas = ["NexusCameraAPI"]
            )
            {{
                {attribute} = {value}
            }}
""")
    with pytest.raises(BuildError) as caught:
        build_flight(RunConfig(vehicle=str(bad), scene="empty", render="inline"), "cpu")
    message = str(caught.value)
    assert "\n" not in message and str(bad) in message and "/vehicle/body/base/Camera" in message and says in message


def test_a_lidar_whose_minimum_range_is_above_its_maximum_is_refused():
    from nexus.sensors.lidar import Lidar

    with pytest.raises(BuildError, match=r"sensor prim /v/Lidar: nexus:minRange \(5.0 m\) must be below nexus:maxRange"):
        Lidar("/v/Lidar", min_range=5.0, max_range=2.0)


def test_one_render_covers_every_world_and_world_0_sees_what_it_sees_alone(flown, tmp_path):
    out_1, _ = flown["inline"]
    options = RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="inline", worlds=2, device="cpu",
                        duration=2.0)
    run_flight(options, tmp_path, progress=False)
    for name in ("vehicle.body.base.Camera.parquet", "vehicle.body.base.Lidar.parquet",
                 "vehicle.body.base.Thermal.parquet"):
        alone, both = read_frames(out_1 / "frames" / name), read_frames(tmp_path / "frames" / name)
        np.testing.assert_array_equal(both["world"], np.tile([0, 1], len(alone["tick"])))
        first = both["world"] == 0
        for key in alone:
            if key != "world":
                assert alone[key].tobytes() == both[key][first].tobytes(), (name, key)


def test_a_peer_that_hangs_ends_the_run_render_peer_timeout(tmp_path):
    import os
    import signal

    from nexus.runtime.flight import build_flight
    from nexus.render.errors import RenderPeerTimeout

    flight = build_flight(RunConfig(vehicle=SENSORS, scene="obstacles", mission="short", render="peer"), "cpu")
    flight.render.frame_timeout_s = 1.0
    flight.render.close_wait_s = 0.2  # a stopped peer cannot exit however long it is given: killed
    pid = flight.render.process.pid
    os.kill(pid, signal.SIGSTOP)  # alive, but never answers
    try:
        with pytest.raises(RenderPeerTimeout, match=rf"render peer \(pid {pid}\) sent nothing for 1 s"):
            run_flight(replace(flight.options, device="cpu", duration=60.0), tmp_path, progress=False, flight=flight)
    finally:
        with contextlib.suppress(ProcessLookupError):  # the run's close ends the stopped peer itself
            os.kill(pid, signal.SIGCONT)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "render-peer-timeout" and info["status"] == "failed"


def test_plan_shows_the_render_stages_and_starts_no_peer(monkeypatch):
    from click.testing import CliRunner

    from nexus.cli import main
    from nexus.render.hub import RenderHub

    started = []
    monkeypatch.setattr(RenderHub, "start", lambda hub: started.append(hub))
    result = CliRunner().invoke(main, ["plan", "--vehicle", SENSORS, "--scene", "obstacles"])
    assert result.exit_code == 0, result.output
    assert "-> gps) host(camera) host(thermal) host(lidar) graph(" in result.output
    assert started == []
