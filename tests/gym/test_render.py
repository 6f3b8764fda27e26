"""``render_mode="human"``: world 0 in the live view of ``nexus run --view``, served over HTTP while it steps."""

from __future__ import annotations

import socket
import urllib.request

import gymnasium
import numpy as np
import pytest

import nexus.gym  # noqa: F401  (registers the ids)
from nexus.core.errors import BuildError
from nexus.gym.env import NexusVectorEnv
from nexus.viz.errors import ViewerError


def test_human_render_serves_world_0_while_it_steps():
    env = gymnasium.make("nexus/Hover-v0", render_mode="human", render_port=0, noise=0.0)
    try:
        vector = env.unwrapped.vector
        env.reset(seed=3)
        assert env.render() is None
        assert vector.live is None and vector.render_url is None  # no server before the first step
        env.step(np.zeros(4, dtype=np.float32))
        url = vector.render_url
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.status == 200 and b"<html" in answer.read(200).lower()  # viser's page
        live = vector.live
        assert live.frames == 1  # the new episode's first step draws
        start = live.flown[-1].copy()
        for _ in range(10):
            env.step(np.zeros(4, dtype=np.float32))
        env.render()
        # The frame render forces is world 0 as the physics holds it: the base body's ENU position [m].
        assert np.allclose(live.flown[-1], vector.loop.output("body/base").numpy()[0]["pose"][:3])
        assert np.linalg.norm(live.flown[-1] - start) > 1e-3  # it moved in 10 steps (0.2 s) of hover [m]
        env.reset()
        assert live.flown == []  # a new episode starts its path afresh
    finally:
        env.close()
    assert vector.live is None


def test_render_mode_rgb_array_is_refused():
    with pytest.raises(BuildError, match=r"render_mode 'rgb_array': this environment renders 'human'"):
        NexusVectorEnv(num_envs=1, render_mode="rgb_array")


def test_human_render_on_a_busy_port_is_refused_at_the_first_step():
    """The view binds its port when it starts, at the first step (building and resetting bind none)."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = NexusVectorEnv(num_envs=1, render_mode="human", render_port=port)
        try:
            env.reset(seed=0)
            with pytest.raises(ViewerError, match=f"port {port} on 127.0.0.1 is in use .*pass render_port= with a "
                                                  "free port"):
                env.step(np.zeros((1, 4), dtype=np.float32))
            assert env.live is None
        finally:
            env.close()
