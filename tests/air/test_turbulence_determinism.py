"""Turbulence draws from each world's own stream: a run repeats bit for bit, and world i of N is world i alone."""

from __future__ import annotations

import numpy as np

from nexus.air.wind_field import WindField
from tests.air.conftest import wind_series


def severe() -> WindField:
    return WindField(speed=6.0, direction=200.0, turbulence="severe")


def test_two_runs_of_one_seed_are_bit_identical_and_another_seed_differs():
    first = wind_series(severe(), 300, worlds=3, seed=11)
    again = wind_series(severe(), 300, worlds=3, seed=11)
    other = wind_series(severe(), 300, worlds=3, seed=12)
    assert np.array_equal(first, again)
    assert not np.array_equal(first, other)


def test_world_2_of_4_is_the_one_world_run_of_world_2():
    many = wind_series(severe(), 300, worlds=4, seed=5)
    alone = wind_series(severe(), 300, worlds=1, seed=5, first_world=2)
    assert np.array_equal(many[:, 2], alone[:, 0])


def test_worlds_draw_independent_noise():
    # A tick's change of the vertical gust is mostly that tick's draw: between two worlds with their own streams
    # the changes are uncorrelated (|r| about 1/sqrt(2000) = 0.02); with one shared stream r would be near 1.
    up = wind_series(severe(), 2000, worlds=2, seed=5)[:, :, 2]
    steps = np.diff(up, axis=0)
    assert abs(np.corrcoef(steps[:, 0], steps[:, 1])[0, 1]) < 0.1


def test_eager_and_captured_turbulence_are_bit_identical():
    captured = wind_series(severe(), 40, worlds=2, seed=9)
    eager = wind_series(severe(), 40, worlds=2, seed=9, mode="eager")
    assert np.array_equal(captured, eager)
