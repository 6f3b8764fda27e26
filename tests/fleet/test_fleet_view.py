"""``nexus view`` of a fleet run: every vehicle of the chosen world drawn in full where it flew.

One flight shared by the tests here: two vehicles in one world, vehicle 1 starting 2.0 m east of vehicle 0,
flown 5 s on the true state (1,250 ticks at 250 Hz per vehicle). A second, 2 s flight of two worlds of two
vehicles checks the worlds side by side. The browser test serves the replay to a headless Chromium (Debian's
``chromium``) as tests/viz/test_view.py does.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.viz.browser import Browser, chromium_path
from tests.viz.test_view import HEIGHT, WIDTH, click_checkbox, scene, start_view, stop
from tests.worlds.flights import fly

#: The line's spacing [m]: vehicle 1 starts this far east of vehicle 0.
SPACING = 2.0
#: 5 s at 250 Hz.
TICKS = 1250


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("fleet_view") / "two", "--vehicles", "2", "--spacing", "2.0",
               "--duration", "5", "--estimator", "truth").out


@pytest.fixture(scope="module")
def replay(fleet):
    from nexus.viz.replay_view import open_replay

    opened = open_replay(fleet, "127.0.0.1", 0)
    yield opened
    opened.view.close()


def test_the_worlds_data_holds_both_vehicles_the_spacing_apart(replay):
    assert (replay.worlds, replay.vehicles, len(replay.time)) == (1, 2, TICKS)
    tracks = replay.run.tracks
    first = [tracks.position[tracks.rows(k).start] for k in (0, 1)]
    assert all(tracks.rows(k).stop - tracks.rows(k).start == TICKS for k in (0, 1))
    # Vehicle 0 at the file's place (the origin), vehicle 1 2.0 m east (+x ENU), level with it.
    assert abs(first[0][0]) < 1e-6 and abs(first[0][1]) < 1e-6
    assert first[1] - first[0] == pytest.approx([SPACING, 0.0, 0.0], abs=1e-5)
    # The run's NED origins, one per vehicle, are where each settled: 2.0 m apart too.
    origins = replay.run.origins
    assert origins[1] - origins[0] == pytest.approx([SPACING, 0.0, 0.0], abs=1e-5)


def test_both_vehicles_bodies_are_posed_where_they_flew(replay):
    view = replay.view
    replay.draw(0)
    bases = [view._joint_q[c : c + 3].copy() for c in view.base_coords]
    assert bases[1] - bases[0] == pytest.approx([SPACING, 0.0, 0.0], abs=1e-5)
    # Forward kinematics places each copy's every body: vehicle 1's bodies are vehicle 0's moved 2.0 m east.
    body_q = view.state.body_q.numpy().reshape(2, -1, 7)
    assert body_q[1, :, :3] - body_q[0, :, :3] == pytest.approx(np.tile([SPACING, 0.0, 0.0], (body_q.shape[1], 1)),
                                                                abs=1e-4)
    last = len(replay.time) - 1
    replay.draw(last)
    tracks = replay.run.tracks
    for k, coord in enumerate(view.base_coords):  # each copy follows its own vehicle's last row
        assert np.array_equal(view._joint_q[coord : coord + 3], tracks.position[tracks.rows(k).stop - 1])
    assert {"/paths/vehicle0/flown", "/paths/vehicle1/flown"} <= set(view.viewer._scene_handles)
    assert replay.world_caption.content == "2 vehicles in the world; vehicle 0: duration, vehicle 1: duration"


def test_two_worlds_of_two_vehicles_stand_apart_each_world_whole(tmp_path_factory):
    from nexus.viz.replay_view import open_replay
    from nexus.viz.worlds_view import HIDDEN_Z

    run = fly(tmp_path_factory.mktemp("fleet_view") / "grid", "--vehicles", "2", "--worlds", "2", "--duration", "2",
              "--estimator", "truth").out
    opened = open_replay(run, "127.0.0.1", 0, world=1)
    try:
        view = opened.view
        opened.draw(0)
        # Slots: world 0's vehicles 0 and 1, then world 1's. Each world's fleet spans a little over 2 m across (the
        # spacing, and the cm each drifts from its place); its cell is that plus twice the spacing to spare,
        # ceil(2.0x + 4) = 7 m: world 1 drawn 7 m east, 5 m from world 0's last vehicle, its own 2.0 m apart.
        assert view.offsets[:, 0] == pytest.approx([0.0, 0.0, 7.0, 7.0])
        assert view.xforms[1, 0] - view.xforms[0, 0] == pytest.approx(SPACING, abs=1e-5)  # world 0: markers
        assert view.xforms[2, 2] == HIDDEN_Z and view.xforms[3, 2] == HIDDEN_Z  # world 1: drawn in full
        bases = [view._joint_q[c : c + 3].copy() for c in view.base_coords]
        assert bases[0][0] == pytest.approx(7.0, abs=1e-5) and bases[1][0] == pytest.approx(9.0, abs=1e-5)
        opened.wanted = 0  # as the page's world number does
        opened.frame(0.0)
        assert opened.selected == 0 and view.xforms[0, 2] == HIDDEN_Z and view.xforms[2, 2] != HIDDEN_Z
        assert opened.world_caption.content.startswith("2 vehicles in world 0 (0..1)")
        assert opened.sensor_world() == 0  # the Sensors panel shows slot 0's frames: world 0's vehicle 0
        opened.wanted = 1
        opened.frame(0.0)
        assert opened.sensor_world() == 2  # world 1's vehicle 0 is slot 2 (world 1 alone would say 1)
    finally:
        opened.view.close()


def test_a_world_the_fleet_run_lacks_is_refused(fleet):
    result = CliRunner().invoke(main, ["view", str(fleet), "--port", "0", "--world", "1"])
    assert result.exit_code == 2, result.output
    assert "--world 1 is not a world of" in result.output and "0 (it flew one world)" in result.output


def test_a_vehicle_the_fleet_run_did_not_fly_is_refused_in_one_line(fleet):
    for vehicle in ("2", "-1"):
        result = CliRunner().invoke(main, ["view", str(fleet), "--port", "0", "--vehicle", vehicle])
        assert result.exit_code == 2, result.output
        assert result.output.strip() == (f"error: --vehicle {vehicle} is not a vehicle of {fleet}: give a vehicle in "
                                          "0..1 (it flew 2 vehicles a world)")


def test_the_camera_follows_the_vehicle_asked_for(fleet):
    from nexus.viz.replay_view import open_replay

    opened = open_replay(fleet, "127.0.0.1", 0, vehicle=1)
    try:
        assert opened.world_caption.content.endswith("; following vehicle 1")
        assert opened.sensor_world() == 1  # the followed vehicle's frames: slot 1
        tracks = opened.run.tracks
        # The camera looks north-east and 25 degrees down (front = (cos 45 cos 25, sin 45 cos 25, -sin 25) =
        # (0.640856, 0.640856, -0.422618)) from 2.5 spacings = 5.0 m: it stands at the vehicle - 5.0 x front.
        front = np.array([0.640856, 0.640856, -0.422618])
        for row in (0, len(opened.time) - 1):
            opened.draw(row)
            seen = opened.view.viewer._camera_request[0] + 5.0 * front
            assert seen == pytest.approx(tracks.position[tracks.rows(1)][row], abs=1e-4)
        # Unticked, the camera stays where it was while the vehicle moves on.
        opened.follow.value = False
        opened.frame(0.0)
        stays = opened.view.viewer._camera_request[0].copy()
        opened.draw(0)
        assert np.array_equal(opened.view.viewer._camera_request[0], stays)
    finally:
        opened.view.close()


def blobs(mask: np.ndarray, block: int = 8, least: int = 4) -> list[tuple[float, float]]:
    """Centres (x, y) [px] of the connected regions of ``mask`` (8-neighbours, on ``block``-pixel cells), each of
    at least ``least`` cells."""
    rows, cols = mask.shape[0] // block, mask.shape[1] // block
    cells = mask[: rows * block, : cols * block].reshape(rows, block, cols, block).any(axis=(1, 3))
    seen, found = np.zeros_like(cells), []
    for y, x in zip(*np.nonzero(cells), strict=True):
        if seen[y, x]:
            continue
        seen[y, x], stack, members = True, [(y, x)], []
        while stack:
            cy, cx = stack.pop()
            members.append((cx, cy))
            for ny in range(max(cy - 1, 0), min(cy + 2, rows)):
                for nx in range(max(cx - 1, 0), min(cx + 2, cols)):
                    if cells[ny, nx] and not seen[ny, nx]:
                        seen[ny, nx] = True
                        stack.append((ny, nx))
        if len(members) >= least:
            found.append(tuple(float(v) for v in np.mean(members, axis=0) * block))
    return found


def test_both_vehicles_show_in_headless_chromium(fleet):
    if chromium_path() is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium); viewer not checked in a browser")
    process, url = start_view(fleet)
    try:
        with Browser(WIDTH, HEIGHT) as browser:
            browser.open(url)
            assert browser.wait_for("document.body.innerText.includes('2 vehicles in the world')", 60), "no panel"
            time.sleep(3.0)  # SwiftShader draws a few frames
            with_vehicles = browser.screenshot(fleet / "view_fleet.png")
            assert click_checkbox(browser, "Show vehicle")
            time.sleep(3.0)
            without = browser.screenshot(fleet / "view_fleet_hidden.png")
    finally:
        stop(process)
    changed = np.abs(scene(with_vehicles) - scene(without)).max(axis=2) > 40  # pixels a vehicle changes by > 40/255
    found = sorted(blobs(changed))
    # Two separate vehicles (each with its shadow), not one: seen from the south-west, looking north-east, vehicle
    # 1 (2.0 m east) is drawn right of vehicle 0 and further away (higher on the canvas).
    assert len(found) == 2, f"{len(found)} drawn regions, at {found}"
    (x0, y0), (x1, y1) = found
    assert x1 > x0 + 50 and y1 < y0
