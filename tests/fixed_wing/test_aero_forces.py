"""The wing's force stage against Beard and McLain's eq. 4.18-4.19 worked by hand, frames and signs included.

The Aerosonde's derivatives (vehicles/aerosonde.usda); rho 1.2682 kg/m³, S 0.55 m², b 2.8956 m, c 0.18994 m,
AR = b²/S = 15.2448. Nexus's body is FLU in an ENU world; the book's is FRD: the hand figures below are the
book's (FRD) turned into FLU by (x, y, z) -> (x, -y, -z).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.fixed_wing.wing_stage import aerosonde_wing, pitched, wing_wrench


@pytest.fixture(scope="module")
def wing():
    return aerosonde_wing()


def test_still_air_at_rest_adds_no_wrench(wing):
    force, moment = wing_wrench(wing)
    assert np.all(force == 0.0) and np.all(moment == 0.0)


def test_lift_drag_and_pitching_moment_at_ten_hundredths_of_a_radian(wing):
    # Level body sinking through still air at 20 m/s, 0.1 rad below its nose: alpha = 0.1, beta = 0.
    # q̄S = ½·1.2682·20²·0.55 = 139.502 N; CL = 0.23 + 5.61·0.1 = 0.791 (the blend's sigma is 9e-9 here);
    # CD = 0.791² / (π·0.9·15.2448) = 0.0145160 (the polar, C_D_p = 0): L = 110.3461 N, D = 2.02501 N.
    # Drag against the motion, lift across it and up: F = (−cos α·D + sin α·L, 0, sin α·D + cos α·L).
    # m (FRD) = q̄S·c·(0.0135 − 2.74·0.1) = −6.90247 N·m (nose down), which is +6.90247 about FLU +y.
    force, moment = wing_wrench(wing, velocity=(20.0 * math.cos(0.1), 0.0, -20.0 * math.sin(0.1)))
    np.testing.assert_allclose(force, [9.001336, 0.0, 109.996974], rtol=2e-5, atol=1e-4)
    np.testing.assert_allclose(moment, [0.0, 6.902471, 0.0], rtol=2e-5, atol=1e-4)


def test_wind_gives_the_same_wrench_as_the_same_motion_through_still_air(wing):
    # Only the velocity relative to the air counts: a body at rest in a wind blowing at it as it would fly.
    moving, moving_m = wing_wrench(wing, velocity=(20.0 * math.cos(0.1), 0.0, -20.0 * math.sin(0.1)))
    blown, blown_m = wing_wrench(wing, wind=(-20.0 * math.cos(0.1), 0.0, 20.0 * math.sin(0.1)))
    np.testing.assert_allclose(blown, moving, rtol=1e-6)
    np.testing.assert_allclose(blown_m, moving_m, rtol=1e-6)


def test_a_turned_body_turns_its_wrench_with_it(wing):
    # Nose north (yaw +90° about up), sinking as above: the force is the first test's turned by +90° about z.
    yaw = (0.0, 0.0, math.sin(math.pi / 4), math.cos(math.pi / 4))
    force, moment = wing_wrench(wing, velocity=(0.0, 20.0 * math.cos(0.1), -20.0 * math.sin(0.1)), rotation=yaw)
    np.testing.assert_allclose(force, [0.0, 9.001336, 109.996974], rtol=2e-5, atol=1e-4)
    np.testing.assert_allclose(moment, [-6.902471, 0.0, 0.0], rtol=2e-5, atol=1e-4)


def test_sideslip_pushes_the_body_back_into_the_wind_and_turns_its_nose_into_it(wing):
    # Level, moving east at 20 m/s and 2 m/s to its right (FLU −y): FRD v = +2, Va = 20.0998, β = asin(2/Va) =
    # 0.0996687, q̄S = ½·1.2682·Va²·0.55 = 140.897 N.
    # fy (FRD) = q̄S·C_Y_beta·β = −13.7622 N (to the left): +13.7622 along FLU y.
    # l (FRD) = q̄S·b·C_ell_beta·β = −5.28618 N·m (about x: the same in FLU).
    # n (FRD) = q̄S·b·C_n_beta·β = +2.96840 N·m (nose right, into the relative wind): −2.96840 about FLU z.
    # m (FRD) = q̄S·c·C_m_0 = 140.897·0.18994·0.0135 = +0.361287 N·m (alpha 0): −0.361287 about FLU y.
    force, moment = wing_wrench(wing, velocity=(20.0, -2.0, 0.0))
    assert force[1] == pytest.approx(13.762156, rel=2e-5)
    np.testing.assert_allclose(moment, [-5.286184, -0.361287, -2.968396], rtol=2e-5, atol=1e-4)


def test_pitch_rate_is_damped_and_adds_lift(wing):
    # Level at 20 m/s, alpha 0, pitching nose up at 0.5 rad/s (FRD q = +0.5, FLU ω_y = −0.5):
    # m (FRD) = q̄S·c·(0.0135 + C_m_q·c·q/(2Va)) = 26.4970·(0.0135 − 38.21·0.18994·0.5/40) = −2.04610 N·m:
    # +2.04610 about FLU +y (against the rate); lift q̄S·(0.23 + 7.95·0.18994·0.5/40) = 34.7186 N.
    force, moment = wing_wrench(wing, velocity=(20.0, 0.0, 0.0), angular_velocity=(0.0, -0.5, 0.0))
    assert moment[1] == pytest.approx(2.046102, rel=2e-5)
    assert force[2] == pytest.approx(34.718600, rel=2e-5)


def test_elevator_down_pitches_the_nose_down(wing):
    # +0.1 rad of elevator (trailing edge down) at 20 m/s, alpha 0: Δm (FRD) = q̄S·c·(−0.99)·0.1 = −2.62320 N·m,
    # ΔL = q̄S·0.13·0.1 = 1.81353 N.
    still, still_m = wing_wrench(wing, velocity=(20.0, 0.0, 0.0))
    force, moment = wing_wrench(wing, velocity=(20.0, 0.0, 0.0), surfaces=(0.0, 0.1, 0.0, 0.0))
    assert moment[1] - still_m[1] == pytest.approx(2.623203, rel=1e-4)
    assert force[2] - still[2] == pytest.approx(1.813526, rel=1e-4)


def test_wing_pitched_to_its_angle_of_attack_in_level_flight_lifts_straight_up(wing):
    # Pitched 0.1 rad nose up, flying level east: alpha = 0.1 again, and in the world the lift is vertical and
    # the drag horizontal: F = (−D, 0, L) with L = 110.3461 N and D = 2.02501 N from the second test.
    force, _ = wing_wrench(wing, velocity=(20.0, 0.0, 0.0), rotation=pitched(0.1))
    np.testing.assert_allclose(force, [-2.025007, 0.0, 110.346081], rtol=2e-5, atol=2e-4)
