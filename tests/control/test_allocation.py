"""Control allocation: the effectiveness matrix and mix from rotor geometry, worked by hand, and the saturation.

Positions are FRD [m] from the centre of mass; a rotor's yaw moment per unit thrust is +kQ/kT for a
counter-clockwise rotor. Each test's expected numbers are worked out in its comments.
"""

import math

import numpy as np
import pytest
import warp as wp

from nexus.control.allocation import Allocation, MixTables, mix_tables, quad_x_allocation, write_rotor_commands
from nexus.control.mixer import command_for_thrust, thrust_fraction_np
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.rotor_geometry import RotorGeometry, effectiveness

FRONT_RIGHT, REAR_LEFT, FRONT_LEFT, REAR_RIGHT = 0, 1, 2, 3


def rotor(i, x, y, spin, km=0.016, thrust=10.0):
    return RotorGeometry(channel=i, index=i, joint_path=f"/j{i}", position=(x, y, -0.05), axis=(0.0, 0.0, -1.0),
                         yaw_moment=spin * km, max_thrust=thrust)


def quad_x():
    """PX4's quad-X, arms 0.25 m along each axis, 10 N rotors, kQ/kT 0.016 m."""
    return [rotor(0, 0.25, 0.25, +1), rotor(1, -0.25, -0.25, +1), rotor(2, 0.25, -0.25, -1), rotor(3, -0.25, 0.25, -1)]


#: PX4's hexarotor X at 0.275 m: rotor 1 right (CW), 2 left (CCW), 3 front left (CW), 4 rear right (CCW),
#: 5 front right (CCW), 6 rear left (CW); 0.275·cos 30° = 0.238157 m, 0.275·sin 30° = 0.1375 m.
HEXA = [(0.0, 0.275, -1), (0.0, -0.275, +1), (0.238157, -0.1375, -1), (-0.238157, 0.1375, +1),
        (0.238157, 0.1375, +1), (-0.238157, -0.1375, -1)]


def hexa_x(thrust=1.0):
    return [rotor(i, x, y, spin, thrust=thrust) for i, (x, y, spin) in enumerate(HEXA)]


def test_quad_x_effectiveness_matrix_by_hand():
    # Thrust up (FRD −z) T at r = (x, y): moment r × (0, 0, −T) = (−y·T, x·T); yaw ±0.016·T; thrust T.
    # Front right (0.25, 0.25) CCW: (−2.5, 2.5, 0.16, 10); rear left: (2.5, −2.5, 0.16, 10);
    # front left (0.25, −0.25) CW: (2.5, 2.5, −0.16, 10); rear right: (−2.5, −2.5, −0.16, 10).
    expected = [[-2.5, 2.5, 2.5, -2.5],
                [2.5, -2.5, 2.5, -2.5],
                [0.16, 0.16, -0.16, -0.16],
                [10.0, 10.0, 10.0, 10.0]]
    np.testing.assert_allclose(effectiveness(quad_x()), expected, atol=1e-12)


def test_quad_x_mix_is_the_old_sign_table_times_one_half():
    # B's rows are orthogonal, so B⁺'s columns are the rows over their squared norms; scaled so the largest
    # torque entry is 0.5 and the thrust column sums the full thrusts (40 N · 1/40 N = 1): exactly ±0.5 and 1.
    expected = [[-0.5, 0.5, 0.5, 1.0],
                [0.5, -0.5, 0.5, 1.0],
                [0.5, 0.5, -0.5, 1.0],
                [-0.5, -0.5, -0.5, 1.0]]
    mix = Allocation.from_matrix(effectiveness(quad_x())).mix
    assert mix.astype(np.float32).tolist() == expected  # to the bit: the quad's flights keep their bits
    assert quad_x_allocation().mix.astype(np.float32).tolist() == expected


def test_hexa_x_effectiveness_and_mix_by_hand():
    # Unit thrust: roll −y, pitch x, yaw ±0.016, thrust 1.
    b = effectiveness(hexa_x())
    np.testing.assert_allclose(b[0], [-0.275, 0.275, 0.1375, -0.1375, -0.1375, 0.1375], atol=1e-12)
    np.testing.assert_allclose(b[1], [0.0, 0.0, 0.238157, -0.238157, 0.238157, -0.238157], atol=1e-12)
    np.testing.assert_allclose(b[2], [-0.016, 0.016, -0.016, 0.016, 0.016, -0.016], atol=1e-12)
    np.testing.assert_allclose(b[3], [1.0] * 6, atol=1e-12)
    # The four rows are orthogonal (roll·pitch = 0.1375·0.238157·(1 + 1 − 1 − 1) = 0, and so on), so each
    # mix column is its row scaled: roll to ±0.5 on the side rotors and ±0.25 on the others, pitch ±0.5 on
    # the four corner rotors, yaw ±0.5 on all six, thrust 1/6 · 6 N = 1 each.
    expected = np.array([[-0.5, 0.0, -0.5, 1.0],
                         [0.5, 0.0, 0.5, 1.0],
                         [0.25, 0.5, -0.5, 1.0],
                         [-0.25, -0.5, 0.5, 1.0],
                         [-0.25, 0.5, 0.5, 1.0],
                         [0.25, -0.5, -0.5, 1.0]])
    np.testing.assert_allclose(Allocation.from_matrix(b).mix, expected, atol=1e-12)


def test_a_hexa_without_its_right_rotor_is_solved_again_with_the_same_units():
    # Rotor 1 (right, CW) gone. Zero moment and thrust then force the left rotor to 0 (the yaw and roll
    # equations differ only by it), so the left rotor's row is the same for every solution: roll + yaw,
    # and the four corner rotors carry the thrust, each 6/4 = 1.5 times its share.
    allocation = Allocation.from_matrix(effectiveness(hexa_x()))
    mix = allocation.mix_without(0)
    assert mix[0].tolist() == [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(mix[1], [1.0, 0.0, 1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(mix[2:, 3], [1.5, 1.5, 1.5, 1.5], atol=1e-6)
    # Same physical moment per unit of torque as before the failure: B·mix is the same diagonal. Intact, one
    # unit of roll moves the side rotors by ±0.5 and the others by ±0.25: 2·0.5·0.275 + 4·0.25·0.1375
    # = 0.4125 N·m; pitch 4·0.5·0.238157 = 0.476314 N·m; yaw 6·0.5·0.016 = 0.048 N·m; thrust 6 N.
    b = effectiveness(hexa_x())
    diagonal = np.diag([0.4125, 0.476314, 0.048, 6.0])
    np.testing.assert_allclose(b @ allocation.mix, diagonal, atol=1e-6)
    np.testing.assert_allclose(b @ mix, diagonal, atol=1e-5)


def test_a_quad_without_a_rotor_gives_up_yaw():
    # Three rotors can hold roll, pitch and thrust but no yaw: the yaw column is zero, the rear left rotor
    # (opposite the failed front right) idles at hover and the other two carry it: 4/2 = 2 times the share.
    mix = Allocation.from_matrix(effectiveness(quad_x())).mix_without(FRONT_RIGHT)
    assert mix[:, 2].tolist() == [0.0, 0.0, 0.0, 0.0]
    np.testing.assert_allclose(mix[:, 3], [0.0, 0.0, 2.0, 2.0], atol=1e-6)


@wp.kernel
def mix_kernel(collective: wp.array(dtype=float), torque: wp.array(dtype=wp.vec3), factor: float, tables: MixTables,
               now: wp.array(dtype=wp.int64), controls: wp.array2d(dtype=wp.float32)):
    i = wp.tid()
    write_rotor_commands(controls, i, factor, collective[i], torque[i], 1.0, tables, now[i])


def run_mix(collective, torque, factor=0.0, allocation=None, failures=None, now_ns=0):
    """Thrust fractions (factor 0: command = thrust fraction) of each row of ``collective`` and ``torque``."""
    collective = np.atleast_1d(np.asarray(collective, dtype=np.float32))
    torque = np.atleast_2d(np.asarray(torque, dtype=np.float32))
    n = len(collective)
    tables = mix_tables(allocation or quad_x_allocation(), n, "cpu", failures)
    controls = wp.zeros((n, CONTROLS_WIDTH), dtype=wp.float32, device="cpu")
    wp.launch(mix_kernel, n, inputs=[wp.array(collective, dtype=float, device="cpu"),
                                     wp.array(torque, dtype=wp.vec3, device="cpu"), factor, tables,
                                     wp.full(n, now_ns, dtype=wp.int64, device="cpu")],
              outputs=[controls], device="cpu")
    return controls.numpy()


def test_positive_yaw_speeds_up_the_counter_clockwise_rotors():
    # 0.45 ± 0.5·0.2: the CCW rotors (slots 0, 1) at 0.55, the CW ones at 0.35.
    t = run_mix(0.45, [0.0, 0.0, 0.2])[0]
    np.testing.assert_allclose(t[:4], [0.55, 0.55, 0.35, 0.35], atol=1e-6)
    assert t[4:].tolist() == [0.0] * (CONTROLS_WIDTH - 4)


def test_roll_right_speeds_up_the_left_rotors_and_pitch_up_the_front_ones():
    np.testing.assert_allclose(run_mix(0.45, [0.2, 0.0, 0.0])[0, :4], [0.35, 0.55, 0.55, 0.35], atol=1e-6)
    np.testing.assert_allclose(run_mix(0.45, [0.0, 0.2, 0.0])[0, :4], [0.55, 0.35, 0.55, 0.35], atol=1e-6)


def test_a_saturating_roll_is_kept_and_thrust_given_up():
    # Collective 0.8, roll 0.6: the rotors need 0.8 ± 0.3, and 1.1 does not fit. Roll fits whole for
    # collectives in [0.3, 0.7], so the collective drops to 0.7: left rotors 1.0, right rotors 0.4.
    t = run_mix(0.8, [0.6, 0.0, 0.0])[0, :4]
    np.testing.assert_allclose(t, [0.4, 1.0, 1.0, 0.4], atol=1e-6)
    assert t[1] - t[0] == pytest.approx(2 * 0.5 * 0.6, abs=1e-6)  # the whole roll: 0.6 on each side pair


def test_a_roll_too_large_for_any_collective_is_scaled_to_the_full_range():
    # Roll 1.5 asks for a spread of 2·0.5·1.5 = 1.5: scaled by 1/1.5 to the whole [0, 1], collective 0.5.
    np.testing.assert_allclose(run_mix(0.45, [1.5, 0.0, 0.0])[0, :4], [0.0, 1.0, 1.0, 0.0], atol=1e-6)


def test_yaw_comes_before_thrust_and_after_roll_and_pitch():
    # Collective 0.85, yaw 0.4: the CCW rotors would need 1.05. Yaw fits whole for collectives up to 0.8,
    # so the collective drops to 0.8: CCW rotors 1.0, CW rotors 0.6 (the old mixer kept 0.85 and cut yaw).
    np.testing.assert_allclose(run_mix(0.85, [0.0, 0.0, 0.4])[0, :4], [1.0, 1.0, 0.6, 0.6], atol=1e-6)
    # Full roll at hover spans the whole range: yaw gets no room and the roll survives intact.
    np.testing.assert_allclose(run_mix(0.45, [1.0, 0.0, 1.0])[0, :4], [0.0, 1.0, 1.0, 0.0], atol=1e-6)


def test_the_failed_rotor_gets_nothing_from_its_failure_time_on():
    # Hexa, rotor 1 fails at 1 s: before it, every rotor hovers at 0.4; after it, rotor 1 and its opposite
    # rotor 2 are at 0 and the four corner rotors at 1.5 · 0.4 = 0.6.
    allocation = Allocation.from_matrix(effectiveness(hexa_x()))
    failures = [(0, 0.0, 1_000_000_000)]
    before = run_mix(0.4, [0.0, 0.0, 0.0], allocation=allocation, failures=failures, now_ns=999_999_999)[0, :6]
    after = run_mix(0.4, [0.0, 0.0, 0.0], allocation=allocation, failures=failures, now_ns=1_000_000_000)[0, :6]
    np.testing.assert_allclose(before, [0.4] * 6, atol=1e-6)
    np.testing.assert_allclose(after, [0.0, 0.0, 0.6, 0.6, 0.6, 0.6], atol=1e-6)


def test_command_inverts_the_thrust_model():
    # The Astro Max hovers at u = 0.572: (1 − 0.5)·0.572 + 0.5·0.572² = 0.4496 of full thrust.
    hover = thrust_fraction_np(0.572, 0.5)
    assert hover == pytest.approx(0.4496, abs=1e-4)
    np.testing.assert_allclose(run_mix(hover, [0.0, 0.0, 0.0], factor=0.5)[0, :4], 0.572, atol=1e-5)
    # f = 0: thrust is linear in the command.
    np.testing.assert_allclose(run_mix(0.3, [0.0, 0.0, 0.0], factor=0.0)[0, :4], 0.3, atol=1e-6)


def test_the_rotor_opposite_a_failed_one_keeps_roll_by_moving_yaw():
    # Hexa without rotor 1, hovering at 0.4 and asked for roll −0.1, yaw 0. The left rotor's row is
    # roll + yaw (above): −0.1 would be below zero thrust, so yaw is moved to +0.1 and the left rotor sits at 0.
    # Corner rotors (rows [0, 0.5, −0.75, 1.5], [−0.5, −0.5, 0.25, 1.5], [−0.5, 0.5, 0.25, 1.5],
    # [0, −0.5, −0.75, 1.5]): 0.6 − 0.075 = 0.525, 0.6 + 0.05 + 0.025 = 0.675, 0.675, 0.525. Roll moment
    # 0.1375·(0.525 − 0.675 − 0.675 + 0.525) = −0.04125 N·m = −0.1 · 0.4125: the whole roll asked for.
    # (Clipping the left rotor instead would leave 0.6, 0.65, 0.65, 0.6: a third of it.)
    allocation = Allocation.from_matrix(effectiveness(hexa_x()))
    t = run_mix(0.4, [-0.1, 0.0, 0.0], allocation=allocation, failures=[(0, 0.0, 0)])[0, :6]
    np.testing.assert_allclose(t, [0.0, 0.0, 0.525, 0.675, 0.675, 0.525], atol=1e-6)


def _ring(count, radius, first_deg):
    """``count`` rotors evenly on a circle (FRD angle from the nose, clockwise seen from above), spins alternating."""
    angles = [math.radians(first_deg + 360.0 * k / count) for k in range(count)]
    return [rotor(k, radius * math.cos(a), radius * math.sin(a), +1 if k % 2 == 0 else -1) for k, a in enumerate(angles)]


def _coaxial_x8():
    """Four arms at (±0.25, ±0.25) m, each an upper and a lower rotor of opposite spin."""
    rotors = []
    for k, (x, y, spin) in enumerate(((0.25, 0.25, 1), (-0.25, -0.25, 1), (0.25, -0.25, -1), (-0.25, 0.25, -1))):
        rotors.append(rotor(2 * k, x, y, spin))
        rotors.append(rotor(2 * k + 1, x, y, -spin))
    return rotors


LAYOUTS = {
    # Moment per unit of normalised torque (the diagonal of B·mix): the rotors with the longest arm on an axis
    # move by 0.5 and the others in proportion, so a unit gives 0.5·T·Σ arm² / (longest arm) [N·m]; the
    # collective's unit is the full thrust Σ T [N]. Rotors of 10 N, kQ/kT 0.016 m.
    # Plus, arms 0.25: two rotors on each axis: 0.5·10·2·0.25² / 0.25 = 2.5; yaw 4·0.5·0.16 = 0.32.
    "quad-plus": ([rotor(0, 0.25, 0.0, 1), rotor(1, -0.25, 0.0, 1), rotor(2, 0.0, 0.25, -1), rotor(3, 0.0, -0.25, -1)],
                  [2.5, 2.5, 0.32, 40.0]),
    # H, 0.3 forward and 0.15 sideways: roll 4·0.5·10·0.15 = 3.0, pitch 4·0.5·10·0.3 = 6.0.
    "quad-h": ([rotor(0, 0.3, 0.15, 1), rotor(1, -0.3, -0.15, 1), rotor(2, 0.3, -0.15, -1), rotor(3, -0.3, 0.15, -1)],
               [3.0, 6.0, 0.32, 40.0]),
    # Hexa plus (rotor at the nose), radius 0.25: Σ y² = Σ x² = 6·0.25²/2 = 0.1875; longest y 0.25·sin 60°
    # = 0.216506, longest x 0.25: roll 5·0.1875/0.216506 = 4.330127, pitch 5·0.1875/0.25 = 3.75; yaw 6·0.08 = 0.48.
    "hexa-plus": (_ring(6, 0.25, 0.0), [4.330127, 3.75, 0.48, 60.0]),
    # Octo X (first rotor at 22.5°), radius 0.25: Σ y² = 8·0.25²/2 = 0.25, longest arm 0.25·cos 22.5° = 0.230970:
    # roll = pitch = 5·0.25/0.230970 = 5.411961; yaw 8·0.08 = 0.64.
    "octo-x": (_ring(8, 0.25, 22.5), [5.411961, 5.411961, 0.64, 80.0]),
    # Coaxial X8: every rotor at 0.25 from both axes: 8·0.5·10·0.25 = 10 on roll and pitch; yaw 8·0.08 = 0.64.
    "coaxial-x8": (_coaxial_x8(), [10.0, 10.0, 0.64, 80.0]),
    # Twelve rotors (a dodecarotor ring, first at 15°), radius 0.25: Σ y² = 12·0.25²/2 = 0.375, longest
    # arm 0.25·cos 15° = 0.241481: roll = pitch = 5·0.375/0.241481 = 7.764571; yaw 12·0.08 = 0.96.
    "dodeca": (_ring(12, 0.25, 15.0), [7.764571, 7.764571, 0.96, 120.0]),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_layout_gets_a_mix_with_the_hand_worked_authority(layout):
    rotors, diagonal = LAYOUTS[layout]
    b = effectiveness(rotors)
    mix = Allocation.from_matrix(b).mix
    np.testing.assert_allclose(b @ mix, np.diag(diagonal), atol=1e-5)
    assert np.abs(mix[:, :3]).max() == pytest.approx(0.5, abs=1e-9)  # the most-moved rotor moves 0.5 per unit


def test_a_rotor_left_with_half_its_thrust_is_used_for_what_it_still_gives():
    # rotor_fail_fraction 0.5: rotor 1's column halves. The mix still gives the intact vehicle's moment per
    # unit (B with the halved column times the mix: the same diagonal), and rotor 1 keeps a share.
    allocation = Allocation.from_matrix(effectiveness(hexa_x()))
    mix = allocation.mix_without(0, 0.5)
    b = effectiveness(hexa_x())
    b[:, 0] *= 0.5
    np.testing.assert_allclose(b @ mix, np.diag([0.4125, 0.476314, 0.048, 6.0]), atol=1e-5)
    assert mix[0, 3] > 0.0
