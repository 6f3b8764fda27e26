"""ReferenceTrajectory shapes and the tracking prims, checked against hand-worked geometry."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nexus  # noqa: F401  (registers the schemas before any stage opens)
from nexus.core.errors import BuildError
from nexus.guidance.reference import figure_eight, waypoints
from nexus.guidance.tracking import FigureEightGuidance, WaypointsGuidance
from nexus.schemas.reader import read_prim

START = np.array([0.5, -0.25, 0.0])  # where the vehicle rests [m, NED]


def lemniscate():
    # The figure-eight: 2 m wide, 2 m up, 8 s per lap; climb 4 s at 0.5 m/s, hold 1 s, 2 laps.
    return figure_eight(START, 0.3, 10.0, size=2.0, height=2.0, period=8.0, laps=2, climb_speed=0.5, hold_time=1.0)


def test_figure_eight_lasts_climb_hold_laps_and_two_half_period_ramps():
    # 2 m / 0.5 m/s = 4 s climb, 1 s hold, 2 laps x 8 s, ramps of 4 s (up) + 4 s (down) lose 4 s of phase: 4 + 1 + 16 + 4 = 25 s.
    ref = lemniscate()
    assert ref.duration == pytest.approx(25.0)
    assert ref.end_time == pytest.approx(35.0)


def test_figure_eight_is_two_metres_wide_one_deep_two_up():
    ref = lemniscate()
    t = np.linspace(15.0, 35.0, 4001)  # the laps
    p, _, _ = ref.sample(t)
    north, east, down = (p - START).T  # NED
    # a = size/2 = 1 m: east = a·sin φ spans ±1 m; north = (a/2)·sin 2φ spans ±0.5 m; down = −2 m throughout.
    assert east.max() == pytest.approx(1.0, abs=1e-4) and east.min() == pytest.approx(-1.0, abs=1e-4)
    assert north.max() == pytest.approx(0.5, abs=1e-4) and north.min() == pytest.approx(-0.5, abs=1e-4)
    assert np.allclose(down, -2.0)


def test_figure_eight_crosses_its_centre_at_a_omega_root_two():
    # At full speed, crossing the centre (φ = 2π): v_east = a·ω·cos φ, v_north = a·ω·cos 2φ, so |v| = a·ω·√2
    # = 1 · (2π/8) · √2 = 1.1107 m/s. φ = ω·(τ − ramp/2) = 2π at τ = 8 + 2 = 10 s into the laps (sim 15 + 10 = 25 s).
    ref = lemniscate()
    point = ref.at(25.0)
    assert np.allclose(point.position, START + [0.0, 0.0, -2.0], atol=1e-9)
    assert np.linalg.norm(point.velocity) == pytest.approx(1.1107, abs=1e-4)
    assert point.yaw == 0.3 and point.yaw_rate == 0.0


def test_velocity_and_acceleration_are_the_derivatives_of_position():
    ref = lemniscate()
    t = np.linspace(9.0, 36.0, 27001)  # before the start to after the end, 1 ms apart
    p, v, a = ref.sample(t)
    h = t[1] - t[0]
    assert np.abs(np.gradient(p, h, axis=0) - v)[1:-1].max() < 2e-3
    assert np.abs(np.gradient(v, h, axis=0) - a)[1:-1].max() < 2e-2
    # Continuous everywhere (no jump over 1 ms larger than the slope allows), at rest at both ends.
    assert np.abs(np.diff(v, axis=0)).max() < 5e-3
    assert np.allclose(v[0], 0.0) and np.allclose(v[-1], 0.0) and np.allclose(a[-1], 0.0)
    assert np.allclose(p[-1], START + [0.0, 0.0, -2.0], atol=1e-9)


def test_waypoints_reach_each_point_at_distance_over_speed_plus_dwell():
    # Legs: up 2 m (2 s at 1 m/s), east 2 m (2 s); each followed by a 0.5 s dwell: ends at 2 + 0.5 + 2 + 0.5 = 5 s.
    points = [START + [0, 0, -2], START + [0, 2, -2]]
    ref = waypoints(START, 0.0, 0.0, points, speed=1.0, dwell=0.5)
    assert ref.duration == pytest.approx(5.0)
    assert np.allclose(ref.at(2.0).position, points[0]) and np.allclose(ref.at(2.0).velocity, 0.0)
    assert np.allclose(ref.at(5.0).position, points[1])
    # Minimum-jerk leg: peak speed 1.875 × the average at mid-leg.
    assert np.linalg.norm(ref.at(3.5).velocity) == pytest.approx(1.875)


class _Ctx:
    path = "scenes/test.usda"


def build_tracking(prim, ctx):
    """As the assembly builds a scene's tracking prim: read against its class's spec, then ``from_prim``."""
    cls = FigureEightGuidance if prim.HasAPI("NexusFigureEightAPI") else WaypointsGuidance
    return cls.from_prim(prim, read_prim(prim, cls.spec, ctx.path), ctx)


_STAGES = []


def _prim(api: str, **attributes):
    from pxr import Sdf, Usd

    stage = Usd.Stage.CreateInMemory()
    _STAGES.append(stage)  # a prim expires with its stage
    prim = stage.DefinePrim("/scene/trajectory", "Scope")
    prim.AddAppliedSchema(api)
    for name, (type_name, value) in attributes.items():
        prim.CreateAttribute(f"nexus:{name}", getattr(Sdf.ValueTypeNames, type_name)).Set(value)
    return prim


def test_figure_eight_prim_plans_from_where_the_vehicle_rests():
    prim = _prim("NexusFigureEightAPI", size=("Float", 4.0))
    guidance = build_tracking(prim, _Ctx())
    ref = guidance.plan(START, 0.0, 0.0)
    east = ref.sample(np.linspace(0, ref.duration, 5001))[0][:, 1] - START[1]
    assert east.max() == pytest.approx(2.0, abs=1e-3)  # a = 4/2; the other fallbacks: 2 m up, 8 s, 2 laps
    assert ref.duration == pytest.approx(25.0)


@pytest.mark.parametrize("attribute, value, needle", [
    ("period", ("Float", 0.0), "nexus:period is 0 s; it must be > 0"),
    ("size", ("Float", float("nan")), "nexus:size is nan m; it must be finite (> 0)"),
    ("laps", ("Int", 0), "nexus:laps is 0; it must be >= 1"),
])
def test_bad_figure_eight_attribute_is_a_build_error_naming_file_prim_and_attribute(attribute, value, needle):
    prim = _prim("NexusFigureEightAPI", **{attribute: value})
    with pytest.raises(BuildError) as error:
        build_tracking(prim, _Ctx())
    message = str(error.value)
    assert needle in message and "scenes/test.usda" in message and "/scene/trajectory" in message


def test_empty_waypoints_is_a_build_error_saying_how_to_author_them():
    prim = _prim("NexusWaypointsAPI")
    with pytest.raises(BuildError, match=r"nexus:points is empty; author float3\[\] nexus:points"):
        build_tracking(prim, _Ctx())
