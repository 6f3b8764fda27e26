"""``render_mode="human"`` steps at the speed of the wall clock (``realtime=``, the pacing of ``nexus run
--realtime``), and the pacing changes no observation, reward or flag."""

from __future__ import annotations

import time

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.gym.env import NexusEnv

STEPS = 25  # at 50 Hz: 5 ticks of 4 ms a step, 25 steps = 0.5 s of sim time
#: Slow motion: the paced steps take 5 s, several times what they take unpaced on a busy machine.
FACTOR = 0.1


def _fly(env, seed: int = 5) -> list[bytes]:
    """Every observation, reward and flag of a reset and STEPS steps of the same random actions, as bytes."""
    rng = np.random.default_rng(1)
    flown = [env.reset(seed=seed)[0].tobytes()]
    for _ in range(STEPS):
        stepped = env.step(rng.uniform(-0.3, 0.3, 4).astype(np.float32))
        flown += [np.asarray(value).tobytes() for value in stepped[:4]]
    return flown


def test_human_mode_steps_at_the_factor_and_flies_the_same_bits():
    paced = NexusEnv(render_mode="human", render_port=0, realtime=FACTOR)
    plain = NexusEnv()
    try:
        assert paced.vector.pacer is not None and paced.vector.pacer.factor == FACTOR and plain.vector.pacer is None
        began = time.monotonic()
        paced_flown = _fly(paced)
        wall = time.monotonic() - began
        assert paced_flown == _fly(plain)
    finally:
        paced.close()
        plain.close()
    # 0.5 s of sim at 0.1x: at least 5 s of wall time (a slow machine only adds to it).
    assert wall >= 5.0, wall
    assert paced.vector.pacer.ticks == STEPS * 5


def test_human_mode_unpaced_on_request():
    env = NexusEnv(render_mode="human", render_port=0, realtime=None)
    try:
        assert env.vector.pacer is None
    finally:
        env.close()


@pytest.mark.parametrize("bad", [0, -2.0])
def test_a_bad_realtime_is_one_line_naming_the_keyword(bad):
    with pytest.raises(BuildError) as raised:
        NexusEnv(render_mode="human", render_port=0, realtime=bad)
    assert str(raised.value) == (f"realtime={bad:g}: give a factor above 0, the speed against the wall clock (1: real "
                                 "time, 2: twice as fast, 0.5: half speed); give realtime=None to fly as fast as the "
                                 "machine can")
