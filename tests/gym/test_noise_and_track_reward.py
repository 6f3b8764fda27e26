"""The gym's observation noise and the reward of the task whose reference moves, against hand values.

Noise: the same seed and the same actions with ``noise=1.0`` and ``noise=0.0`` fly the same states (the noise
enters the observation only: the rewards, terminations and resets read the estimate itself), so the difference
of the two observations is the noise alone. docs/learning.md gives its standard deviation per feature:
0.01 m for position, 0.02 m/s for velocity, 0.005 for tilt, 0.01 rad/s for rates, 0.005 rad for heading.

Track reward: docs/learning.md, with e = |target - position|, v the velocity error against the reference's
velocity, w the body rates and a the action: exp(-e/0.5) + exp(-e/0.05) - 0.05|v|^2 - 0.02|w|^2 - 0.01|a|^2.
The reference is the figure-eight x = sin(Wt), y = sin(2Wt)/2 (radius 1 m, W = 2 pi / 8 s), whose velocity
(W cos(Wt), W cos(2Wt)) = (0.785301, 0.785011) m/s at t = 0.02 s (the first 50 Hz step), |v_ref| = 1.110378 m/s,
and (0.725613, 0.555360) m/s at t = 0.5 s (step 25), |v_ref| = 0.913750 m/s. The observation shows the
vehicle's velocity (features 3-5) and the reference's (12-14) in the same heading frame (a rotation about the
vertical), so v = obs[3:6] - obs[12:15] has the world frame's length.
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.gym.env import NexusVectorEnv

#: Documented noise sigma per feature at noise 1: position (3), velocity (3), tilt (2), rates (3), heading (1).
SIGMA = np.array([0.01, 0.01, 0.01, 0.02, 0.02, 0.02, 0.005, 0.005, 0.01, 0.01, 0.01, 0.005])
WORLDS, STEPS = 64, 30


def observations(noise: float) -> np.ndarray:
    """64 hover worlds from seed 4, a mild fixed action: the first observation and 30 steps', (31, 64, 12)."""
    env = NexusVectorEnv(num_envs=WORLDS, task="hover", noise=noise)
    try:
        rows = [env.reset(seed=4)[0].copy()]
        action = np.tile(np.array([[0.02, 0.0, 0.0, 0.0]], dtype=np.float32), (WORLDS, 1))
        for _ in range(STEPS):
            rows.append(env.step(action)[0].copy())
        return np.stack(rows)
    finally:
        env.close()


@pytest.fixture(scope="module")
def noise() -> np.ndarray:
    """The observation with noise less the one without, same seed and actions: (31 x 64 samples, 12 features)."""
    return (observations(1.0).astype(np.float64) - observations(0.0).astype(np.float64)).reshape(-1, 12)


def test_each_feature_gets_noise_of_its_documented_standard_deviation(noise):
    # 1,984 samples per feature: the sample standard deviation scatters by 1/sqrt(2 x 1984) = 1.6 %.
    assert noise.std(axis=0) == pytest.approx(SIGMA, rel=0.08)
    # Zero mean: within 4 standard errors (sigma / sqrt(1984) = 2.2 % of sigma each).
    assert np.all(np.abs(noise.mean(axis=0)) < 4 * SIGMA / np.sqrt(len(noise)))


def test_the_noise_of_one_feature_is_not_that_of_another(noise):
    # Each feature draws its own number: the correlation of two features' noise is near 0 (1/sqrt(1984) = 0.022).
    correlation = np.corrcoef(noise.T)
    assert np.abs(correlation[~np.eye(12, dtype=bool)]).max() < 0.1


def test_a_track_reward_by_hand_counts_the_velocity_error_against_the_moving_reference():
    env = NexusVectorEnv(num_envs=2, task="track", noise=0.0)
    try:
        env.reset(seed=9)
        actions = np.array([[0.1, 0.2, -0.1, 0.05], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
        for step in range(1, 26):
            obs, reward, terminated, truncated, _ = env.step(actions)
            if step not in (1, 25):
                continue
            reference = obs[:, 12:15].astype(np.float64)
            # |v_ref| at t = 0.02 s and 0.5 s, worked out above; level, so its down component is 0.
            assert np.hypot(reference[:, 0], reference[:, 1]) == pytest.approx(
                [1.110378, 1.110378] if step == 1 else [0.913750, 0.913750], abs=2e-6)
            assert np.all(reference[:, 2] == 0.0)
            e = np.linalg.norm(obs[:, 0:3].astype(np.float64), axis=1)
            v2 = ((obs[:, 3:6].astype(np.float64) - reference) ** 2).sum(1)
            w2 = (obs[:, 8:11].astype(np.float64) ** 2).sum(1)
            a2 = (actions.astype(np.float64) ** 2).sum(1)
            expected = np.exp(-e / 0.5) + np.exp(-e / 0.05) - 0.05 * v2 - 0.02 * w2 - 0.01 * a2
            assert not terminated.any() and not truncated.any()
            np.testing.assert_allclose(reward, expected, rtol=0, atol=2e-5)
    finally:
        env.close()
