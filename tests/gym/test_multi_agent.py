"""The multi-agent environment over a fleet: shapes, the neighbour features against the line's hand offsets, the
swap's goals, autoreset per world (one agent's crash ends its world only, the others truncated), a collision
ending a world, determinism, the Gymnasium id, and PettingZoo's own parallel API test."""

from __future__ import annotations

import dataclasses
import warnings

import gymnasium
import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.gym import SWARM_ENV_IDS  # importing nexus.gym registers the ids
from nexus.gym.multi_agent import SwarmVectorEnv
from nexus.gym.swarm_tasks import SWARM_TASKS

#: The swap with every start exactly at its place in the line (no drawn offset, speed, tilt or yaw).
EXACT_SWAP = dataclasses.replace(SWARM_TASKS["swap"], spawn_position=0.0, spawn_velocity=0.0, spawn_tilt=0.0,
                                 spawn_yaw=0.0)


@pytest.fixture(scope="module")
def line():
    """Two worlds of three vehicles 2 m apart, exact starts, no observation noise."""
    env = SwarmVectorEnv(num_envs=2, vehicles=3, spacing=2.0, task=EXACT_SWAP, noise=0.0)
    yield env
    env.close()


def test_shapes_are_worlds_by_agents(line):
    obs, info = line.reset(seed=0)
    # 12 own features + 2 neighbours x (3 position + 3 velocity) = 24.
    assert obs.shape == (2, 3, 24) and obs.dtype == np.float32
    assert line.single_observation_space.shape == (3, 24)
    assert line.single_action_space.shape == (3, 4)
    obs, reward, terminated, truncated, info = line.step(np.zeros((2, 3, 4), dtype=np.float32))
    assert obs.shape == (2, 3, 24)
    assert reward.shape == terminated.shape == truncated.shape == (2, 3)
    with pytest.raises(ValueError, match=r"2 worlds x 3 agents x 4"):
        line.step(np.zeros((6, 4), dtype=np.float32))


def test_neighbours_at_reset_are_the_line_offsets(line):
    """Vehicles 2 m apart along east, heading east: in a vehicle's heading frame (forward = east, right = south)
    vehicle j sits (j - k) x 2 m forward of vehicle k, level, all at rest."""
    obs, _ = line.reset(seed=0)
    expected = {0: [[2.0, 0, 0, 0, 0, 0], [4.0, 0, 0, 0, 0, 0]],
                1: [[-2.0, 0, 0, 0, 0, 0], [2.0, 0, 0, 0, 0, 0]],
                2: [[-4.0, 0, 0, 0, 0, 0], [-2.0, 0, 0, 0, 0, 0]]}
    for world in range(2):
        for k, rows in expected.items():
            np.testing.assert_allclose(obs[world, k, 12:].reshape(2, 6), rows, atol=1e-5)


def test_swap_goal_is_the_mirror_vehicles_start(line):
    """Vehicle k aims at vehicle 2-k's start: its position error is (2 - 2k) x 2 m forward, nothing else."""
    obs, _ = line.reset(seed=0)
    for k, forward in enumerate((4.0, 0.0, -4.0)):
        own = np.zeros(12)
        own[0] = forward
        np.testing.assert_allclose(obs[0, k, :12], own, atol=1e-5)


def test_one_agents_crash_restarts_its_world_only(line):
    """World 1's vehicle 0 cuts its thrust and falls from 1.5 m; the world ends when it is below 0.15 m: free fall
    takes sqrt(2 x 1.35 / 9.81) = 0.525 s = 26 policy steps (the rotors spin down, so a little more). Its
    neighbours, hovering, are truncated; world 0 flies on; world 1's next episode starts in the same step."""
    line.reset(seed=0)
    actions = np.zeros((2, 3, 4), dtype=np.float32)
    actions[1, 0, 0] = -1.0  # collective 0
    for step in range(1, 60):
        obs, reward, terminated, truncated, info = line.step(actions)
        if terminated.any() or truncated.any():
            break
    assert 26 <= step <= 40, step
    assert terminated.tolist() == [[False, False, False], [True, False, False]]
    assert truncated.tolist() == [[False, False, False], [False, True, True]]
    assert info["_final_obs"].tolist() == [False, True]
    assert info["final_obs"][1, 0, 2] < -1.3  # its last height error: 1.5 m wanted, under 0.15 m flown
    np.testing.assert_allclose(obs[1, 1, 12:].reshape(2, 6)[:, 0], [-2.0, 2.0], atol=1e-5)  # back in line
    assert line.agent.episode.numpy().tolist() == [0, 0, 0, 1, 1, 1]
    assert reward[1, 0] < -9.0  # the crash penalty, 10


def test_reward_by_hand_in_a_close_line():
    """Three vehicles 1.2 m apart hovering for one policy step (0.02 s, barely moved). Proximity: each neighbour
    closer than 1.6 m costs (1 - 1.2/1.6)^2 = 0.0625. The middle vehicle's goal is its own start: goal term
    exp(0) = 1, two close neighbours, 1 - 0.125 = 0.875. Vehicle 0's goal is 2.4 m away: exp(-12) ~ 0, one
    close neighbour, -0.0625. Progress (10 per metre) and the rate and action terms are below 0.01 here. The
    truth estimator: the figures are the physics', not an estimator's settling after the restart; the neighbours
    from the true bodies, still 1.2 m either side of the middle one, level, all sinking alike."""
    env = SwarmVectorEnv(num_envs=1, vehicles=3, spacing=1.2, task=EXACT_SWAP, noise=0.0, estimator="truth",
                         neighbours="truth")
    try:
        env.reset(seed=0)
        obs, reward, terminated, truncated, _ = env.step(np.zeros((1, 3, 4), dtype=np.float32))
        np.testing.assert_allclose(reward[0], [-0.0625, 0.875, -0.0625], atol=0.01)
        np.testing.assert_allclose(obs[0, 1, 12:].reshape(2, 6), [[-1.2, 0, 0, 0, 0, 0], [1.2, 0, 0, 0, 0, 0]],
                                   atol=0.002)
        assert not terminated.any() and not truncated.any()
    finally:
        env.close()


def test_same_seed_same_observations():
    """Drawn starts (the swap's own spawn ranges) and observation noise: same seed, same bits; another seed, other
    starts."""
    env = SwarmVectorEnv(num_envs=2, vehicles=2)
    try:
        actions = np.random.default_rng(3).uniform(-0.05, 0.05, size=(15, 2, 2, 4)).astype(np.float32)

        def fly(seed):
            rows = [env.reset(seed=seed)[0].copy()]
            rows += [env.step(a)[0].copy() for a in actions]
            return np.stack(rows)

        first, again, other = fly(5), fly(5), fly(6)
        assert np.array_equal(first, again)
        assert not np.allclose(first[0], other[0])
        assert not np.allclose(first[0, 0], first[0, 1])  # each world its own draws
    finally:
        env.close()


def test_collision_ends_the_world_for_both():
    """A collision distance of 2.5 m with the vehicles 2 m apart: both collide at the first policy step, both
    terminated with the crash penalty (built through the registered id)."""
    assert SWARM_ENV_IDS == {"nexus/Swap-v0": "swap"}
    task = dataclasses.replace(EXACT_SWAP, collision_distance=2.5)
    env = gymnasium.make_vec("nexus/Swap-v0", num_envs=1, vectorization_mode="vector_entry_point", vehicles=2,
                             task=task, noise=0.0, neighbours="truth")
    try:
        obs, _ = env.reset(seed=0)
        np.testing.assert_allclose(obs[0, :, 12], [2.0, -2.0], atol=1e-5)  # truth: the same line
        obs, reward, terminated, truncated, info = env.step(np.zeros((1, 2, 4), dtype=np.float32))
        assert terminated.tolist() == [[True, True]] and truncated.tolist() == [[False, False]]
        assert (reward < -9.0).all()
    finally:
        env.close()


def test_bad_settings_are_one_line_errors():
    with pytest.raises(BuildError, match=r"vehicles=1: a multi-agent world holds at least two"):
        SwarmVectorEnv(vehicles=1)
    with pytest.raises(BuildError, match=r"neighbours='radar': choose one of estimate, truth"):
        SwarmVectorEnv(neighbours="radar")
    with pytest.raises(BuildError, match=r"task='race': unknown multi-agent task; choose one of swap"):
        SwarmVectorEnv(task="race")
    with pytest.raises(BuildError, match=r"spacing=0.0: give the distance between neighbouring vehicles"):
        SwarmVectorEnv(spacing=0.0)


def test_pettingzoo_parallel_api():
    pytest.importorskip("pettingzoo")
    from pettingzoo.test import parallel_api_test  # noqa: PLC0415  (reason: the learn extra's; skipped without)

    from nexus.gym.parallel_view import SwarmParallelEnv  # noqa: PLC0415  (reason: imports PettingZoo)

    env = SwarmParallelEnv(vehicles=3)
    try:
        assert env.possible_agents == ["vehicle_0", "vehicle_1", "vehicle_2"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a live agent left out of a dict, or a dead one kept, fails
            parallel_api_test(env, num_cycles=200)
        obs, _ = env.reset(seed=0)
        assert obs["vehicle_1"].shape == (24,)
    finally:
        env.close()
