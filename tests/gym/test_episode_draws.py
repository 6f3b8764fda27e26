"""Domain randomisation per episode: a world that resets draws fresh variation values from (seed, world, episode),
the others keep theirs, and world 0 flies the same bits alone or among others."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.gym.env import NexusVectorEnv

STEPS = 30  # 0.6 s at 50 Hz: world 1 at full thrust leaves the hover box within it
SEED = 5
VARY = 'mass = {dist = "uniform", low = 4.8, high = 5.3}\nthrust_scale = {dist = "uniform", low = 0.9, high = 1.1}\n'
#: Each world's episode-0 base mass [kg] for seed 5 (streams episode/0/vary/mass/<world>), about the file's 5.031 kg.
MASS_0 = [5.0919437, 5.1861716, 4.909754, 5.2655424]
#: World 1's episode-1 draws (streams episode/1/vary/mass/1 and episode/1/vary/thrust_scale/1).
MASS_1_WORLD_1 = 5.2829574
THRUST_1_WORLD_1 = 1.0770226


@pytest.fixture(scope="module")
def vary(tmp_path_factory):
    path = tmp_path_factory.mktemp("vary") / "vary.toml"
    path.write_text(VARY)
    return str(path)


def actions(worlds: int, k: int) -> np.ndarray:
    """World 0 and 2, 3 hold still (they fly on); world 1 asks for full thrust and ends its episode early."""
    rows = np.zeros((worlds, 4), dtype=np.float32)
    rows[:, 0] = 0.02 * np.sin(0.3 * k)
    if worlds > 1:
        rows[1] = 1.0
    return rows


def fly(env):
    obs, _ = env.reset(seed=SEED)
    record = {"obs": [obs.copy()], "reward": [], "ended": [], "mass": [env.draws.values("mass").copy()],
              "thrust": [env.draws.values("thrust_scale").copy()]}
    for k in range(STEPS):
        obs, reward, terminated, truncated, _ = env.step(actions(env.num_envs, k))
        record["obs"].append(obs.copy())
        record["reward"].append(reward.copy())
        record["ended"].append(terminated | truncated)
        record["mass"].append(env.draws.values("mass").copy())
        record["thrust"].append(env.draws.values("thrust_scale").copy())
    return {key: np.stack(rows) for key, rows in record.items()}


@pytest.fixture(scope="module")
def flown(vary):
    four = NexusVectorEnv(num_envs=4, task="hover", vary=vary)
    one = NexusVectorEnv(num_envs=1, task="hover", vary=vary)
    try:
        yield fly(four), fly(four), fly(one), four
    finally:
        one.close()
        four.close()


def test_episode_0_draws_come_from_the_seed_world_and_episode(flown):
    record = flown[0]
    assert np.allclose(record["mass"][0], MASS_0, rtol=0, atol=1e-6)
    # The stream's own uniform, by hand: low + (high - low) * u.
    u = RngTree(SEED).child("episode/0/vary/mass/2").generator().random()
    assert record["mass"][0][2] == pytest.approx(4.8 + 0.5 * u, abs=1e-6)


def test_a_world_that_ends_redraws_alone(flown):
    record = flown[0]
    ended = record["ended"]
    assert ended[:, 1].any() and not ended[:, [0, 2, 3]].any(), "world 1 alone must end within the flight"
    step = int(np.argmax(ended[:, 1]))  # its first episode ended at this step; values after it are episode 1's
    before, after = record["mass"][step], record["mass"][step + 1]
    assert np.allclose(before, MASS_0, rtol=0, atol=1e-6)
    assert after[1] == pytest.approx(MASS_1_WORLD_1, abs=1e-6)
    assert np.array_equal(after[[0, 2, 3]], before[[0, 2, 3]])
    thrust = record["thrust"][step + 1]
    assert np.allclose(thrust[1], THRUST_1_WORLD_1, rtol=0, atol=1e-6)  # one draw shared by the four rotors
    assert np.array_equal(thrust[[0, 2, 3]], record["thrust"][0][[0, 2, 3]])


def test_same_seed_same_sequence(flown):
    first, second = flown[0], flown[1]
    for key in first:
        assert np.array_equal(first[key], second[key]), key


def test_world0_alone_equals_world0_of_four_with_variation(flown):
    four, one = flown[0], flown[2]
    assert np.array_equal(one["obs"][:, 0], four["obs"][:, 0])
    assert np.array_equal(one["reward"][:, 0], four["reward"][:, 0])
    assert np.array_equal(one["mass"][:, 0], four["mass"][:, 0])


def test_reset_without_seed_draws_every_worlds_next_episode(flown):
    env = flown[3]
    env.reset(seed=SEED)
    env.reset()  # every world's episode 1
    assert env.draws.values("mass")[1] == pytest.approx(MASS_1_WORLD_1, abs=1e-6)
    u = RngTree(SEED).child("episode/1/vary/mass/3").generator().random()
    assert env.draws.values("mass")[3] == pytest.approx(4.8 + 0.5 * u, abs=1e-6)


def test_start_placement_is_refused(tmp_path):
    path = tmp_path / "start.toml"
    path.write_text('mass = 1.2\nstart_x = {dist = "uniform", low = -1.0, high = 1.0}\n')
    with pytest.raises(BuildError, match=r"start\.toml:2: parameter 'start_x': the task draws each episode's start"):
        NexusVectorEnv(num_envs=1, task="hover", vary=str(path))


def test_the_redrawn_mass_is_the_mass_that_flies(tmp_path):
    """Action 0 is the hover thrust of the vehicle as its file gives it (base 5.031 kg + 4 rotors of 0.2 kg =
    5.831 kg), whatever mass a world drew: a world drawn lighter climbs at g (5.831 / m - 1)."""
    path = tmp_path / "mass.toml"
    path.write_text('mass = {dist = "choice", values = [0.6, 3.0]}\n')
    env = NexusVectorEnv(num_envs=4, task="hover", vary=str(path), noise=0.0)
    try:
        env.reset(seed=1)
        env.reset()  # episode 1's draws, written over episode 0's
        mass = env.draws.values("mass")
        for _ in range(10):  # 0.2 s
            env.step(np.zeros((4, 4), dtype=np.float32))
        down = np.array([float(row["velocity"][2]) for row in env.loop.output("estimate").numpy()])
    finally:
        env.close()
    assert sorted(mass.tolist()) == pytest.approx([0.6, 0.6, 3.0, 3.0])
    # Base 3.0 kg: 3.8 kg in all, 9.81 x (5.831 / 3.8 - 1) = 5.25 m/s^2 up, -1.05 m/s after 0.2 s; base 0.6 kg:
    # 1.4 kg, 31.05 m/s^2, -6.21 m/s. Within 0.5 m/s: the start's velocity (up to 0.3 m/s an axis) and tilt.
    expected = np.where(mass > 1.0, -1.05, -6.21)
    assert np.allclose(down, expected, atol=0.5), (mass, down)
