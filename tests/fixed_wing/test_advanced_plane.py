"""vehicles/advanced_plane.usda holds PX4's Gazebo advanced_plane, trims at PX4's trim airspeed and flies there.

Numbers: PX4/PX4-gazebo-models models/advanced_plane/model.sdf (its AdvancedLiftDrag plugin's AVL derivatives and
its MulticopterMotorModel), turned into the wing stage's form as docs/fixed_wing.md ("The small electric plane")
derives them: per radian (AVL's control derivatives are per degree: × 180/π = 57.29578), book signs, and moved
from the AVL reference point (the plugin's ``cp``, d = 0.12 m behind the centre of mass) to the centre of mass.
The spot checks below redo that arithmetic by hand from the model.sdf's printed numbers.

Trim: PX4's FW_AIRSPD_TRIM (15 m/s; the airframe 4008_gz_advanced_plane keeps PX4's default), g = 9.80665 m/s².
The flight: the plane assembled from its file as ``nexus run`` does, in a scene with gravity and no ground,
started 100 m up at 15 m/s level, pitched to its trimmed angle of attack, the ``hold`` controller holding the
trim's servo commands and throttle, 5 s (1,250 ticks of 4 ms) with no loop closed.
"""

from __future__ import annotations

import math

import newton
import numpy as np
import pytest

from nexus.aero.control_surfaces import ControlSurface
from nexus.aero.fixed_wing_forces import FixedWingAero
from nexus.aero.propeller_advance import AdvanceRatioPropeller
from nexus.aero.trim import straight_and_level
from nexus.core import Loop
from nexus.plant.frames import quat_to_matrix_np
from nexus.runtime.assembly import assemble
from tests.fixed_wing.wing_stage import pitched

VOID = "tests/data/void.usda"
AIRSPEED = 15.0  # [m/s], PX4's FW_AIRSPD_TRIM default
HEIGHT = 100.0  # [m]
TICKS = 1250  # 5 s at 250 Hz
DEG = 180.0 / math.pi  # AVL's control derivatives are per degree of deflection
D_OVER_C = 0.12 / 0.22  # the AVL reference point's distance behind the centre of mass over the mean chord
D_OVER_B = 0.12 / math.sqrt(0.34 * 6.5)  # ... over the span b = sqrt(area × AR) = 1.486607 m


@pytest.fixture(scope="module")
def plane():
    return assemble("advanced_plane", VOID, controller="hold")


@pytest.fixture(scope="module")
def parts(plane):
    return {type(c): c for c in plane.components}


@pytest.fixture(scope="module")
def trim(plane, parts):
    return straight_and_level(parts[FixedWingAero].values, parts[AdvanceRatioPropeller].values, plane.plant.mass,
                              plane.plant.gravity, AIRSPEED)


def test_the_wing_holds_the_models_geometry_and_the_derivatives_the_file_prints(parts):
    wing = parts[FixedWingAero].values
    # model.sdf: area 0.34, mac 0.22, AR 6.5 (span sqrt(0.34 × 6.5) = 1.486607), air_density 1.2041, eff 0.97,
    # alpha_stall 0.3391428111, the plugin's sigmoid M = 15; CL0, CLa, CD0, CDq, CYb, CYp, Cellb, Cellp as printed.
    expected = {
        "wing_area": 0.34, "chord": 0.22, "wing_span": 1.486607, "air_density": 1.2041, "oswald": 0.97,
        "stall_angle": 0.3391428, "sharpness": 15.0, "C_L_0": 0.15188, "C_L_alpha": 5.015, "C_D_p": 0.029,
        "C_D_q": 0.055166, "C_Y_beta": -0.258244, "C_Y_p": 0.065861, "C_ell_beta": -0.03925, "C_ell_p": -0.487407,
    }
    for key, value in expected.items():
        assert wing[key] == pytest.approx(value, rel=1e-6), key
    assert wing["drag_model"] == "polar"


def test_control_derivatives_are_per_radian_with_the_books_signs(parts):
    wing = parts[FixedWingAero].values
    # Elevator (servo_2, direction −1; its joint's + is trailing edge up, the book's δe is trailing edge down):
    # CLδe = 0.010696 × 57.29578 = 0.612836 /rad, CDδe = 0.000274 × 57.29578 = 0.015699 /rad.
    assert wing["C_L_delta_e"] == pytest.approx(0.612836, rel=1e-5)
    assert wing["C_D_delta_e"] == pytest.approx(0.015699, rel=1e-4)
    # Ailerons (servo_0 left, servo_1 right, + = trailing edge up on both): δa = right angle = −left angle, so
    # Cℓδa = (0.003331 + 0.003331) × 57.29578 = 0.381704 /rad (rolls right: > 0 as the book's).
    assert wing["C_ell_delta_a"] == pytest.approx(0.381704, rel=1e-5)
    assert wing["C_ell_delta_a"] > 0.0
    # Rudder (servo_3, + = trailing edge right; the book's δr yaws left): CYδr = 0.003913 × 57.29578 = 0.224198,
    # Cnδr at the reference point −0.001613 × 57.29578 = −0.092418, at the centre of mass
    # −0.092418 − (0.12 / 1.486607) × 0.224198 = −0.092418 − 0.018097 = −0.110516 (yaws left: < 0 as the book's).
    assert wing["C_Y_delta_r"] == pytest.approx(0.224198, rel=1e-5)
    assert wing["C_n_delta_r"] == pytest.approx(-0.110516, rel=1e-5)
    assert DEG * 0.001613 + D_OVER_B * DEG * 0.003913 == pytest.approx(0.110516, rel=1e-5)


def test_pitch_derivatives_are_moved_from_the_avl_reference_point_to_the_centre_of_mass(parts):
    wing = parts[FixedWingAero].values
    # d / c = 0.12 / 0.22 = 0.545455. Cm_cg = Cm_ref − (d/c)·CL:
    # Cm0 = 0.075 − 0.545455 × 0.15188 = −0.0078436; Cmα = −0.463966 − 0.545455 × 5.015 = −3.199421;
    # Cmδe = −0.025798 × 57.29578 − 0.545455 × 0.612836 = −1.478117 − 0.334274 = −1.812390.
    # A pitch rate turns the reference point's α by q·d/V: CLq = 7.971792 + 2 × 0.545455 × 5.015 = 13.442701,
    # Cmq = −12.14014 + 2 × 0.545455 × (−0.463966) − 0.545455 × 13.442701 = −12.14014 − 0.506145 − 7.332382
    #     = −19.978667.
    assert wing["C_m_0"] == pytest.approx(-0.0078436, rel=1e-4)
    assert wing["C_m_alpha"] == pytest.approx(-3.199421, rel=1e-6)
    assert wing["C_m_delta_e"] == pytest.approx(-1.812390, rel=1e-6)
    assert wing["C_L_q"] == pytest.approx(13.442701, rel=1e-6)
    assert wing["C_m_q"] == pytest.approx(-19.978667, rel=1e-6)
    # Static margin −Cmα/CLα = 3.199421 / 5.015 = 0.638 of the chord.
    assert -wing["C_m_alpha"] / wing["C_L_alpha"] == pytest.approx(0.638, abs=0.001)


def test_yaw_derivatives_are_moved_to_the_centre_of_mass(parts):
    wing = parts[FixedWingAero].values
    # d / b = 0.080721. Cn_cg = Cn_ref − (d/b)·CY; a yaw rate turns the reference point's β by −r·d/V:
    # Cnβ = 0.100826 + 0.080721 × 0.258244 = 0.121672; CYr = 0.230299 + 2 × 0.080721 × 0.258244 = 0.271990;
    # Cnr = −0.089947 − 2 × 0.080721 × 0.100826 − 0.080721 × 0.271990 = −0.089947 − 0.016277 − 0.021955
    #     = −0.128180.
    assert wing["C_n_beta"] == pytest.approx(0.121672, rel=1e-5)
    assert wing["C_Y_r"] == pytest.approx(0.271990, rel=1e-5)
    assert wing["C_n_r"] == pytest.approx(-0.128180, rel=1e-5)


def test_the_propeller_gives_the_gazebo_motors_thrust(parts):
    prop = parts[AdvanceRatioPropeller].values
    # gz: thrust = kF·ω², kF = 8.54858e-6 N·s²; Nexus: ρ·(ω/2π)²·D⁴·C_T0, so C_T0 = kF·(2π)²/(ρ·D⁴)
    # = 8.54858e-6 × 39.478418 / (1.2041 × 0.0016) = 0.175175; torque 0.01 m × thrust: C_Q0 = C_T0 × 0.01 / 0.2.
    assert prop["thrust_coefficients"][0] == pytest.approx(0.175175, rel=1e-5)
    assert prop["torque_coefficients"][0] == pytest.approx(0.0087587, rel=1e-4)
    assert list(prop["thrust_coefficients"])[1:] == [0.0, 0.0]
    assert prop["diameter"] == pytest.approx(0.2)
    assert prop["spin"] == -1  # gz turningDirection cw: the airframe feels +0.01 × thrust about +x


def test_newton_loads_the_models_mass_and_inertia(plane):
    plant = plane.plant
    assert plant.mass == pytest.approx(1.0)
    inertia = plant.model.body_inertia.numpy()[plant.base]
    np.testing.assert_allclose(inertia, np.diag([0.197563, 0.1458929, 0.1477]), atol=1e-7)


def test_trim_at_px4s_trim_airspeed_is_physically_sensible(trim):
    # Ranges stated: α in (0°, 3°) (CL needed 0.2129 is just above CL0 0.15188), elevator within ±5° (travel is
    # ±44.7°), throttle in (0.15, 0.4) around PX4's FW_THR_TRIM 0.25 for this airframe, sideslip and lateral
    # surfaces within 0.1° (they only meet the propeller's 0.014 N·m).
    assert 0.0 < math.degrees(trim.alpha) < 3.0
    assert abs(math.degrees(trim.elevator)) < 5.0
    assert 0.15 < trim.throttle < 0.4
    for angle in (trim.beta, trim.aileron, trim.rudder):
        assert abs(math.degrees(angle)) < 0.1
    assert trim.residual < 1e-3


def test_trim_holds_the_lift_the_weight_needs(trim):
    # CL needed = 2mg / (ρV²S) = 2 × 1 × 9.80665 / (1.2041 × 225 × 0.34) = 19.6133 / 92.11365 = 0.212925, less
    # the propeller's share: flying level the drag is horizontal, so T·cosα = D and the thrust lifts
    # T·sinα = D·tanα, i.e. CD·tanα in coefficient, CD = 0.029 + (CL0 + CLα·α)²/(π·0.97·6.5) + CDδe·δe (the
    # polar; ≈ 0.0313, so ≈ 0.0005 at α ≈ 1°).
    # The model at the trim: CL0 + CLα·α + CLδe·δe, with the lift-curve blend's σ (M = 15 leaves σ ≈ 0.013 at
    # α ≈ 1°, so the linear part is (1 − σ) of itself plus σ times the flat plate 2·sin²α·cosα; without σ the
    # sum would read 0.0025 high).
    alpha, elevator = trim.alpha, trim.elevator
    m, a0 = 15.0, 0.3391428
    low, high = math.exp(-m * (alpha - a0)), math.exp(m * (alpha + a0))
    sigma = (1.0 + low + high) / ((1.0 + low) * (1.0 + high))
    assert 0.005 < sigma < 0.02
    lift = (1.0 - sigma) * (0.15188 + 5.015 * alpha) + sigma * 2.0 * math.sin(alpha) ** 2 * math.cos(alpha)
    lift += 0.612836 * elevator
    drag = 0.029 + (0.15188 + 5.015 * alpha) ** 2 / (math.pi * 0.97 * 6.5) + 0.015699 * elevator
    assert 0.03 < drag < 0.033
    assert lift == pytest.approx(0.212925 - drag * math.tan(alpha), abs=5e-5)
    # The elevator balances the pitch: Cm0 + Cmα·α + Cmδe·δe = 0 (no rate, no flap).
    assert -0.0078436 - 3.199421 * alpha - 1.812390 * elevator == pytest.approx(0.0, abs=1e-4)


def fly(vehicle, trim, throttle: float) -> dict:
    """Fly 5 s from the trimmed start holding the trim's surfaces and ``throttle``: every 25th tick's pose and
    speed."""
    plant = vehicle.plant
    surfaces = {c.role: c for c in vehicle.components if isinstance(c, ControlSurface)}
    row = np.zeros(16)
    for role, deflection in (("aileron", trim.aileron), ("elevator", trim.elevator), ("rudder", trim.rudder)):
        surfaces[role].initial = deflection
        row[surfaces[role].channel] = deflection / surfaces[role].travel
    propeller = next(c for c in vehicle.components if isinstance(c, AdvanceRatioPropeller))
    row[propeller.channel] = throttle
    vehicle.controller.set(row)
    loop = Loop(vehicle.components, device="cpu", mode="captured", seed=0).build()
    plant.reset(base_position=(0.0, 0.0, HEIGHT), base_velocity=(AIRSPEED, 0.0, 0.0))
    q = plant.state.joint_q.numpy()
    q[plant.base_coord + 3 : plant.base_coord + 7] = pitched(trim.alpha)
    plant.state.joint_q.assign(q)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    seen = {"position": [], "speed": [], "rotation": []}
    try:
        for tick in range(TICKS):
            loop.tick()
            if tick % 25 == 24:
                pose = plant.state.body_q.numpy()[plant.base].astype(np.float64)
                seen["position"].append(pose[:3])
                seen["rotation"].append(pose[3:7])
                seen["speed"].append(np.linalg.norm(plant.state.body_qd.numpy()[plant.base][:3]))
    finally:
        loop.close()
    return {k: np.array(v) for k, v in seen.items()}


@pytest.fixture(scope="module")
def trimmed(plane, trim):
    return fly(plane, trim, trim.throttle)


@pytest.fixture(scope="module")
def gliding(plane, trim):
    return fly(plane, trim, 0.0)


def test_trimmed_plane_keeps_its_speed_and_height_for_five_seconds(trimmed):
    assert np.max(np.abs(trimmed["speed"] - AIRSPEED)) < 0.05
    assert np.max(np.abs(trimmed["position"][:, 2] - HEIGHT)) < 0.25
    # 75 m east in 5 s at 15 m/s, on its line.
    assert trimmed["position"][-1, 0] == pytest.approx(75.0, abs=0.5)
    assert np.max(np.abs(trimmed["position"][:, 1])) < 0.25


def test_trimmed_plane_keeps_its_attitude(trimmed, trim):
    for rotation in trimmed["rotation"]:
        nose = quat_to_matrix_np(rotation) @ np.array([1.0, 0.0, 0.0])
        left = quat_to_matrix_np(rotation) @ np.array([0.0, 1.0, 0.0])
        assert math.degrees(abs(math.atan2(nose[1], nose[0]))) < 0.5  # heading east
        assert math.degrees(abs(math.asin(left[2]))) < 0.5  # wings level
        assert math.degrees(abs(math.asin(nose[2]) - trim.alpha)) < 0.5  # pitch at the trim's


def test_without_thrust_the_same_start_loses_speed_or_height(gliding):
    # Without the 1.44 N of thrust the drag (1.44 m/s² on 1 kg) slows it until the stable pitch noses it down:
    # measured 10.7 m lost, 15.7 m/s at the end.
    lost_speed = AIRSPEED - gliding["speed"][-1]
    lost_height = HEIGHT - gliding["position"][-1, 2]
    assert lost_speed > 1.5 or lost_height > 2.0
