"""Past the stall angle the wing's lift coefficient falls as Beard and McLain's blend says (eq. 4.9-4.10).

The stage is evaluated on a level body sinking through still air at 20 m/s (alpha = the sink's angle below the
nose), and CL is read back from its force: L = F·(sin α, 0, cos α) (lift is across the motion, up), CL = L/(q̄S),
q̄S = ½·1.2682·20²·0.55 = 139.502 N. Hand figures for the Aerosonde (CL0 0.23, CLα 5.61, M 50, α0 0.47):

    σ(α) = (1 + e^(−M(α−α0)) + e^(M(α+α0))) / ((1 + e^(−M(α−α0)))(1 + e^(M(α+α0))))
    CL(α) = (1 − σ)(CL0 + CLα α) + σ·2·sign(α)·sin²α·cosα

    α = 0.40: σ = e^(−3.5)/(1 + e^(−3.5)) = 0.0293122, CL = 0.970688·2.474 + 0.0293122·0.279352 = 2.409670
    α = 0.47: σ = 1/2 exactly,                            CL = (2.8667 + 0.365732)/2 = 1.616216
    α = 0.50: σ = 1/(1 + e^(−1.5)) = 0.817574,            CL = 0.182426·3.035 + 0.817574·0.403423 = 0.883490
    α = 0.60: σ = 0.998499,                                CL = 0.001501·3.596 + 0.998499·0.526269 = 0.530877
    α = −0.60: the flat plate's mirror, CL = 0.001501·(0.23 − 3.366) − 0.998499·0.526269 = −0.530187
"""

from __future__ import annotations

import math

import pytest

from tests.fixed_wing.wing_stage import aerosonde_wing, wing_wrench

HAND = {0.40: 2.409670, 0.47: 1.616216, 0.50: 0.883490, 0.60: 0.530877, -0.60: -0.530187}
QBAR_S = 139.502  # [N]


@pytest.fixture(scope="module")
def lift_coefficients():
    wing = aerosonde_wing()
    found = {}
    for alpha in HAND:
        force, _ = wing_wrench(wing, velocity=(20.0 * math.cos(alpha), 0.0, -20.0 * math.sin(alpha)))
        found[alpha] = (force[0] * math.sin(alpha) + force[2] * math.cos(alpha)) / QBAR_S
    return found


@pytest.mark.parametrize("alpha", list(HAND))
def test_lift_coefficient_around_stall_is_the_blend_worked_by_hand(lift_coefficients, alpha):
    assert lift_coefficients[alpha] == pytest.approx(HAND[alpha], rel=1e-4, abs=1e-5)


def test_lift_falls_past_the_stall_angle(lift_coefficients):
    cl = lift_coefficients
    # The linear curve would keep rising (2.474, 2.867, 3.035, 3.596); the blended one drops to the flat plate's.
    assert cl[0.40] > cl[0.47] > cl[0.50] > cl[0.60]
    assert cl[0.60] < 0.25 * cl[0.40]
