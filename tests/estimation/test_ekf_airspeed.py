"""The EKF's airspeed fusion and wind states on known numbers: the true airspeed's Jacobian, one fusion step against a
Kalman update worked by hand, the wind's covariance prediction, and a filter fusing airspeed on a vehicle without a
pitot refused in one line. The flights are in tests/fixed_wing/test_aerosonde_ekf_airspeed.py.
"""

import numpy as np
import pytest
import warp as wp

from nexus.estimation.ekf_math import (
    fuse_with_wind, predict_wind_covariance, sideslip_attitude_jacobian, sideslip_velocity_jacobian,
    true_airspeed_jacobian, vec15, vec17, wind_innovation_variance,
)
from tests.estimation.test_ekf_flight import EKF_PRIM, layer, refused

VN, WN = 3, 15  # the north velocity's and the north wind's index in the 17-state error vector


@wp.kernel
def _jacobian(v: wp.vec3, w: wp.vec3, out: wp.array(dtype=wp.vec3)):
    out[0] = true_airspeed_jacobian(v, w)


@wp.kernel
def _fuse(P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32), h: vec15, hw: wp.vec2, nu: float,
          r: float, S: wp.array(dtype=float), dx: wp.array(dtype=vec17)):
    S[0] = wind_innovation_variance(P, Pw, 0, h, hw, r)
    dx[0] = fuse_with_wind(P, Pw, 0, h, hw, nu, r)


@wp.kernel
def _predict(Pw: wp.array3d(dtype=wp.float32), T: float, dv: wp.vec3, R: wp.mat33, q: float, limit: float):
    predict_wind_covariance(Pw, 0, T, dv, R, q, limit)


@wp.kernel
def _sideslip(R: wp.mat33, air: wp.vec3, out: wp.array(dtype=wp.vec3)):
    out[0] = sideslip_velocity_jacobian(R, air)
    out[1] = sideslip_attitude_jacobian(R, air)


def sideslip(air):
    out = wp.zeros(2, dtype=wp.vec3, device="cpu")
    wp.launch(_sideslip, 1, inputs=[wp.mat33(np.eye(3)), wp.vec3(*air), out], device="cpu")
    return out.numpy()


def jacobian(v, w):
    out = wp.zeros(1, dtype=wp.vec3, device="cpu")
    wp.launch(_jacobian, 1, inputs=[wp.vec3(*v), wp.vec3(*w), out], device="cpu")
    return out.numpy()[0]


def full(P, Pw):
    """The 17×17 covariance [[P, C], [Cᵀ, W]] from the filter's two arrays."""
    out = np.zeros((17, 17))
    out[:15, :15], out[:, 15:] = P, Pw
    out[15:, :15] = Pw[:15].T
    return out


def test_the_true_airspeed_jacobian_is_the_air_relative_velocitys_direction():
    # v = (20, 0, 0), w = (3, 0): air (17, 0, 0), h = 17 m/s; ∂h/∂v = (1, 0, 0), and ∂h/∂w = −(1, 0).
    assert jacobian((20.0, 0.0, 0.0), (3.0, 0.0, 0.0)) == pytest.approx([1.0, 0.0, 0.0])
    # v = (15, 8, 0), w = (3, −1): air (12, 9, 0), |air| = 15: (12/15, 9/15, 0) = (0.8, 0.6, 0).
    assert jacobian((15.0, 8.0, 0.0), (3.0, -1.0, 0.0)) == pytest.approx([0.8, 0.6, 0.0], abs=1e-7)
    # A climb: v = (12, 0, −5) (down −5), no wind: |air| = 13; (12/13, 0, −5/13). The vertical wind is zero.
    assert jacobian((12.0, 0.0, -5.0), (0.0, 0.0, 0.0)) == pytest.approx([12 / 13, 0.0, -5 / 13], abs=1e-7)


def test_the_synthetic_sideslips_jacobian_worked_by_hand():
    # Heading north, level (R = I), through the air at (25, 0, 0): β = a_y/a_x = 0; ∂β/∂v = e_y/25 = (0, 0.04, 0);
    # ∂β/∂δθ = g × air = (0, 0.04, 0) × (25, 0, 0) = (0, 0, −1): yawing right by δψ turns the air to the left, β = −δψ.
    dv, dtheta = sideslip((25.0, 0.0, 0.0))
    assert dv == pytest.approx([0.0, 0.04, 0.0], abs=1e-7) and dtheta == pytest.approx([0.0, 0.0, -1.0], abs=1e-6)
    # Air from the side, (20, 5, 0): β = 0.25; ∂β/∂v = (e_y − 0.25·e_x)/20 = (−0.0125, 0.05, 0); yawing by ψ,
    # β(ψ) = (5·cos ψ − 20·sin ψ)/(20·cos ψ + 5·sin ψ), dβ/dψ(0) = (−20·20 − 5·5)/20² = −1.0625.
    dv, dtheta = sideslip((20.0, 5.0, 0.0))
    assert dv == pytest.approx([-0.0125, 0.05, 0.0], abs=1e-7) and dtheta == pytest.approx([0.0, 0.0, -1.0625], abs=1e-6)
    # Sinking through the air, (20, 0, 2): rolling right by φ tilts the right wing's axis to (0, cos φ, sin φ), so
    # a_y = 2·sin φ and β = 0.1·φ: ∂β/∂δθ_N = 0.1 (and −1 on the yaw as before).
    dv, dtheta = sideslip((20.0, 0.0, 2.0))
    assert dtheta == pytest.approx([0.1, 0.0, -1.0], abs=1e-6)


def test_one_airspeed_fusion_matches_the_scalar_kalman_update_by_hand():
    # P: every one of the 15 states variance 1; the wind's W = diag(0.25, 0.25); the north velocity and north wind
    # correlated, C[vN, wN] = 0.1. v = (20, 0, 0), w = (3, 0): h = 17 m/s; H = +1 on vN, −1 on wN.
    # A pitot reading 18 m/s: ν = 1; R = EKF2_EAS_NOISE² = 1.4² = 1.96.
    # P·Hᵀ: vN 1 − 0.1 = 0.9, wN 0.1 − 0.25 = −0.15, nothing else. H·P·Hᵀ = 0.9 + 0.15 = 1.05; S = 1.05 + 1.96 = 3.01.
    # K = P·Hᵀ/S: vN 0.9/3.01 = 0.2990033, wN −0.15/3.01 = −0.0498339; δx = K·ν.
    # P⁺ = P − (P·Hᵀ)(P·Hᵀ)ᵀ/S: vN,vN 1 − 0.81/3.01 = 0.7308970; vN,wN 0.1 + 0.135/3.01 = 0.1448505;
    # wN,wN 0.25 − 0.0225/3.01 = 0.2425249; the others as they were.
    P = np.eye(15, dtype=np.float32)
    Pw = np.zeros((17, 2), dtype=np.float32)
    Pw[15, 0] = Pw[16, 1] = 0.25
    Pw[VN, 0] = 0.1
    p = wp.array(P[None], dtype=wp.float32, device="cpu")
    pw = wp.array(Pw[None], dtype=wp.float32, device="cpu")
    d = jacobian((20.0, 0.0, 0.0), (3.0, 0.0, 0.0))
    h = vec15()
    for r in range(3):
        h[VN + r] = float(d[r])
    S = wp.zeros(1, dtype=float, device="cpu")
    dx = wp.zeros(1, dtype=vec17, device="cpu")
    wp.launch(_fuse, 1, inputs=[p, pw, h, wp.vec2(-float(d[0]), -float(d[1])), 18.0 - 17.0, 1.96, S, dx], device="cpu")
    assert S.numpy()[0] == pytest.approx(3.01, abs=1e-6)
    step = dx.numpy()[0]
    assert step[VN] == pytest.approx(0.2990033, abs=1e-6) and step[WN] == pytest.approx(-0.0498339, abs=1e-6)
    assert np.count_nonzero(step) == 2
    after = full(p.numpy()[0], pw.numpy()[0])
    assert after[VN, VN] == pytest.approx(0.7308970, abs=1e-6)
    assert after[VN, WN] == pytest.approx(0.1448505, abs=1e-6) and after[WN, VN] == pytest.approx(0.1448505, abs=1e-6)
    assert after[WN, WN] == pytest.approx(0.2425249, abs=1e-6)
    assert after[16, 16] == pytest.approx(0.25) and after[4, 4] == pytest.approx(1.0) and after[0, 0] == 1.0
    assert np.array_equal(after, after.T) and np.linalg.eigvalsh(after).min() > 0.0


def test_the_wind_covariance_prediction_carries_the_velocitys_correlation_by_hand():
    # T = 0.01 s, no specific force change, level (R = I): F adds δp += T·δv, δv −= T·δb_a, δθ −= T·δb_g; the wind
    # a random walk. With C[vN, wN] = 0.5, C[b_aN, wN] = 0.2, C[b_gD, wE] = 0.3, W = diag(1, 2), q = 0.05²·0.01 and
    # a variance limit of 1.5: C[pN, wN] = 0 + T·0.5 = 0.005; C[vN, wN] = 0.5 − T·0.2 = 0.498;
    # C[θD, wE] = 0 − T·0.3 = −0.003; W = diag(1 + 2.5e-5, 2) (the east axis is above the limit: no noise added);
    # the rest unchanged (C[b_aN, wN] = 0.2, C[b_gD, wE] = 0.3).
    Pw = np.zeros((17, 2), dtype=np.float32)
    Pw[3, 0], Pw[12, 0], Pw[11, 1] = 0.5, 0.2, 0.3
    Pw[15, 0], Pw[16, 1] = 1.0, 2.0
    pw = wp.array(Pw[None], dtype=wp.float32, device="cpu")
    wp.launch(_predict, 1, inputs=[pw, 0.01, wp.vec3(0.0, 0.0, 0.0), wp.mat33(np.eye(3)), 0.05 * 0.05 * 0.01, 1.5],
              device="cpu")
    got = pw.numpy()[0]
    assert got[0, 0] == pytest.approx(0.005, abs=1e-8) and got[3, 0] == pytest.approx(0.498, abs=1e-7)
    assert got[8, 1] == pytest.approx(-0.003, abs=1e-8)
    assert got[12, 0] == pytest.approx(0.2) and got[11, 1] == pytest.approx(0.3)
    assert got[15, 0] == pytest.approx(1.000025, abs=1e-7) and got[16, 1] == 2.0
    assert got[15, 1] == 0.0 and got[16, 0] == 0.0


def test_fusing_airspeed_on_a_vehicle_without_a_pitot_is_refused(tmp_path):
    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:EKF2_ARSP_THR = 9\n    }')
    message = refused(path)
    assert str(path) in message and "/vehicle/ekf" in message and "nexus:EKF2_ARSP_THR" in message
    assert "NexusAirspeedAPI" in message
