"""``Rollout.from_config``: the rollout of the flight a RunConfig describes, plus the rollout's own settings."""

from __future__ import annotations

import pytest

from nexus.core.errors import BuildError
from nexus.diff import Rollout
from nexus.runtime.config import RunConfig


def test_a_config_gives_the_same_rollout_as_the_keywords():
    # 0.06 s at 250 Hz = 15 ticks; the keyword rollout says the same flight in its own words.
    config = RunConfig(duration=0.06, device="cpu", solver="featherstone", seed=3)
    made = Rollout.from_config(config, loss="altitude", checkpoint=None)
    plain = Rollout(15, loss="altitude", seed=3, checkpoint=None)
    assert made.ticks == 15 and made.worlds == 1 and made.dt == pytest.approx(0.004)
    assert made.forward() == plain.forward()  # bit for bit: the same flight
    assert made.get("pid.kp_z") == plain.get("pid.kp_z")


def test_ticks_given_win_over_the_configs_duration_and_the_tick_rate_is_the_configs():
    config = RunConfig(duration=10.0, tick_hz=500.0, device="cpu", solver="featherstone")
    made = Rollout.from_config(config, 8, checkpoint=None)
    assert made.ticks == 8 and made.dt == pytest.approx(0.002)


@pytest.mark.parametrize(("settings", "said"), [
    ({"solver": "mujoco"}, "--solver mujoco: a gradient through SolverMuJoCo's step is zero"),
    ({"solver": "featherstone", "substeps": 2}, "substeps 2: the differentiable rollout steps the solver once"),
    ({"solver": "featherstone", "controller": "hold"}, "--controller hold: the rollout differentiates the PID"),
])
def test_a_config_the_rollout_cannot_fly_is_refused_in_one_line(settings, said):
    with pytest.raises(BuildError, match="^" + said.replace("(", r"\(").replace(")", r"\)")):
        Rollout.from_config(RunConfig(device="cpu", **settings), 4)
