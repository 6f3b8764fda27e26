"""The environment as Python meets it: its errors name its keywords (not `nexus train`'s options), an unknown
keyword names the valid ones, and Gymnasium's own checker passes without a warning and without a port."""

from __future__ import annotations

import socket
import warnings

import gymnasium
import pytest

import nexus.gym  # noqa: F401  (registers the ids)
from nexus.core.errors import BuildError
from nexus.gym.env import NexusVectorEnv

#: NexusVectorEnv's keywords, in order, as the error lists them.
KEYWORDS = ("num_envs, task, action, policy_hz, tick_hz, noise, vary, vehicle, scene, device, flight_seed, "
            "render_mode, render_host, render_port, observe, realtime, estimator, first_world")


@pytest.mark.parametrize("kwargs, words", [
    ({"num_envs": 0}, "num_envs=0: training flies at least one world; give a whole number, 1 or more"),
    ({"policy_hz": 60}, "policy_hz=60: the tick rate 250 Hz / 60 Hz is 4.16667 ticks, not a whole number; give a "
                        "rate that divides 250 Hz (e.g. 50 or 125)"),
    ({"policy_hz": 0}, "policy_hz=0: give a positive rate [Hz] that divides the tick rate 250 Hz"),
    ({"tick_hz": 0}, "tick_hz=0: give a positive tick rate [Hz], e.g. 250"),
    ({"noise": -1.0}, "noise=-1.0: the observation noise scale is 0 (no noise) or more"),
    ({"flight_seed": -1}, "flight_seed=-1: give a whole number, 0 or more"),
    ({"task": "loop"}, "task='loop': unknown task; choose one of hover, waypoint, track"),
    ({"action": "torques"}, "action='torques': unknown action; choose one of ctbr, motors"),
    ({"observe": "lidar"}, "observe='lidar': unknown observation; choose one of estimate, sensors"),
    ({"vary": "nowhere.toml"}, "vary='nowhere.toml': no such variation file"),
    ({"render_mode": "human", "render_port": 70000}, "render_port=70000: give a port from 1 to 65535, or 0"),
])
def test_bad_values_name_the_keyword_not_a_command_line_option(kwargs, words):
    with pytest.raises(BuildError) as error:
        NexusVectorEnv(**kwargs)
    message = str(error.value)
    assert message.startswith(words), message
    assert "--" not in message and "\n" not in message


def test_an_unknown_keyword_names_the_nearest_and_every_valid_one():
    with pytest.raises(TypeError) as error:
        NexusVectorEnv(num_envs=2, polcy_hz=50)
    assert str(error.value) == ("NexusVectorEnv: unknown keyword polcy_hz=50; did you mean policy_hz=? the keywords are "
                                + KEYWORDS)
    assert isinstance(error.value, BuildError)  # a one-line error for the command line too


def test_an_unknown_keyword_through_gymnasium_make_lists_the_one_world_keywords():
    with pytest.raises(TypeError) as error:
        gymnasium.make("nexus/Hover-v0", worlds=4)
    # Gymnasium re-raises a TypeError of the creator with " was raised from the environment creator ..." added.
    assert str(error.value).startswith("NexusEnv: unknown keyword worlds=4; the keywords are "
                                       + KEYWORDS.removeprefix("num_envs, ") + " was raised from"), str(error.value)


def test_gymnasium_check_env_passes_without_a_warning_and_binds_no_port(monkeypatch):
    """check_env also builds the env in each declared render mode ('human'), resets it and calls render(); that
    started the live view's server on port 8080. It also warned that render_fps was missing and that the
    observation bounds were infinite."""
    from gymnasium.utils.env_checker import check_env

    bound = []
    real_bind = socket.socket.bind

    def bind(self, address):
        bound.append(address)
        return real_bind(self, address)

    monkeypatch.setattr(socket.socket, "bind", bind)
    env = gymnasium.make("nexus/Hover-v0")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            check_env(env.unwrapped)
    finally:
        env.close()
    assert [str(w.message) for w in caught] == []
    assert bound == []
    assert env.unwrapped.metadata["render_fps"] == 50.0  # the policy rate [Hz]


def test_the_vector_env_declares_its_policy_rate_as_render_fps():
    env = NexusVectorEnv(num_envs=1, policy_hz=125.0)
    try:
        assert env.metadata["render_fps"] == 125.0
        assert env.metadata["autoreset_mode"] == gymnasium.vector.AutoresetMode.SAME_STEP
        assert NexusVectorEnv.metadata.get("render_fps") is None  # per environment, not on the class
    finally:
        env.close()
