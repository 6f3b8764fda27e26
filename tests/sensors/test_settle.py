"""The start-up's settle: on past its 0.2 s while the base still moves, so the first samples (the estimator's
alignment) are taken at rest; a base that never rests is a warning naming the world."""

from __future__ import annotations

import logging

import numpy as np

from nexus.runtime.startup import base_motion, settle
from tests.sensors.conftest import place, ring


def test_a_vehicle_dropped_from_higher_settles_on_until_it_rests(ground_vehicle, caplog):
    """Dropped from 0.45 m above where it rests (about 0.3 s to fall: √(2 · 0.45 / 9.81)), it is still falling at
    0.2 s; the settle goes on in 0.1 s steps until the base moves slower than 0.05 m/s and 0.05 rad/s."""
    loop = ring(ground_vehicle)
    place(ground_vehicle, (0.0, 0.0, 0.75))
    with caplog.at_level(logging.INFO, logger="nexus"):
        settle(loop, ground_vehicle.plant, 0.2)
    speed, rate = base_motion(ground_vehicle.plant)
    assert speed.max() < 0.05 and rate.max() < 0.05
    said = [r.getMessage() for r in caplog.records if "settled for" in r.getMessage()]
    assert len(said) == 1 and "the base moved after 0.2 s" in said[0]
    assert float(said[0].split("settled for ")[1].split(" s")[0]) > 0.2
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_base_that_never_rests_is_a_warning_naming_the_world(void_vehicle, caplog):
    """In a scene with no ground the base falls through the whole settle (0.2 s, then 2 s more): a warning names
    world 0, its speed (g · 2.2 s ≈ 21.6 m/s) and the time."""
    loop = ring(void_vehicle)
    place(void_vehicle, (0.0, 0.0, 50.0))
    with caplog.at_level(logging.INFO, logger="nexus"):
        settle(loop, void_vehicle.plant, 0.2)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert "world 0's base still moves at 21.6 m/s" in warned[0] and "after 2.2 s of settling" in warned[0]
    assert "\n" not in warned[0]
    assert "--solver" not in warned[0]  # it flies MuJoCo already: no other solver to suggest
    speed, _ = base_motion(void_vehicle.plant)
    assert np.isclose(speed[0], 9.80665 * 2.2, atol=0.05)
