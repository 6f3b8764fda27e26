"""The book's Aerosonde (tests/fixed_wing/book_model.py) against the authors' published numbers and hand work.

book_model is the reference the fixed-wing tests hold Nexus and JSBSim to, so it is checked here against what
does not come from it: mavsim's published trim and linear model at 25 m/s (Beard and McLain's simulator,
github.com/randybeard/mavsim_public, ``mavsim_python/design_projects/model_coef.py``, whose trim and ``A_lon``
their own numerical linearisation printed), the motor-propeller balance solved by hand, and Lanchester's
phugoid.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from tests.fixed_wing.book_model import (AEROSONDE, lift_coefficient, lift_slope, longitudinal_derivatives,
                                         longitudinal_matrix, longitudinal_modes, propeller, stall_blend, trim)

# mavsim's published trim at Va = 25 m/s, gamma = 0 (model_coef.py: x_trim, u_trim; alpha_trim):
# u = 24.968623 m/s, w = 1.252151 m/s, alpha = 0.050107 rad, elevator -0.125044 rad, throttle 0.676775.
MAVSIM_U, MAVSIM_W = 24.968623, 1.252151
MAVSIM_ALPHA, MAVSIM_ELEVATOR, MAVSIM_THROTTLE = 0.050107, -0.125044, 0.676775
# The same file's A_lon (state u, w, q, theta, h), the numerical Jacobian of mavsim's nonlinear model.
MAVSIM_A_LON = np.array([
    [-0.206751, 0.501088, -1.222177, -9.795068, -0.000000],
    [-0.561011, -4.463973, 24.370933, -0.540322, -0.000000],
    [0.200319, -3.992960, -5.294738, 0.000000, -0.000000],
    [0.000000, 0.000000, 0.999974, 0.000000, -0.000000],
    [0.050086, -0.998745, -0.000000, 24.999583, 0.000000]])


@pytest.fixture(scope="module")
def cruise():
    return trim(25.0)


def test_trim_at_25_mps_zeroes_the_accelerations_to_1e_9(cruise):
    du, dw, dq = longitudinal_derivatives(cruise.u, cruise.w, 0.0, cruise.theta, cruise.elevator, cruise.throttle)
    assert abs(du) < 1e-9 and abs(dw) < 1e-9 and abs(dq) < 1e-9
    assert cruise.theta == cruise.alpha  # level: gamma = 0
    assert 0.0 < cruise.throttle < 1.0


def test_trim_at_25_mps_is_mavsims_published_trim(cruise):
    # mavsim solved the same equations to about 1e-6 (its printout has six decimals).
    assert cruise.alpha == pytest.approx(MAVSIM_ALPHA, abs=2e-6)
    assert cruise.elevator == pytest.approx(MAVSIM_ELEVATOR, abs=2e-6)
    assert cruise.throttle == pytest.approx(MAVSIM_THROTTLE, abs=2e-6)
    assert cruise.u == pytest.approx(MAVSIM_U, abs=1e-5)
    assert cruise.w == pytest.approx(MAVSIM_W, abs=1e-5)


def test_trim_moment_balance_by_hand(cruise):
    # q = 0: C_m_0 + C_m_alpha alpha + C_m_delta_e delta_e = 0, so delta_e = (0.0135 - 2.74 alpha) / 0.99.
    assert cruise.elevator == pytest.approx((0.0135 - 2.74 * cruise.alpha) / 0.99, abs=1e-12)
    # Level flight: the lift is vertical and, with the thrust's share T sin(alpha), carries the weight:
    # L + T sin(alpha) = m g. qbar S = 0.5 * 1.2682 * 25^2 * 0.55 = 217.969 N, m g = 107.91 N, T = 0.954 N,
    # so C_L = (107.91 - 0.954 * 0.05009) / 217.969 = 0.49485.
    C_L = lift_coefficient(cruise.alpha) + 0.13 * cruise.elevator
    assert C_L == pytest.approx(0.49485, abs=2e-5)
    # And the thrust's horizontal share meets the drag: C_D = (0.23 + 5.61 * 0.050107)^2 / (pi * 0.9 * 15.2445)
    # + 0.0135 * (-0.125044) = 0.0043724, D = 217.969 * 0.0043724 = 0.95305 N, T = D / cos(alpha) = 0.95425 N.
    assert cruise.thrust == pytest.approx(0.95425, abs=2e-5)


def test_a_climbing_trim_pitches_by_the_path_angle_and_needs_more_throttle(cruise):
    gamma = math.radians(3.0)
    climb = trim(25.0, gamma)
    du, dw, dq = longitudinal_derivatives(climb.u, climb.w, 0.0, climb.theta, climb.elevator, climb.throttle)
    assert max(abs(du), abs(dw), abs(dq)) < 1e-9
    assert climb.theta == pytest.approx(climb.alpha + gamma, abs=1e-15)
    # Thrust rises by about m g sin(gamma) = 107.91 * 0.0523 = 5.65 N.
    assert climb.thrust - cruise.thrust == pytest.approx(5.65, abs=0.1)
    assert climb.throttle > cruise.throttle


def test_static_thrust_at_full_throttle_by_hand():
    # Va = 0, V_in = 44.4 V: a Omega^2 + b Omega + c = 0 with a = rho D^5 C_Q0 / (2 pi)^2 = 1.2682 * 0.033831 *
    # 0.00523 / 39.478 = 5.6839e-6, b = KV^2 / R = 0.065859^2 / 0.042 = 0.103266, c = -KV (44.4 / R - i0) =
    # -0.065859 * (1057.14 - 1.5) = -69.5217; Omega = (-b + sqrt(b^2 - 4 a c)) / (2 a) = 649.98 rad/s.
    # T = rho D^4 C_T0 Omega^2 / (2 pi)^2 = 1.2682 * 0.066597 * 0.09357 * 649.98^2 / 39.478 = 84.57 N.
    static = propeller(0.0, 1.0)
    assert static.omega == pytest.approx(649.98, abs=0.02)
    assert static.thrust == pytest.approx(84.57, abs=0.02)


def test_the_stall_blend_is_half_at_the_stall_angle_and_the_lift_falls_past_it():
    # sigma(alpha0) = (2 + e^(2 M alpha0)) / (2 (1 + e^(2 M alpha0))) = 1/2 + 1 / (2 (1 + e^47)) = 0.5.
    assert stall_blend(0.47) == pytest.approx(0.5, abs=1e-12)
    assert stall_blend(0.05) < 1e-8
    # Well past stall the wing is a flat plate: C_L(30 deg) = 2 sin^2 cos = 2 * 0.25 * 0.8660 = 0.4330.
    assert lift_coefficient(math.radians(30.0) + 0.47) < lift_coefficient(0.40)
    assert lift_coefficient(math.radians(60.0)) == pytest.approx(2 * 0.75 * 0.5, abs=1e-6)


def test_the_written_out_lift_slope_is_the_curve_s_slope():
    for alpha in (0.05, 0.3, 0.47, 0.6):
        h = 1e-6
        slope = (lift_coefficient(alpha + h) - lift_coefficient(alpha - h)) / (2 * h)
        assert lift_slope(alpha) == pytest.approx(slope, rel=1e-6, abs=1e-6)


def test_the_closed_form_matrix_is_mavsims_numerical_a_lon(cruise):
    A = longitudinal_matrix(cruise)
    mask = np.ones((5, 5), bool)
    # Z_theta: -g sin(theta*) = -9.81 sin(0.050107) = -0.4914 here; mavsim printed -0.5403 (its Jacobian is taken
    # on the quaternion state and converted), the one entry that differs by more than 0.003.
    mask[1, 3] = False
    assert np.max(np.abs(A - MAVSIM_A_LON)[mask]) < 0.003
    assert A[1, 3] == pytest.approx(-9.81 * math.sin(0.050107), abs=1e-5)
    # The eigenvalues of mavsim's matrix and of the closed form agree to 1 % in frequency and damping.
    theirs = sorted((lam for lam in np.linalg.eigvals(MAVSIM_A_LON) if lam.imag > 1e-9), key=abs)
    modes = longitudinal_modes(cruise)
    for name, lam in zip(("phugoid", "short_period"), theirs):
        wn, zeta = modes[name]
        assert wn == pytest.approx(abs(lam), rel=0.01)
        assert zeta == pytest.approx(-lam.real / abs(lam), rel=0.01)


def test_the_book_table_as_printed_misses_the_lift_turning_with_alpha(cruise):
    # Table 5.2 holds the stability-to-body rotation at alpha*: X_w loses rho S u (C_D sin a + C_L cos a) / (2 m)
    # = 1.2682 * 0.55 * 24.97 * (0.0044 * 0.05 + 0.4951 * 0.9987) / 22 = 0.39 of mavsim's 0.50.
    printed = longitudinal_matrix(cruise, rotation_terms=False)
    assert printed[0, 1] == pytest.approx(0.501088 - 0.39, abs=0.01)


def test_the_modes_are_two_complex_pairs_the_short_period_fast_and_well_damped(cruise):
    eig = np.linalg.eigvals(longitudinal_matrix(cruise))
    assert sum(1 for lam in eig if abs(lam.imag) > 1e-6) == 4
    assert min(abs(eig)) < 1e-9  # height does not feed back
    modes = longitudinal_modes(cruise)
    (wn_sp, zeta_sp), (wn_ph, zeta_ph) = modes["short_period"], modes["phugoid"]
    assert wn_sp > 10 * wn_ph and zeta_sp > zeta_ph > 0.0
    assert wn_sp == pytest.approx(11.01, abs=0.05) and zeta_sp == pytest.approx(0.443, abs=0.005)


def test_the_phugoid_is_near_lanchesters_frequency(cruise):
    # Lanchester: sqrt(2) g / Va = 1.41421 * 9.81 / 25 = 0.55494 rad/s, for a wing at fixed angle of attack whose
    # thrust balances drag at every speed. The Aerosonde's large pitch damping (C_m_q = -38.2) makes the wing
    # change its angle of attack while the path turns, which costs 9.8 % of the frequency (0.5004): 12 % bounds it.
    wn, _ = longitudinal_modes(cruise)["phugoid"]
    assert wn == pytest.approx(0.55494, rel=0.12)
    assert wn < 0.55494
    # Take away the pitch-rate derivatives and the propeller's speed dependence and Lanchester is exact (0.1 %).
    bare = dataclasses.replace(AEROSONDE, C_m_q=0.0, C_L_q=0.0, C_T1=0.0, C_T2=0.0, C_Q1=0.0, C_Q2=0.0)
    wn_bare, _ = longitudinal_modes(trim(25.0, p=bare), bare)["phugoid"]
    assert wn_bare == pytest.approx(0.55494, rel=0.001)
