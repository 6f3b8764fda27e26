"""What a rollout refuses, in one line, before anything runs: never a silent zero gradient."""

import pytest

from nexus.core.errors import BuildError
from nexus.diff import Rollout


@pytest.mark.parametrize(("options", "message"), [
    ({"solver": "mujoco"}, r"--solver mujoco: a gradient through SolverMuJoCo's step is zero .* --solver featherstone"),
    ({"controller": "px4"}, r"--controller px4: its host stage\(s\) 'exchange' run Python between kernels"),
    ({"controller": "mpc"}, r"--controller mpc: its host stage\(s\) 'mpc'"),
    ({"controller": "policy"}, r"--controller policy: its host stage\(s\) 'policy'"),
    ({"loss": "speed"}, r"--loss speed: unknown loss; choose one of altitude, yaw, figure8, energy"),
    ({"start_height": 0.0}, r"start height 0.0 m: a rollout starts in the air"),
])
def test_an_undifferentiable_rollout_is_refused_naming_what_and_how_to_fix_it(options, message):
    with pytest.raises(BuildError, match=message) as raised:
        Rollout(10, **options)
    assert "\n" not in str(raised.value)


def test_an_unknown_parameter_is_the_one_sentence_with_the_closest_names(climb):
    with pytest.raises(BuildError) as raised:
        climb.gradient("pid.kp_w")
    assert str(raised.value) == ("parameter 'pid.kp_w' is unknown; did you mean 'pid.kp_yaw' or 'pid.kp_z' or "
                                 "'pid.kd_yaw'? `nexus params --vehicle astro_max_base` lists every name and what "
                                 "reads it")
