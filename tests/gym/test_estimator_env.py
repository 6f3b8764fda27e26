"""The environment reads whichever estimator flies: with ``estimator="ekf"`` the policy's features are the filter's
estimate, not the truth; a respawn starts the filter at the new start (else its estimate stays at the old place
and ends the episode at once); ``estimator="truth"`` stays for learning without an estimator's errors."""

from __future__ import annotations

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.estimation.ekf import Ekf
from nexus.gym.env import NexusVectorEnv

SEED = 3
STEPS = 10  # 0.2 s at 50 Hz, near hover: no episode ends


def hover(worlds: int) -> np.ndarray:
    return np.zeros((worlds, 4), dtype=np.float32)


@pytest.fixture(scope="module")
def flown():
    """Both estimators, two worlds, no observation noise: the observations after reset and after each step."""
    out = {}
    for estimator in ("truth", "ekf"):
        env = NexusVectorEnv(num_envs=2, estimator=estimator, noise=0.0)
        try:
            obs, _ = env.reset(seed=SEED)
            rows, ended = [obs.copy()], np.zeros(2, dtype=bool)
            state = None
            filters = [c for c in env.loop.components if isinstance(c, Ekf)]
            if filters:
                arrays = env.loop.states.of(filters[0])
                state = {name: arrays[name].numpy().copy() for name in ("nominal", "attitude", "covariance")}
            for _ in range(STEPS):
                obs, _, terminated, truncated, _ = env.step(hover(2))
                rows.append(obs.copy())
                ended |= terminated | truncated
            out[estimator] = {"obs": np.stack(rows), "ended": ended, "filters": len(filters), "state": state}
        finally:
            env.close()
    return out


def test_the_ekf_env_flies_a_filter_and_the_truth_env_none(flown):
    assert flown["ekf"]["filters"] == 1 and flown["truth"]["filters"] == 0


def test_a_reset_starts_the_filter_at_the_true_start_with_its_initial_covariance(flown):
    state = flown["ekf"]["state"]
    # Position and velocity at the respawn's true values: the truth env's first features are the same start.
    assert np.array_equal(flown["ekf"]["obs"][0], flown["truth"]["obs"][0])
    # PX4's defaults: EKF2_GPS_P_NOISE 0.5 m, EKF2_GPS_V_NOISE 0.3 m/s, EKF2_ANGERR_INIT 0.1 rad.
    want = np.float32([0.25] * 3 + [0.09] * 3 + [0.01] * 3)
    for w in range(2):
        p = state["covariance"][w]
        np.testing.assert_allclose(np.diag(p)[:9], want, rtol=1e-6)  # sigma squared in float32
        block = p[:9, :].copy()
        block[np.arange(9), np.arange(9)] = 0.0
        assert not block.any() and not p[:, :9][9:].any()  # no correlation with the biases, or within
        assert np.array_equal(p, p.T)


def test_the_ekf_envs_estimate_features_differ_from_the_truths(flown):
    ekf, truth = flown["ekf"]["obs"], flown["truth"]["obs"]
    gap = np.abs(ekf[1:] - truth[1:])
    assert gap.max() > 1e-3  # the features are the filter's, not the truth's
    # ... but it follows the truth: position error features within 3 initial sigma (3 x 0.5 m), velocity within
    # 3 x 0.3 m/s, over the 0.2 s after the start.
    assert gap[:, :, 0:3].max() < 1.5 and gap[:, :, 3:6].max() < 0.9


def test_no_episode_ends_in_the_first_steps_near_hover_on_either_estimator(flown):
    """Without the filter's restart the EKF env's worlds end at the first step (its estimate on the ground)."""
    assert not flown["ekf"]["ended"].any() and not flown["truth"]["ended"].any()


def test_an_unknown_estimator_is_refused_in_one_line():
    with pytest.raises(BuildError, match=r"^estimator='kalman': unknown estimator; choose one of vehicle, truth, ekf "
                                         r"\(vehicle: the one its file declares\)$"):
        NexusVectorEnv(num_envs=1, estimator="kalman")
