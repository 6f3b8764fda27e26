"""The vector environment over several processes: world i of N is world i of the one-process environment bit for
bit (observations, rewards, flags, final observations, per-episode draws), a shard that dies ends the environment
naming it and its worlds, and close() leaves no process behind.

The tests of this file share one sharded environment and run in order (pytest-xdist's ``--dist loadfile`` keeps a
file in one worker): the kill test is the last to use it.
"""

from __future__ import annotations

import os
import signal
import time

import gymnasium
import numpy as np
import pytest

import nexus.gym  # noqa: F401  (registers the ids)
from nexus.core.errors import BuildError
from nexus.gym import sharded_env
from nexus.gym.env import NexusVectorEnv
from nexus.gym.sharded_env import ShardError, ShardedVectorEnv, default_shards, make_vector_env, shard_ranges

SEED = 5
STEPS = 80  # world 3 ends episodes at steps 33 and 69, world 1 at 37 and 78 (seed 5)
VARY = 'mass = {dist = "uniform", low = 4.8, high = 5.3}\nthrust_scale = {dist = "uniform", low = 0.9, high = 1.1}\n'
#: World 3's episode-0 base mass [kg] for seed 5 (tests/gym/test_episode_draws.py's MASS_0[3]).
MASS_0_WORLD_3 = 5.2655424


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def gone(pids, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def actions(k: int) -> np.ndarray:
    """Four worlds' CTBR rows: world 1 at full thrust (its episodes end early), the others near hover with some
    roll so world 3 tips over and resets too."""
    rows = np.zeros((4, 4), dtype=np.float32)
    rows[:, 0] = 0.05 * np.sin(0.3 * k)
    rows[1, 0] = 1.0
    rows[3, 1] = 0.6
    return rows


@pytest.fixture(scope="module")
def vary(tmp_path_factory):
    path = tmp_path_factory.mktemp("vary") / "vary.toml"
    path.write_text(VARY)
    return str(path)


@pytest.fixture(scope="module")
def envs(vary):
    sharded = ShardedVectorEnv(num_envs=4, shards=2, vary=vary)
    one = NexusVectorEnv(num_envs=4, vary=vary)
    try:
        yield sharded, one
    finally:
        one.close()
        sharded.close()


def test_shards_split_the_worlds_in_contiguous_ranges_the_first_ones_longer():
    assert shard_ranges(5, 2) == [(0, 3), (3, 2)]
    assert shard_ranges(1024, 2) == [(0, 512), (512, 512)]
    assert shard_ranges(7, 3) == [(0, 3), (3, 2), (5, 2)]


def test_the_default_takes_one_shard_per_core_when_each_gets_16_worlds(monkeypatch):
    monkeypatch.setattr(sharded_env, "cores", lambda: 2)
    assert [default_shards(n) for n in (1, 16, 31, 32, 64, 1024)] == [1, 1, 1, 2, 2, 2]
    assert default_shards(1024, "cuda:0") == 1
    monkeypatch.setattr(sharded_env, "cores", lambda: 8)
    assert default_shards(64) == 4


def test_few_worlds_stay_in_one_process():
    env = make_vector_env(num_envs=2)
    try:
        assert isinstance(env, NexusVectorEnv)
    finally:
        env.close()


def test_bad_shard_counts_and_settings_are_refused_before_any_process_starts():
    with pytest.raises(BuildError, match=r"^shards=0: give a whole number of processes from 1 to the 4 worlds"):
        make_vector_env(num_envs=4, shards=0)
    with pytest.raises(BuildError, match=r"^shards=5: give a whole number of processes from 1 to the 4 worlds"):
        gymnasium.make_vec("nexus/Hover-v0", num_envs=4, vectorization_mode="vector_entry_point", shards=5)
    with pytest.raises(BuildError, match=r"^render_mode='human' with shards=2: world 0's live view needs its graph"):
        ShardedVectorEnv(num_envs=4, shards=2, render_mode="human")
    with pytest.raises(BuildError, match=r"^noise=-1: the observation noise scale is 0"):
        ShardedVectorEnv(num_envs=4, shards=2, noise=-1)
    with pytest.raises(TypeError, match=r"^ShardedVectorEnv: unknown keyword polcy_hz=50; did you mean policy_hz=\?"):
        ShardedVectorEnv(num_envs=4, shards=2, polcy_hz=50)


def test_a_world_flown_alone_with_first_world_draws_that_worlds_values(vary):
    env = NexusVectorEnv(num_envs=1, vary=vary, first_world=3)
    try:
        env.reset(seed=SEED)
        assert env.draws.values("mass")[0] == np.float32(MASS_0_WORLD_3)
    finally:
        env.close()


def test_world_i_of_the_sharded_env_is_world_i_of_one_process_bit_for_bit(envs):
    sharded, one = envs
    assert sharded.single_observation_space == one.single_observation_space
    assert sharded.action_space == one.action_space
    assert sharded.hover_fraction == one.hover_fraction
    a, _ = sharded.reset(seed=SEED)
    b, _ = one.reset(seed=SEED)
    assert np.array_equal(a, b)
    ended = np.zeros(4, dtype=int)
    for k in range(STEPS):
        got = sharded.step(actions(k))
        want = one.step(actions(k))
        for x, y in zip(got[:4], want[:4]):
            assert x.dtype == y.dtype and np.array_equal(x, y), k
        assert got[4].keys() == want[4].keys(), k
        for key in got[4]:
            assert np.array_equal(got[4][key], want[4][key]), (k, key)
        ended += want[2] | want[3]
    # Both shards saw episodes end (worlds 1 and 3): the per-episode draws and respawns crossed the split.
    assert ended[1] == 2 and ended[3] == 2
    a, _ = sharded.reset()  # no seed: each world's next episode
    b, _ = one.reset()
    assert np.array_equal(a, b)


def test_a_killed_shard_ends_the_env_naming_it_and_no_process_is_left(envs):
    sharded, _ = envs
    pids = sharded.pids
    os.kill(pids[1], signal.SIGKILL)
    with pytest.raises(ShardError, match=r"^shard 1 \(worlds 2-3\) of 4 was killed by SIGKILL; the environment is "
                                         r"closed$"):
        sharded.step(actions(0))
    assert gone(pids)
    with pytest.raises(ShardError, match="is closed"):
        sharded.step(actions(0))


def test_close_leaves_no_process():
    env = ShardedVectorEnv(num_envs=2, shards=2, noise=0.0)
    pids = env.pids
    assert all(alive(pid) for pid in pids)
    env.reset(seed=0)
    env.close()
    assert gone(pids)
    env.close()  # twice: nothing to do
