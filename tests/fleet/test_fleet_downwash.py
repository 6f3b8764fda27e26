"""Two Crazyflies in one world, one 0.3 m above the other: the upper one's four rotor jets act on the lower one's
rotors as a scene source of the same thrust does (tests/downwash/test_jet.py works those figures by hand).

Both vehicles level, every rotor at the hover speed ω0² = 2298487.1 (rad/s)², so each rotor of the upper vehicle
blows kT ω0² = 2.879933e-8 × 2298487.1 = 0.0661949 N from its hub, at (±0.02809335, ±0.02809335) m: the discs of
the Crazyflie source of tests/downwash (0.2647796 N on four discs on a 0.03973 m arm). Each lower rotor, 0.3 m
under its twin, then sees w = 4.1653762 m/s and loses 0.0203407 N; 5 mm off the axis along +x the front rotors
lose 0.0197561 N and the rear 0.0202876 N. The upper vehicle's rotors, 0.3 m above the lower discs, sit in the air
those discs draw down from above: on the axis (1 - 0.3/√(0.3² + 0.023²)) v_h = 0.002928 × 4.032055 =
0.0117978 m/s (v_h = √(0.0661949 / (2 × 1.225 × π × 0.023²))); the ring points of Radon's rule, 0.018779 m off
the axis, see exp(-ln2 × (0.018779 / 0.017734)²) = 0.4596 of it (the jet's half-width there, S·B·√2·R), so the
disc averages 0.25 + 0.75 × 0.4596 = 0.5947 of it, 0.0070165 m/s, and the closed form of rotor_inflow gives a
loss of 2.725e-5 N per rotor (the other three lower discs, 0.056 m and more off the axis, add under 0.1 %).
"""

from __future__ import annotations

from pathlib import Path

import newton
import numpy as np
import pytest
import warp as wp

from nexus.air.downwash import Downwash, add_downwash
from nexus.core.build_context import BuildContext
from nexus.core.rng import RngTree
from nexus.plant.fleet import FleetLayout
from nexus.plant.loading import load_plant

VEHICLE = Path(__file__).resolve().parents[1] / "downwash" / "data" / "crazyflie_inflow_stiff.usda"
HOVER_OMEGA = 2298487.1 ** 0.5


def rotor_changes(offset_x: float, contact: bool = True) -> np.ndarray:
    """The thrust change [N] on each rotor body of (vehicle 0, vehicle 1), vehicle 1 0.3 m above vehicle 0 and
    ``offset_x`` [m] behind it along x."""
    plant, stage, scene = load_plant(VEHICLE, "empty", fleet=FleetLayout(2, 0.5, contact))
    q = plant.state.joint_q.numpy()
    upper, lower = plant.base_coord + plant.coords_per_world, plant.base_coord
    q[upper : upper + 7] = q[lower : lower + 7]
    q[upper] -= offset_x
    q[upper + 2] += 0.3
    plant.state.joint_q.assign(q)
    qd = plant.state.joint_qd.numpy()
    for slot in range(2):
        for rotor in plant.rotors:
            qd[rotor.dof + slot * plant.dofs_per_world] = rotor.spin * HOVER_OMEGA
    plant.state.joint_qd.assign(qd)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    plant.state.body_f.zero_()
    downwash = Downwash.from_scene(scene, stage, plant)
    if downwash is None:
        return np.zeros((2, len(plant.rotors)))
    ctx = BuildContext(device="cpu", dt_ns=4_000_000, rng=RngTree(0), worlds=2, vehicles=2)
    downwash.prepare(ctx)
    wp.launch(add_downwash, dim=(2, len(downwash.rotors)),
              inputs=[*downwash._args, plant.state.joint_qd, plant.state.body_q, plant.state.body_qd,
                      wp.zeros(2, dtype=wp.int64)],
              outputs=[plant.state.body_f], device="cpu")
    force = plant.state.body_f.numpy()
    return np.array([[force[rotor.body + slot * plant.bodies_per_world][2] for rotor in plant.rotors]
                     for slot in range(2)])


def test_the_lower_crazyflie_loses_the_hand_worked_lift_under_its_twin():
    changes = rotor_changes(0.0)
    assert changes[0] == pytest.approx([-0.0203407] * 4, rel=2e-3)
    assert changes[1] == pytest.approx([-2.725e-5] * 4, rel=5e-3)


def test_a_crazyflie_partly_under_its_twin_feels_a_moment():
    changes = rotor_changes(0.005)  # the upper one 5 mm behind: the lower one's front rotors sit less deep
    front, rear = changes[0][[0, 2]], changes[0][[1, 3]]
    assert front == pytest.approx([-0.0197561] * 2, rel=2e-3)
    assert rear == pytest.approx([-0.0202876] * 2, rel=2e-3)


def test_without_vehicle_contact_the_vehicles_do_not_blow_on_each_other():
    assert not rotor_changes(0.0, contact=False).any()
