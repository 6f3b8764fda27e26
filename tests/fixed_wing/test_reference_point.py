"""The wing's derivatives are about their reference point, and the stage moves their moments to the centre of mass
wherever it is (a drawn ``com_x``): ``M_cg = M_ref + (r_ref − r_cg) × F``, the air taken at the reference point.

By hand, for the Aerosonde (ρ 1.2682 kg/m³, S 0.55 m², c 0.18994 m, CL0 0.23, CLα 5.61, Cmα −2.74) with the
centre of mass d = 0.05 m ahead of the reference point (d/c = 0.263241):

* level at 25 m/s, α = 0, no rate: q̄S = ½·1.2682·25²·0.55 = 217.971875 N, lift q̄S·CL0 = 50.133531 N; the pitching
  moment changes by −d·L = −2.506677 N·m (nose down), the force not at all;
* the pitch stiffness about the centre of mass: with drag 0, ΔCm(α) = −(d/c)·CL(α)·cos α, so Cmα changes by
  −(d/c)·CLα = −1.476783 per rad (from −2.74 to −4.216783): the static margin −Cmα/CLα grows by d/c, from
  0.488414 to 0.751655 of the chord;
* a pitch rate q turns the air at a reference point d behind the centre of mass by q·d/V: the lift grows by
  q̄S·CLα·q·d/V (q = 0.5 rad/s: 0.001 rad of α, 1.222822 N).

Flown (``nexus run --vehicle aerosonde --vary`` with ``com_x = 0.05``): in the last 4 s of leg 2 the elevator
holds the book's trim with the moved derivatives (Cm0 − (d/c)·CL0, Cmα − (d/c)·CLα, Cmδe − (d/c)·CLδe), 8.3° more
nose-up than the unmoved trim.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC
from nexus.plant.assets import resolve_asset
from nexus.plant.loading import open_stage
from nexus.schemas.reader import read_prim
from tests.fixed_wing.book_model import Aerosonde, trim
from tests.fixed_wing.wing_stage import aerosonde_wing, pitched, wing_wrench
from tests.worlds.flights import fly

D = 0.05  # the centre of mass ahead of the reference point [m]
QBAR_S = 217.971875  # ½ρV²S at 25 m/s [N]
CHORD = 0.18994  # [m]


def pitching(moment) -> float:
    """The book's pitching moment m [N·m] (FRD, nose up) of a world moment on a body turned about y only."""
    return -float(moment[1])


def test_a_centre_of_mass_moved_forward_pitches_the_nose_down_by_d_times_the_lift():
    wing = aerosonde_wing()
    force0, moment0 = wing_wrench(wing, velocity=(25.0, 0.0, 0.0))
    force1, moment1 = wing_wrench(wing, velocity=(25.0, 0.0, 0.0), com=(D, 0.0, 0.0))
    assert abs(force0[2] - 50.133531) < 1e-3  # the lift, as worked above
    assert np.array_equal(force0, force1)  # the force does not depend on where the centre of mass is
    assert abs((pitching(moment1) - pitching(moment0)) - (-2.506677)) < 2e-4
    assert abs(moment1[0] - moment0[0]) < 1e-6 and abs(moment1[2] - moment0[2]) < 1e-6
    # The same offset declared as the reference point instead: the derivatives behind the centre of mass.
    _, moment2 = wing_wrench(wing, velocity=(25.0, 0.0, 0.0), reference=(-D, 0.0, 0.0))
    assert abs(pitching(moment2) - pitching(moment1)) < 1e-5


def test_the_pitch_stiffness_and_static_margin_move_by_d_over_c():
    wing = {**aerosonde_wing(), "drag_model": "linear", "C_D_0": 0.0, "C_D_alpha": 0.0}  # no drag: CN = CL·cos α

    def cm(alpha: float, com) -> float:
        velocity = (25.0, 0.0, 0.0)  # level, the nose pitched up by α: the air meets the wing at α
        _, moment = wing_wrench(wing, velocity=velocity, rotation=pitched(alpha), com=com)
        return pitching(moment) / (QBAR_S * CHORD)

    step = 0.01  # [rad]; the stall blend's σ is under 1e-9 here
    slope = {name: (cm(step, com) - cm(-step, com)) / (2 * step) for name, com in
             (("ref", (0.0, 0.0, 0.0)), ("moved", (D, 0.0, 0.0)))}
    assert abs(slope["ref"] - (-2.74)) < 2e-3
    # −(d/c)·CLα·cos(0.01) = −0.263241·5.61·0.99995 = −1.476709
    assert abs((slope["moved"] - slope["ref"]) - (-1.476709)) < 2e-3
    margin = {name: -s / 5.61 for name, s in slope.items()}
    assert abs(margin["ref"] - 0.488414) < 5e-4 and abs(margin["moved"] - 0.751655) < 5e-4


def test_a_pitch_rate_turns_the_air_at_a_reference_point_behind_the_centre_of_mass():
    wing = {**aerosonde_wing(), "C_L_q": 0.0, "C_m_q": 0.0, "C_D_q": 0.0}
    q = 0.5  # [rad/s], nose up: about FLU +y by −q
    rates = (0.0, -q, 0.0)
    f0, _ = wing_wrench(wing, velocity=(25.0, 0.0, 0.0), angular_velocity=rates)
    f1, _ = wing_wrench(wing, velocity=(25.0, 0.0, 0.0), angular_velocity=rates, com=(D, 0.0, 0.0))
    # The reference point d behind moves down at q·d = 0.025 m/s: α = atan(0.025/25) = 0.001 rad there; the lift,
    # turned by that α, grows by q̄S·CLα·α = 217.9719·5.61·0.001 = 1.222822 N (its cos α change is 1e-6 of it).
    assert abs((f1[2] - f0[2]) - 1.222822) < 2e-3


@pytest.fixture(scope="module")
def moved(tmp_path_factory):
    root = tmp_path_factory.mktemp("cg")
    vary = root / "cg.toml"
    vary.write_text(f"com_x = {D}\n")
    return fly(root / "run", "--vehicle", "aerosonde", "--vary", str(vary), "--duration", "50")


def test_a_drawn_centre_of_mass_flies_the_trim_of_the_moved_derivatives(moved):
    r = moved.record
    assert abs(r["body/base.com[0]"].iloc[0] - D) < 1e-7
    t = r.time.to_numpy()
    leg = r.plane_leg.to_numpy()
    end = t[leg == 2][-1]
    on = (t > end - 4.0) & (t <= end)  # the last 4 s of leg 2, level at 100 m
    assert t[leg == 2][0] < end - 12.0 and leg[-1] == 3
    v = np.stack([r[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1).astype(float)
    airspeed = float(np.mean(np.linalg.norm(v[on], axis=1)))  # still air
    book = Aerosonde(g=9.80665)
    k = D / CHORD
    shifted = Aerosonde(g=9.80665, C_m_0=book.C_m_0 - k * book.C_L_0, C_m_alpha=book.C_m_alpha - k * book.C_L_alpha,
                        C_m_delta_e=book.C_m_delta_e - k * book.C_L_delta_e)
    elevator = math.degrees(float(np.mean(r["surface/elevator"].to_numpy()[on])))
    expected = math.degrees(trim(airspeed, p=shifted).elevator)
    unmoved = math.degrees(trim(airspeed, p=book).elevator)
    # 0.1°: the book's first-order move (0.014°) and the airspeed loop's last unsteadiness (0.047° flown).
    assert abs(elevator - expected) < 0.1, (elevator, expected)
    assert expected - unmoved < -8.0  # the check can tell: 8.3° more nose-up elevator than about the reference


def test_the_advanced_plane_s_avl_numbers_about_their_own_point_match_its_file_moved_by_hand():
    # vehicles/advanced_plane.usda holds AVL's derivatives moved by hand, to first order, from AVL's point 0.12 m
    # behind the centre of mass (docs/fixed_wing.md, "The reference point"). The same wing given AVL's numbers as
    # printed and nexus:referencePoint = (−0.12, 0, 0): at the 15 m/s trim (α 0.9636°, δe −1.9490°, no rate) the
    # force is the same bits, and the pitching moment differs by what the hand move leaves out,
    # (d/c)·(CL_lin − CN): the file moves the linear lift (CL0 + CLα·α + CLδe·δe = 0.215375), the stage the
    # normal force of the blended lift and the drag, CL·cos α + CD·sin α = (0.233248 − 0.020847)·0.999859 +
    # 0.031283·0.016818 = 0.212897 (σ 0.012623): 0.545455 × 0.002479 = +0.001352. A yaw rate moves the
    # reference point's sideslip, which the hand move took exactly (linear in β and r): the same to 1e-6.
    path = resolve_asset("vehicle", "advanced_plane")
    stage = open_stage(path)
    moved = read_prim(stage.GetPrimAtPath("/vehicle/body/base/Aero"), FIXED_WING_AERO_SPEC, path)
    per_degree = 57.29578
    avl = {**moved, "C_L_q": 7.971792, "C_m_0": 0.075, "C_m_alpha": -0.463966, "C_m_q": -12.14014,
           "C_m_delta_e": -0.025798 * per_degree, "C_Y_r": 0.230299, "C_ell_r": 0.078165, "C_n_beta": 0.100826,
           "C_n_p": -0.040416, "C_n_r": -0.089947, "C_n_delta_a": 0.006532, "C_n_delta_r": -0.092418}
    speed, chord, span = 15.0, 0.22, 1.486607
    qbar_s = 0.5 * 1.2041 * speed * speed * 0.34
    state = {"velocity": (speed, 0.0, 0.0), "rotation": pitched(math.radians(0.9636)),
             "surfaces": (0.0, math.radians(-1.9490), 0.0, 0.0)}
    f_hand, m_hand = wing_wrench(moved, **state)
    f_avl, m_avl = wing_wrench(avl, **state, reference=(-0.12, 0.0, 0.0))
    assert np.array_equal(f_hand, f_avl)
    assert abs(pitching(m_hand)) / (qbar_s * chord) < 1e-5  # the file's trim
    assert abs((pitching(m_avl) - pitching(m_hand)) / (qbar_s * chord) - 0.001352) < 2e-5
    f_hand, m_hand = wing_wrench(moved, **state, angular_velocity=(0.0, 0.0, 0.3))
    f_avl, m_avl = wing_wrench(avl, **state, angular_velocity=(0.0, 0.0, 0.3), reference=(-0.12, 0.0, 0.0))
    assert abs(f_avl[1] - f_hand[1]) / qbar_s < 1e-6
    assert abs(m_avl[0] - m_hand[0]) / (qbar_s * span) < 1e-6 and abs(m_avl[2] - m_hand[2]) / (qbar_s * span) < 1e-6
