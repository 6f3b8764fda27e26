"""A spinning lidar on a yawing vehicle: each column is cast from the pose of its own tick in the sweep.

Scene (tests/data/wall.usda): flat ground and a wall whose near face is the plane x = 3 m (y from -4
to 4 m, z from 0 to 3 m). A lidar at the base's origin, 64 columns, its middle (or only) channel level,
10 Hz on the 250 Hz tick: a sweep of T = 25 ticks, column c taken at tick floor(25 c / 64) of it. The
vehicle is placed 1.5 m up, yawing at 4 rad/s: over one sweep it turns 24 x 0.004 x 4 = 0.384 rad, so a
column cast from the sweep's first pose instead of its own points 22 degrees away from where it should.

One channel as well as three: a one-channel sweep's ranges came back from the renderer as a view of its
depth buffer, so the next sweep, asked for before this one is delivered, overwrote them (rendered in this
process; the peer copies each frame out).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.runtime.assembly import assemble
from nexus.render.request import ViewSpec
from nexus.sensors.lidar import Lidar
from tests.sensors.conftest import DATA, place, ring, rotate

WALL = DATA / "wall.usda"
COLUMNS = 64
#: Ticks of one sweep (250 Hz / 10 Hz) and the column -> tick-in-sweep map, floor(25 c / 64).
SWEEP_TICKS = 25
COLUMN_TICK = [(25 * c) // 64 for c in range(COLUMNS)]
YAW_RATE = 4.0  # [rad/s]


@pytest.fixture(scope="module")
def vehicle():
    return assemble("astro_max_base", WALL, controller="hold", estimator="truth")  # the ring holds no sensors but the lidar


@pytest.fixture(scope="module", params=[1, 3], ids=["1-channel", "3-channels"])
def swept(request, vehicle):
    """The first sweep the lidar delivered, and each tick's time [ns] and body poses, as flown."""
    channels = request.param
    lidar = Lidar("/vehicle/body/base/Lidar", plant=vehicle.plant, channels=channels, vertical_fov=0.2 * (channels - 1),
                  horizontal_resolution=2.0 * math.pi / COLUMNS, rate=10.0, noise=False)
    loop = ring(vehicle, [lidar])
    try:
        place(vehicle, (0.0, 0.0, 1.5), angular_velocity=(0.0, 0.0, YAW_RATE))
        poses: dict[int, np.ndarray] = {}  # time [ns] -> every body's pose then
        cloud = None
        while cloud is None and len(poses) < 100:
            loop.tick()
            poses[int(loop.output("time_ns").numpy()[0])] = vehicle.plant.state.body_q.numpy().copy()
            cloud = loop.output("lidar").read()
    finally:
        loop.close()
        lidar.close()
    assert cloud is not None, "no sweep was delivered in 100 ticks"
    return channels, lidar.body_index, cloud, poses


_RENDERERS: dict = {}


def _render_from(vehicle, channels: int, body: int, body_q: np.ndarray) -> np.ndarray:
    """The middle channel of a sweep whose every column is cast from the one pose in ``body_q``: (columns,)
    ranges [m], 0 for a miss."""
    from nexus.render.renderer import SceneRenderer

    if channels not in _RENDERERS:
        _RENDERERS[channels] = SceneRenderer(vehicle.plant.vehicle_path, WALL, 1, "cpu", [
            ViewSpec("still", "lidar", COLUMNS, channels, 0.2 * (channels - 1), body, (0.0, 0.0, 0.0))])
    renderer = _RENDERERS[channels]
    poses = np.repeat(body_q[body][None, None], COLUMNS, axis=1)
    return renderer.render("still", body_q, poses)["range"][0, channels // 2]


def test_each_column_of_a_yawing_vehicles_sweep_is_cast_from_its_own_ticks_pose(vehicle, swept):
    channels, body, cloud, poses = swept
    # The middle channel (elevation 0; the cloud holds the channels one after another, top first).
    ranges = cloud["range"][0].reshape(channels, COLUMNS)[channels // 2]
    times = cloud["times"][0].reshape(channels, COLUMNS)[channels // 2]
    ticks = sorted(poses)
    first = ticks.index(round(times[0] * 1e9))
    # Each column's time is its own tick's: the sweep's first tick plus floor(25 c / 64) ticks of 4 ms.
    np.testing.assert_allclose(times - times[0], np.array(COLUMN_TICK) * 0.004, rtol=0, atol=1e-9)
    own = [poses[ticks[first + k]] for k in COLUMN_TICK]
    sweep_start = poses[ticks[first]]
    turned = 2.0 * math.atan2(own[-1][body][5], own[-1][body][6]) - 2.0 * math.atan2(sweep_start[body][5],
                                                                                       sweep_start[body][6])
    assert turned == pytest.approx(24 * 0.004 * YAW_RATE, rel=0.02)  # 0.384 rad between the first and last column

    # By hand, for every column that meets the wall: a level ray from the lidar at p along the body's
    # azimuth a, turned by the pose q of the column's own tick (d = q (cos a, sin a, 0)), meets the
    # plane x = 3 m after (3 - p_x) / d_x, if it meets it between y = -4 and 4 m.
    wall_columns = []
    for c in range(COLUMNS):
        pose = own[c][body]
        a = 2.0 * math.pi * c / COLUMNS
        d = rotate(pose[3:], (math.cos(a), math.sin(a), 0.0))
        if d[0] <= 0.1:
            continue
        distance = (3.0 - pose[0]) / d[0]
        if abs(pose[1] + distance * d[1]) > 3.9:  # clear of the wall's edges
            continue
        wall_columns.append(c)
        assert ranges[c] == pytest.approx(distance, abs=2e-4), c
    late = [c for c in wall_columns if COLUMN_TICK[c] >= 12]  # taken in the second half of the sweep
    assert len(late) >= 6, wall_columns

    # The late columns match a render from their own tick's pose, and not one from the sweep's first tick.
    from_first = _render_from(vehicle, channels, body, sweep_start)
    for c in late:
        from_own = _render_from(vehicle, channels, body, own[c])
        assert ranges[c] == pytest.approx(from_own[c], abs=1e-5), c
    skew = [abs(ranges[c] - from_first[c]) for c in late]
    assert min(skew) > 1e-3 and max(skew) > 0.3, skew
