"""The Gymnasium vector environment: determinism across world counts, per-world resets, rewards by hand,
Gymnasium's own checks, and its bad input."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import nexus.gym  # noqa: F401  (registers the ids)
from nexus.core.errors import BuildError
from nexus.gym.env import NexusVectorEnv

STEPS = 60  # 1.2 s at 50 Hz


@pytest.fixture(scope="module")
def one():
    env = NexusVectorEnv(num_envs=1, task="hover")
    yield env
    env.close()


@pytest.fixture(scope="module")
def many():
    env = NexusVectorEnv(num_envs=64, task="hover")
    yield env
    env.close()


def world0_actions():
    """A fixed, mild action sequence for world 0 (it stays up for the whole test)."""
    rng = np.random.default_rng(7)
    return rng.uniform(-0.05, 0.05, size=(STEPS, 4)).astype(np.float32)


def fly(env, seed, actions_for):
    obs, _ = env.reset(seed=seed)
    rows = [obs.copy()]
    rewards, flags = [], []
    for k in range(STEPS):
        obs, reward, terminated, truncated, info = env.step(actions_for(k))
        rows.append(obs.copy())
        rewards.append(reward.copy())
        flags.append(np.stack([terminated, truncated]).copy())
    return np.stack(rows), np.stack(rewards), np.stack(flags)


@pytest.fixture(scope="module")
def flown(one, many):
    """World 0 flies the same actions alone and among 63 worlds that thrash (full thrust and rates: they crash
    and reset while world 0 flies on)."""
    a0 = world0_actions()
    rng = np.random.default_rng(3)
    others = rng.choice([-1.0, 1.0], size=(STEPS, 63, 4)).astype(np.float32)
    alone = fly(one, 11, lambda k: a0[k][None, :])
    among = fly(many, 11, lambda k: np.concatenate([a0[k][None, :], others[k]]))
    again = fly(one, 11, lambda k: a0[k][None, :])
    return alone, among, again


def test_world0_alone_equals_world0_of_64_bit_for_bit(flown):
    (obs1, rew1, flags1), (obs64, rew64, flags64), _ = flown
    assert flags64[:, :, 1:].any(), "no other world ended: the test would not show that resets stay per world"
    assert not flags1.any()
    assert np.array_equal(obs1[:, 0], obs64[:, 0])
    assert np.array_equal(rew1[:, 0], rew64[:, 0])
    assert np.array_equal(flags1[:, :, 0], flags64[:, :, 0])


def test_same_seed_same_bits(flown):
    (obs1, rew1, _), _, (obs2, rew2, _) = flown
    assert np.array_equal(obs1, obs2) and np.array_equal(rew1, rew2)


def test_another_seed_starts_elsewhere(one):
    first = one.reset(seed=1)[0].copy()
    second = one.reset(seed=2)[0].copy()
    assert not np.array_equal(first, second)


def test_a_terminated_world_restarts_within_the_start_box(many):
    """An ending world's last observation shows why it ended; the observation returned is a fresh start: within
    0.5 m of the hover point on each NED axis (plus noise), tilted at most 0.2 rad, at most 0.3 m/s each axis."""
    many.reset(seed=4)
    actions = np.zeros((64, 4), dtype=np.float32)
    actions[:, 0] = -1.0  # no thrust: every world falls
    final = np.full((64, 12), np.nan, dtype=np.float32)
    fresh = np.full((64, 12), np.nan, dtype=np.float32)
    penalty = np.zeros(64)
    for _ in range(60):
        obs, reward, terminated, truncated, info = many.step(actions)
        assert not truncated.any()
        first = terminated & np.isnan(final[:, 0])
        if first.any():
            assert info["_final_obs"][first].all()
            final[first], fresh[first], penalty[first] = info["final_obs"][first], obs[first], reward[first]
        if not np.isnan(final[:, 0]).any():
            break
    assert not np.isnan(final).any(), "some world never ended"
    height = 1.5 + final[:, 2]  # e_z = -1.5 - z (NED), so the height above the origin is 1.5 + e_z
    assert (height < 0.15 + 0.05).all()
    assert np.all(penalty < -9.0)  # the crash costs 10
    # Each axis within ±0.5 m in NED; the observation turns x and y by the start's heading.
    assert np.hypot(fresh[:, 0], fresh[:, 1]).max() <= 0.5 * np.sqrt(2.0) + 0.05
    assert np.abs(fresh[:, 2]).max() <= 0.5 + 0.05
    assert np.abs(fresh[:, 3:6]).max() <= 0.3 + 0.1
    assert np.hypot(fresh[:, 6], fresh[:, 7]).max() <= np.sin(0.2) + 0.02


def test_reward_by_hand():
    """Without noise the reward is exp(-e/0.5) + exp(-e/0.05) - 0.05|v|² - 0.02|w|² - 0.01|a|² from the same
    estimate the observation shows."""
    env = NexusVectorEnv(num_envs=2, task="hover", noise=0.0)
    try:
        env.reset(seed=9)
        action = np.array([[0.1, 0.2, -0.1, 0.05], [0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
        obs, reward, terminated, truncated, _ = env.step(action)
        e = np.linalg.norm(obs[:, 0:3].astype(np.float64), axis=1)
        v2 = (obs[:, 3:6].astype(np.float64) ** 2).sum(1)
        w2 = (obs[:, 8:11].astype(np.float64) ** 2).sum(1)
        a2 = (action.astype(np.float64) ** 2).sum(1)
        expected = np.exp(-e / 0.5) + np.exp(-e / 0.05) - 0.05 * v2 - 0.02 * w2 - 0.01 * a2
        assert not terminated.any() and not truncated.any()
        np.testing.assert_allclose(reward, expected, rtol=0, atol=2e-5)
    finally:
        env.close()


def test_actions_outside_the_space_are_clipped(one):
    """Clipped, not refused: 5, -3, 2 fly (and cost) as 1, -1, 1."""
    one.reset(seed=5)
    obs, reward = (a.copy() for a in one.step(np.array([[5.0, -3.0, 2.0, 1.0]], dtype=np.float32))[:2])
    one.reset(seed=5)
    edge_obs, edge_reward = (a.copy() for a in one.step(np.array([[1.0, -1.0, 1.0, 1.0]], dtype=np.float32))[:2])
    assert np.array_equal(obs, edge_obs) and np.array_equal(reward, edge_reward)


def test_truncated_after_five_seconds(one):
    """250 steps of 20 ms: the 250th is truncated (not terminated) for a world that flies on."""
    one.reset(seed=2)
    g = 9.81

    def hold(o):  # a PD law on the observation: climbs/sinks and tilts toward the target
        e, v, d, yaw = o[:, 0:3], o[:, 3:6], o[:, 6:8], o[:, 11]
        acc = 2.0 * e - 2.0 * v
        a = np.zeros((1, 4), np.float32)
        a[:, 0] = -acc[:, 2] / g
        a[:, 1] = -(4 * (-acc[:, 1] / g - d[:, 1])) / 3
        a[:, 2] = (4 * (-acc[:, 0] / g - d[:, 0])) / 3
        a[:, 3] = yaw / 1.5
        return np.clip(a, -1, 1)

    obs = one.reset(seed=2)[0]
    for k in range(250):
        obs, reward, terminated, truncated, _ = one.step(hold(obs))
        assert not terminated[0], f"step {k + 1} ended the hover"
        assert truncated[0] == (k == 249)


def test_gymnasium_env_checker_passes():
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("nexus/Hover-v0")
    try:
        check_env(env.unwrapped, skip_render_check=True)
    finally:
        env.close()


def test_make_vec_gives_the_vector_env_and_skrl_wraps_it_unchanged():
    from skrl.envs.wrappers.torch import wrap_env

    env = gymnasium.make_vec("nexus/Waypoint-v0", num_envs=3, vectorization_mode="vector_entry_point")
    try:
        assert isinstance(env, NexusVectorEnv) and env.num_envs == 3
        assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
        assert env.observation_space.shape == (3, 12) and env.action_space.shape == (3, 4)
        wrapped = wrap_env(env, wrapper="gymnasium")
        assert wrapped.num_envs == 3
        obs, _ = wrapped.reset()
        assert tuple(obs.shape) == (3, 12)
    finally:
        env.close()


@pytest.mark.parametrize("kwargs, words", [
    ({"task": "loop"}, "task='loop': unknown task; choose one of hover, waypoint, track"),
    ({"num_envs": 0}, "num_envs=0: training flies at least one world"),
    ({"policy_hz": 60.0}, "policy_hz=60.0: the tick rate 250 Hz / 60 Hz is 4.16667 ticks, not a whole number"),
    ({"action": "torques"}, "action='torques': unknown action; choose one of ctbr, motors"),
])
def test_bad_input_is_one_line_before_anything_is_built(kwargs, words):
    with pytest.raises(BuildError) as error:
        NexusVectorEnv(**kwargs)
    assert words in str(error.value) and "\n" not in str(error.value)


def test_the_track_task_shows_the_references_velocity():
    """The figure-eight x = sin(wt), y = sin(2wt)/2 (1 m, w = 2π/8 s): at t = 0.02 s, the first step, its velocity is
    (0.785398·cos(0.015708), 0.785398·cos(0.031416)) = (0.785301, 0.785011) m/s, |v| = 1.110378 m/s. The
    observation turns it into the heading frame (a rotation: the norm stays) and adds no noise to it."""
    env = gymnasium.make_vec("nexus/Track-v0", num_envs=1, vectorization_mode="vector_entry_point")
    try:
        obs, _ = env.reset(seed=3)
        assert obs.shape == (1, 15)
        obs = env.step(np.zeros((1, 4), dtype=np.float32))[0]
        assert np.hypot(obs[0, 12], obs[0, 13]) == pytest.approx(1.110378, abs=2e-6)
        assert obs[0, 14] == 0.0
    finally:
        env.close()
