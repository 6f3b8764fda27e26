"""``observe="sensors"``: the raw IMU, baro and GPS samples as they fly, appended to the estimator's features."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.gym.env import NexusVectorEnv

#: The scene's geodetic origin (scenes/empty: PX4's Zurich home) and metres per degree there on WGS-84
#: (meridian and prime-vertical radii at 47.397742 deg N: 111,178.6 m north, 75,489.7 m east, by hand).
LATITUDE, LONGITUDE, ALTITUDE = 47.397742, 8.545594, 488.0
NORTH_M, EAST_M = 111178.596, 75489.743
HOVER_FEATURES = 12  # the hover task's own features: position error 3, velocity 3, tilt 2, rates 3, heading error 1


@pytest.fixture(scope="module")
def flown():
    two = NexusVectorEnv(num_envs=2, task="hover", observe="sensors")
    one = NexusVectorEnv(num_envs=1, task="hover", observe="sensors")
    try:
        rows = {}
        for name, env in (("two", two), ("one", one)):
            obs, _ = env.reset(seed=4)
            seen = [obs.copy()]
            for k in range(20):
                obs, *_ = env.step(np.full((env.num_envs, 4), 0.01 * np.cos(0.2 * k), dtype=np.float32))
                seen.append(obs.copy())
            rows[name] = np.stack(seen)
        signals = {name: two.loop.output(name).numpy().copy() for name in ("imu", "baro", "gps")}
        yield rows, signals, two.agent.goal.numpy().copy(), two
    finally:
        one.close()
        two.close()


def test_the_sensor_features_are_the_latest_samples(flown):
    rows, signals, goal, env = flown
    assert env.observation_space.shape == (2, HOVER_FEATURES + 10)
    obs = rows["two"][-1]
    for w in range(2):
        imu, baro, gps = signals["imu"][w], signals["baro"][w], signals["gps"][w]
        sensors = obs[w, HOVER_FEATURES:]
        assert np.array_equal(sensors[0:3], np.asarray(imu["accel"], dtype=np.float32))
        assert np.array_equal(sensors[3:6], np.asarray(imu["gyro"], dtype=np.float32))
        target = goal[w]  # NED [m]
        height = float(baro["pressure_altitude"]) - ALTITUDE
        assert sensors[6] == pytest.approx(-target[2] - height, abs=1e-4)
        north = (float(gps["latitude"]) - LATITUDE) * NORTH_M
        east = (float(gps["longitude"]) - LONGITUDE) * EAST_M
        down = ALTITUDE - float(gps["altitude"])
        assert sensors[7:10] == pytest.approx([target[0] - north, target[1] - east, target[2] - down], abs=1e-3)
        assert -10.5 < sensors[2] < -9.0  # hovering: specific force about -g along body z (FRD)


def test_world0_alone_equals_world0_of_two_with_sensors(flown):
    rows = flown[0]
    assert np.array_equal(rows["one"][:, 0], rows["two"][:, 0])


def test_an_unknown_observe_is_refused():
    with pytest.raises(BuildError, match=r"observe='lidar': unknown observation; choose one of estimate, sensors"):
        NexusVectorEnv(num_envs=1, observe="lidar")
