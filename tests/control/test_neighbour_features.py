"""A fleet policy's neighbour features as ``nexus run --controller policy`` builds them: each other vehicle of the
world in vehicle order, its position and velocity less this vehicle's, in this vehicle's heading frame (forward,
right, down) [m, m/s], what the multi-agent environment writes (tests/gym/test_multi_agent.py checks the same line
there); and the layout a fleet policy must declare."""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.control.policy.features import FEATURES, neighbour_features, parse_layout, split_neighbours

#: Heading east (NED yaw 90 degrees): a quarter turn about down, (x, y, z, w).
EAST = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))


def test_a_line_heading_east_sees_its_neighbours_ahead_and_behind():
    """Three vehicles 2 m apart along east, 1.5 m up, facing east: east is forward. Vehicle 0 sees vehicle 1 2 m
    ahead and vehicle 2 4 m ahead; vehicle 1 sees vehicle 0 2 m behind and vehicle 2 2 m ahead. Vehicle 2 flies
    north at 1 m/s: to a vehicle facing east that is to its left, right = -1 m/s, and to vehicle 2 the others
    move right at 1 m/s."""
    places = [[0.0, 0.0, -1.5], [0.0, 2.0, -1.5], [0.0, 4.0, -1.5]]
    velocities = [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    rows = neighbour_features(places, velocities, [EAST] * 3, 3)
    assert rows.shape == (3, 12)
    np.testing.assert_allclose(rows[0], [2, 0, 0, 0, 0, 0, 4, 0, 0, 0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(rows[1], [-2, 0, 0, 0, 0, 0, 2, 0, 0, 0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(rows[2], [-4, 0, 0, 0, 1, 0, -2, 0, 0, 0, 1, 0], atol=1e-6)


def test_two_worlds_never_see_each_other():
    """Slots 0, 1 are world 0 and slots 2, 3 world 1 (vehicle s % 2 of world s // 2): world 1's pair stands 100 m
    away and 3 m apart north-south, heading north (the identity), so slot 2 sees slot 3 3 m ahead, and 1 m higher
    is -1 m down."""
    north = (0.0, 0.0, 0.0, 1.0)
    places = [[0.0, 0.0, -1.5], [0.0, 2.0, -1.5], [100.0, 0.0, -1.5], [103.0, 0.0, -2.5]]
    rows = neighbour_features(places, np.zeros((4, 3)), [EAST, EAST, north, north], 2)
    np.testing.assert_allclose(rows[:, :3], [[2, 0, 0], [-2, 0, 0], [3, 0, -1], [-3, 0, 1]], atol=1e-6)


def test_a_layout_must_end_with_whole_neighbour_pairs():
    layout = parse_layout("position_error_heading:3,neighbour_position_heading:3,neighbour_velocity_heading:3",
                          FEATURES, "nexus:observation", "m.onnx")
    assert split_neighbours(layout, "nexus:observation", "m.onnx") == ([("position_error_heading", 3)], 1)
    for text in ("neighbour_position_heading:3,position_error_heading:3",
                 "position_error_heading:3,neighbour_position_heading:3",
                 "position_error_heading:3,neighbour_velocity_heading:3,neighbour_position_heading:3"):
        with pytest.raises(ValueError, match="must end with the neighbour features as pairs"):
            split_neighbours(parse_layout(text, FEATURES, "nexus:observation", "m.onnx"), "nexus:observation",
                             "m.onnx")
