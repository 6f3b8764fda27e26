"""The constant force on the base body: a force of its own (``base_force_*``), not a second wind.

It was drawn as ``wind_x``, ``wind_y``, ``wind_z``; a variation file that still gives those names is refused
with the new name, and ``nexus params`` lists the new names with their owner.
"""

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.plant.base_force import BASE_FORCE_DRAWS, BaseForce
from nexus.runtime.params import variation_names
from nexus.worlds.owners import drawn_parameters
from nexus.worlds.variation import load_variation


@pytest.mark.parametrize("axis", "xyz")
def test_an_old_wind_name_is_refused_with_the_new_name(tmp_path, axis):
    path = tmp_path / "vary.toml"
    path.write_text(f'mass = 1.0\nwind_{axis} = {{ dist = "normal", mean = 0.0, std = 0.3 }}\n')
    with pytest.raises(BuildError) as raised:
        load_variation(path, rotors=4, sensors=("Imu",), names=variation_names())
    assert str(raised.value) == (
        f"{path}:2: parameter 'wind_{axis}' was renamed 'base_force_{axis}' (constant force on the base body along "
        f"{axis}, world ENU [N]); write base_force_{axis} instead")


def test_the_force_is_declared_once_and_listed_with_its_owner():
    own = drawn_parameters(builtin_only=True)
    assert [own[d.name] for d in BASE_FORCE_DRAWS] == list(BASE_FORCE_DRAWS)
    assert not {"wind_x", "wind_y", "wind_z"} & set(own)  # the air's wind is wind_speed and wind_direction
    text = CliRunner().invoke(main, ["params", "--reader", "variation"]).output
    for axis in "xyz":
        line = next(row for row in text.splitlines() if row.startswith(f"base_force_{axis} "))
        assert "drawn into nexus.plant.base_force.BaseForce" in line and " N " in line


def test_the_force_is_read_by_name():
    assert [d.name for d in BaseForce.spec.arrays] == ["force"]


def test_the_gym_redraws_the_force_each_episode_through_its_named_array(tmp_path):
    from nexus.gym.env import NexusVectorEnv  # noqa: PLC0415  (reason: the gym's environment, only for this test)

    path = tmp_path / "vary.toml"
    path.write_text('base_force_x = {dist = "uniform", low = -2.0, high = 2.0}\nbase_force_z = 1.5\n')
    env = NexusVectorEnv(num_envs=2, task="hover", vary=str(path))
    env.reset(seed=3)
    assert env.draws.names == ("base_force_x", "base_force_z")
    x = env.draws.values("base_force_x")
    assert x[0] != x[1] and all(abs(v) <= 2.0 for v in x)
    assert list(env.draws.values("base_force_z")) == [1.5, 1.5]
