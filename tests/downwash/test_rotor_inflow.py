"""The axial-inflow thrust against its own closed form, worked by hand.

A rotor chosen for round numbers: R = 0.1 m, ρ = 1.225 kg/m³, s = σ·a = 0.5, C_T0 = 0.008, so
kT = C_T0 ρ π R⁴ = 0.008 · 1.225 · π · 1e-4 = 3.0787608e-6 N/(rad/s)². At ω = 1000 rad/s: tip speed
U = 100 m/s, T0 = kT ω² = 3.0787608 N, λ_h = √(C_T0 / 2) = 0.0632456, so v_h = λ_h U = 6.3245553 m/s, which is
√(T0 / (2 ρ A)) = √(3.0787608 / (2 · 1.225 · 0.0314159)) = √40.0 = 6.3245553 m/s.
Pitch: θ₇₅ = 6 C_T0 / s + 1.5 λ_h = 0.096 + 0.0948683 = 0.1908683 rad.

Climb at w = v_h (λ_c = 0.0632456): b = s/16 - λ_c/2 = 0.03125 - 0.0316228 = -0.0003728;
λ = √(b² + s θ₇₅ / 12) - b = √(1.39e-7 + 0.0079529) + 0.0003728 = 0.0895523;
C_T = (s/2)(θ₇₅/3 - λ/2) = 0.25 · (0.0636228 - 0.0447762) = 0.0047117: ratio 0.5889572, T = 1.8132583 N,
ΔT = -1.2655025 N; the rotor's own induced velocity v_i = λU - w = 2.6306739 m/s, and momentum holds:
2 ρ A v_i (v_i + w) = 1.8132583 N.
Downwash w = 2 m/s: λ = 0.0704256, T = 2.7333617 N, ΔT = -0.3453991 N (ratio 0.8878123);
w = 1 m/s: ΔT = -0.1667495 N (ratio 0.9458388).
The Crazyflie (kT 2.879933e-8, R 0.023 m, s = 0.573): C_T0 = 2.879933e-8 / (1.225 π 0.023⁴) = 0.0267415,
θ₇₅ = 6 · 0.0267415 / 0.573 + 1.5 √0.0133707 = 0.2800 + 0.1734 = 0.4534631 rad (26.0°).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from nexus.plant.rotor_inflow import blade_pitch, induced_velocity, thrust_change

KT, RADIUS, S = 3.0787608e-6, 0.1, 0.5
PITCH = 0.1908683


@wp.kernel
def evaluate(omega: wp.array(dtype=wp.float32), w: wp.array(dtype=wp.float32), radius: wp.float32, s: wp.float32,
             pitch: wp.float32, change: wp.array(dtype=wp.float32), induced: wp.array(dtype=wp.float32)):
    i = wp.tid()
    change[i] = thrust_change(omega[i], w[i], radius, s, pitch, wp.float32(1.225))
    induced[i] = induced_velocity(omega[i], w[i], radius, s, pitch)


def run(omegas, inflows, radius=RADIUS, s=S, pitch=PITCH):
    n = len(omegas)
    change, induced = wp.zeros(n, dtype=wp.float32), wp.zeros(n, dtype=wp.float32)
    wp.launch(evaluate, n, inputs=[wp.array(np.asarray(omegas, np.float32), dtype=wp.float32),
                                   wp.array(np.asarray(inflows, np.float32), dtype=wp.float32), radius, s, pitch,
                                   change, induced], device="cpu")
    return change.numpy(), induced.numpy()


def test_the_blade_pitch_makes_the_still_air_thrust_kt_omega_squared():
    assert blade_pitch(KT, RADIUS, S) == pytest.approx(PITCH, rel=1e-6)
    assert blade_pitch(2.879933e-8, 0.023, 0.573) == pytest.approx(0.4534631, rel=1e-6)


def test_in_still_air_the_thrust_is_exactly_kt_omega_squared():
    # No change at all, at any speed, for the worked rotor and the Crazyflie's: the thrust is kT·ω² to the bit.
    change, _ = run([0.0, 1.0, 100.0, 1000.0, 1516.3, 3000.0, -1000.0], [0.0] * 7)
    assert change.tolist() == [0.0] * 7
    change, _ = run([0.0, 1516.3, 2268.9], [0.0] * 3, radius=0.023, s=0.573, pitch=0.4534631)
    assert change.tolist() == [0.0] * 3


def test_the_hover_induced_velocity_is_momentum_theorys():
    _, induced = run([1000.0], [0.0])
    assert induced[0] == pytest.approx(6.3245553, rel=1e-5)  # √(T / (2 ρ A))


def test_climb_at_the_hover_induced_velocity_loses_the_hand_worked_thrust():
    change, induced = run([1000.0], [6.3245553])
    assert change[0] == pytest.approx(-1.2655025, rel=1e-4)  # T 1.8132583 N, ratio 0.5889572
    assert induced[0] == pytest.approx(2.6306739, rel=1e-4)
    # Momentum: T = 2 ρ A v_i (v_i + w), with T = T0 + ΔT.
    thrust = 3.0787608 + change[0]
    area = math.pi * 0.01
    assert thrust == pytest.approx(2 * 1.225 * area * induced[0] * (induced[0] + 6.3245553), rel=1e-4)


def test_a_downwash_through_the_disc_lowers_the_thrust_by_the_hand_figures():
    change, _ = run([1000.0, 1000.0], [2.0, 1.0])
    assert change == pytest.approx([-0.3453991, -0.1667495], rel=1e-4)


def test_descent_and_rising_air_are_held_at_the_still_air_thrust():
    # -2 < w / v_h < 0 is the vortex ring state, where momentum theory has no solution: w is held at 0.
    change, induced = run([1000.0, 1000.0, 1000.0], [-1.0, -6.3, -30.0])
    assert change.tolist() == [0.0, 0.0, 0.0]
    assert induced == pytest.approx([6.3245553] * 3, rel=1e-5)


def test_a_stopped_rotor_in_a_downwash_makes_no_thrust_and_no_nan():
    change, induced = run([0.0, 0.0], [5.0, 0.0])
    assert change.tolist() == [0.0, 0.0]
    assert np.isfinite(induced).all()
