"""The downwash jet against its closed form, worked by hand; no NaN anywhere; the inflow and moment it gives.

One disc, T = 1 N, R = 0.1 m: v_h = √(1 / (2 · 1.225 · π · 0.01)) = 3.6044750 m/s; the jet takes over at
B·√2·R = 5.8 · 1.4142136 · 0.1 = 0.8202439 m below.
  in the disc (Δz = 0): v_h = 3.6044750;
  one radius below: v_h (1 + 0.1/√0.02) = 3.6044750 · 1.7071068 = 6.1532238;
  one radius above: v_h (1 - 0.7071068) = 1.0557263;
  2 m below (jet): 2 v_h · 0.8202439 / 2 = 2.9565485; at r = S·Δz = 0.188 m off the axis, half that: 1.4782743.

The Crazyflie source (4 discs of 0.0661949 N, R = 0.023 m, arm 0.03973 m, x-config) 0.3 m above the Crazyflie:
one disc's v_h = √(0.0661949 / (2 · 1.225 · π · 0.023²)) = 4.0320546 m/s, the jet from 0.1886561 m below, so at
0.3 m its centreline is 2 · 4.0320546 · 0.1886561 / 0.3 = 5.0712 m/s with half-width 0.094 · 0.3 = 0.0282 m.
Summed over the four jets (squares added) at the 7 points of Radon's rule on a rotor right under a disc
(centre 1/4, six points at √(2/3) · 0.023 = 0.018779 m, 1/8 each): w = 4.1653762 m/s (the same on all four).
With the vehicle 5 mm further along +x, the front rotors see 4.0658862 m/s and the rear ones 4.1563638 m/s;
at the hover speed (kT ω² = 0.0661949 N, ω² = 2298487.1) the thrust changes are -0.0197561 N (front) and
-0.0202876 N (rear): the front rises, a nose-up moment of 2 · 0.02809335 · 0.0005315 = 2.99e-5 N m.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp

from nexus.air.downwash import Fleet, air_speed_at, disc_inflow, jet_speed, no_fleet, source_discs
from nexus.plant.rotor_inflow import blade_pitch, thrust_change

ARM = 0.02809335  # the Crazyflie's rotor offsets along x and y [m]
HOVER_OMEGA = math.sqrt(2298487.1)
#: One vehicle a world: no other vehicle's rotors, and no state to read them from.
ALONE = (no_fleet("cpu"), wp.zeros(0, dtype=wp.transform), wp.zeros(0, dtype=wp.float32))


@wp.kernel
def speeds(thrust: wp.array(dtype=wp.float32), radius: wp.array(dtype=wp.float32), below: wp.array(dtype=wp.float32),
           off_axis: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = jet_speed(thrust[i], radius[i], below[i], off_axis[i], wp.float32(1.225))


def jet(rows):
    rows = np.asarray(rows, dtype=np.float32)
    out = wp.zeros(len(rows), dtype=wp.float32)
    wp.launch(speeds, len(rows), inputs=[*(wp.array(np.ascontiguousarray(rows[:, k]), dtype=wp.float32)
                                           for k in range(4)), out], device="cpu")
    return out.numpy()


def test_one_discs_jet_matches_the_hand_figures():
    found = jet([(1.0, 0.1, 0.0, 0.0), (1.0, 0.1, 0.1, 0.0), (1.0, 0.1, -0.1, 0.0), (1.0, 0.1, 2.0, 0.0),
                 (1.0, 0.1, 2.0, 0.188)])
    assert found == pytest.approx([3.6044750, 6.1532238, 1.0557263, 2.9565485, 1.4782743], rel=1e-5)


def test_no_nan_anywhere_and_nothing_from_a_source_of_no_thrust():
    belows = [-10.0, -1.0, -1e-6, 0.0, 1e-9, 0.1886561, 0.6875, 10.0, 1e3]
    rows = [(t, r, b, x) for t in (0.0, 1e-9, 1.0, 100.0) for r in (1e-4, 0.023, 1.0) for b in belows
            for x in (0.0, 1e-9, 0.05, 5.0, 100.0)]
    found = jet(rows)
    assert np.isfinite(found).all() and (found >= 0.0).all()
    assert (found[[i for i, row in enumerate(rows) if row[0] == 0.0]] == 0.0).all()
    # Directly below (r = 0) the speed falls steadily with distance past the near field: no sign change, no pole.
    below = jet([(1.0, 0.1, b, 0.0) for b in np.linspace(0.9, 50.0, 200)])
    assert (np.diff(below) < 0.0).all()


@wp.kernel
def merged(points: wp.array(dtype=wp.vec3), disc_position: wp.array(dtype=wp.vec3),
           disc_thrust: wp.array(dtype=wp.float32), disc_radius: wp.array(dtype=wp.float32), fleet: Fleet,
           body_q: wp.array(dtype=wp.transform), joint_qd: wp.array(dtype=wp.float32), out: wp.array(dtype=wp.float32)):
    i = wp.tid()
    out[i] = air_speed_at(points[i], disc_position, disc_thrust, disc_radius, wp.float32(1.225), fleet, i, 0, body_q,
                          joint_qd)


def air_speed(points, discs):
    out = wp.zeros(len(points), dtype=wp.float32)
    wp.launch(merged, len(points), inputs=[wp.array(np.asarray(points, np.float32), dtype=wp.vec3),
                                           wp.array(np.asarray([d[0] for d in discs], np.float32), dtype=wp.vec3),
                                           wp.array([d[1] for d in discs], dtype=wp.float32),
                                           wp.array([d[2] for d in discs], dtype=wp.float32), *ALONE, out],
              device="cpu")
    return out.numpy()


def test_four_jets_on_one_axis_make_one_jet_of_the_whole_thrust():
    # Momentum fluxes add: four discs of T/4 at one place blow as one disc of T, not twice as fast.
    points = [(0.0, 0.0, -0.05), (0.0, 0.0, -0.5), (0.03, 0.0, -2.0)]
    four = air_speed(points, [((0.0, 0.0, 0.0), 0.25, 0.1)] * 4)
    one = air_speed(points, [((0.0, 0.0, 0.0), 1.0, 0.1)])
    assert four == pytest.approx(one, rel=1e-6)


def test_the_source_discs_sit_where_the_crazyflies_rotors_do():
    discs = source_discs((0.0, 0.0, 1.0), {"rotors": 4, "arm_length": 0.03973, "thrust": 0.2647796,
                                           "rotor_radius": 0.023})
    at = np.asarray([d[0] for d in discs])
    assert at[:, :2].ravel() == pytest.approx([ARM, ARM, -ARM, ARM, -ARM, -ARM, ARM, -ARM], abs=1e-6)
    assert [d[1] for d in discs] == pytest.approx([0.0661949] * 4, rel=1e-6)


@wp.kernel
def rotor_changes(hubs: wp.array(dtype=wp.vec3), disc_position: wp.array(dtype=wp.vec3),
                  disc_thrust: wp.array(dtype=wp.float32), disc_radius: wp.array(dtype=wp.float32),
                  omega: wp.float32, pitch: wp.float32, fleet: Fleet, body_q: wp.array(dtype=wp.transform),
                  joint_qd: wp.array(dtype=wp.float32), inflow: wp.array(dtype=wp.float32),
                  change: wp.array(dtype=wp.float32)):
    i = wp.tid()
    w = disc_inflow(hubs[i], wp.vec3(0.0, 0.0, 1.0), wp.float32(0.023), disc_position, disc_thrust, disc_radius,
                    wp.float32(1.225), fleet, i, 0, body_q, joint_qd)
    inflow[i] = w
    change[i] = thrust_change(omega, w, wp.float32(0.023), wp.float32(0.573), pitch, wp.float32(1.225))


def under_the_source(dx: float, below: float = 0.3):
    """Inflow and thrust change at the Crazyflie's 4 rotors (1 front right, 2 rear left, 3 front left,
    4 rear right) at their hover speed, the vehicle ``below`` [m] under the Crazyflie source and ``dx`` along +x."""
    discs = source_discs((0.0, 0.0, below), {"rotors": 4, "arm_length": 0.03973, "thrust": 0.2647796,
                                           "rotor_radius": 0.023})
    hubs = np.asarray([(ARM + dx, -ARM, 0.0), (-ARM + dx, ARM, 0.0), (ARM + dx, ARM, 0.0), (-ARM + dx, -ARM, 0.0)],
                      np.float32)
    inflow, change = wp.zeros(4, dtype=wp.float32), wp.zeros(4, dtype=wp.float32)
    wp.launch(rotor_changes, 4, inputs=[wp.array(hubs, dtype=wp.vec3),
                                        wp.array(np.asarray([d[0] for d in discs], np.float32), dtype=wp.vec3),
                                        wp.array([d[1] for d in discs], dtype=wp.float32),
                                        wp.array([d[2] for d in discs], dtype=wp.float32), HOVER_OMEGA,
                                        blade_pitch(2.879933e-8, 0.023, 0.573), *ALONE, inflow, change], device="cpu")
    return inflow.numpy(), change.numpy()


def test_the_inflow_at_a_crazyflie_0_3_m_under_another_is_the_hand_figure():
    inflow, change = under_the_source(0.0)
    assert inflow == pytest.approx([4.1653762] * 4, rel=1e-4)
    assert change == pytest.approx([-0.0203407] * 4, rel=1e-3)  # 4 × 0.0203407 N = 8.30 g of lift lost


def test_a_vehicle_partly_off_the_jet_feels_a_moment():
    inflow, change = under_the_source(0.005)
    assert inflow == pytest.approx([4.0658862, 4.1563638, 4.0658862, 4.1563638], rel=1e-4)
    assert change == pytest.approx([-0.0197561, -0.0202876, -0.0197561, -0.0202876], rel=1e-3)
    # The pitching moment about y of the thrust changes (x_i · ΔT_i summed, rotor i at x_i): the front lifts.
    moment = ARM * (change[0] + change[2]) - ARM * (change[1] + change[3])
    assert moment == pytest.approx(2.99e-5, rel=0.01)
