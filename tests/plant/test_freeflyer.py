"""The free-flyer solver stepped directly: free fall, a spinning gyrostat, rest, determinism, refusals.

Hand-built Newton models (a base and one rotor, both with round numbers) keep the expected values
short; the shipped Astro Max checks the layout read from a vehicle file and the world axis.
"""

from __future__ import annotations

from pathlib import Path

import newton
import numpy as np
import pytest
import warp as wp

from nexus.core.errors import BuildError
from nexus.plant.freeflyer import SolverFreeFlyer
from nexus.plant.loading import load_plant

DT = 0.004  # [s], the default tick
G = 9.80665  # [m/s²]
#: The gyrostat: base mass 2 kg, inertia diag(0.02, 0.02, 0.04) kg·m² about its centre of mass at the
#: origin; one rotor at the origin, 0.1 kg, inertia diag(1e-4, 1e-4, 2e-4), spinning about the base's z.
BASE_INERTIA = (0.02, 0.02, 0.04)
ROTOR_INERTIA = (1.0e-4, 1.0e-4, 2.0e-4)


def gyrostat(height: float = 10.0, ground: bool = False, payload: bool = False) -> newton.Model:
    builder = newton.ModelBuilder(gravity=(0.0, 0.0, -G))
    if ground:
        builder.add_ground_plane()
    base = builder.add_link(xform=wp.transform((0.0, 0.0, height), wp.quat_identity()), mass=2.0,
                            inertia=wp.mat33(np.diag(BASE_INERTIA)), label="base")
    rotor = builder.add_link(mass=0.1, inertia=wp.mat33(np.diag(ROTOR_INERTIA)), label="rotor")
    joints = [builder.add_joint_free(base), builder.add_joint_revolute(base, rotor, axis=(0.0, 0.0, 1.0))]
    if payload:  # a pendulum hinged under the base, its bob 0.5 m below the hinge: an articulated payload
        bob = builder.add_link(mass=0.5, com=(0.0, 0.0, -0.5), inertia=wp.mat33(np.eye(3) * 1e-3), label="payload")
        joints.append(builder.add_joint_revolute(base, bob, axis=(1.0, 0.0, 0.0), label="payload_hinge"))
    if ground:
        builder.add_shape_box(base, hx=0.2, hy=0.2, hz=0.05)
    builder.add_articulation(joints)
    return builder.finalize(device="cpu")


def stepper(model: newton.Model):
    solver = SolverFreeFlyer(model)
    state, control = model.state(), model.control()
    newton.eval_fk(model, state.joint_q, state.joint_qd, state)
    observables = solver.observables({"body_qdd"})

    def step(count: int = 1):
        for _ in range(count):
            solver.step(state, state, control, None, DT, observables=observables)

    return solver, state, control, observables, step


def test_free_fall_lands_on_half_g_t_squared():
    model = gyrostat(height=10.0)
    _, state, _, observables, step = stepper(model)
    step(250)  # 1 s
    q, qd = state.joint_q.numpy(), state.joint_qd.numpy()
    # z(1 s) = 10 - g·1²/2 = 5.096675 m; vz = -9.80665 m/s. The mean-velocity position step is exact for a
    # constant force; what is left is float32 rounding over 250 steps.
    assert q[2] == pytest.approx(5.096675, abs=2e-5)
    assert qd[2] == pytest.approx(-9.80665, abs=2e-5)
    assert np.abs(q[:2]).max() == 0.0 and np.abs(qd[:2]).max() == 0.0
    # The acceleration the IMU reads: (0, 0, -g) for both bodies, no angular acceleration.
    qdd = observables.body_qdd.numpy()
    np.testing.assert_allclose(qdd[:, :3], [[0.0, 0.0, -9.80665]] * 2, atol=1e-5)
    np.testing.assert_allclose(qdd[:, 3:], 0.0, atol=1e-6)
    # body_q follows joint_q (the base's origin is its centre of mass here).
    assert state.body_q.numpy()[0, 2] == q[2]


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotation(axis_angle):
    """Rodrigues: the rotation matrix of a rotation vector."""
    angle = np.linalg.norm(axis_angle)
    if angle == 0.0:
        return np.eye(3)
    k = skew(axis_angle / angle)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def quat_matrix(q):
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def test_spinning_gyrostat_keeps_its_angular_momentum_and_follows_the_closed_form():
    model = gyrostat(height=10.0)
    _, state, _, _, step = stepper(model)
    w0 = np.array([0.3, 0.0, 1.0])  # base body rate [rad/s] (the base starts unrotated: body = world)
    spin0 = 100.0  # the rotor's speed relative to the base [rad/s]
    qd = state.joint_qd.numpy()
    qd[3:6], qd[6] = w0, spin0
    state.joint_qd.assign(qd)
    # By hand. Locked inertia about the common centre of mass (the origin): diag(0.0201, 0.0201, 0.0402);
    # less the rotor's axial 2e-4: I_b = diag(I1, I1, I3) = diag(0.0201, 0.0201, 0.04); J = 2e-4.
    i1, i3, j = 0.0201, 0.04, 2.0e-4
    s = w0[2] + spin0  # the rotor's absolute spin: 101 rad/s
    h0 = np.array([i1 * w0[0], i1 * w0[1], i3 * w0[2] + j * s])  # (0.00603, 0, 0.0602) kg·m²/s

    def momentum():
        q, qd = state.joint_q.numpy(), state.joint_qd.numpy()
        rot = quat_matrix(q[3:7])
        w_body = rot.T @ qd[3:6]
        h = np.diag([i1, i1, i3]) @ w_body + j * (w_body[2] + qd[6]) * np.array([0.0, 0.0, 1.0])
        return rot @ h, rot

    # Closed form of a symmetric gyrostat: w_body = h/I1 - lam e3 with lam = ((I3 - I1) w3 + J s) / I1, so
    # R(t) = exp(t [H]x / I1) R0 exp(-lam t [e3]x) (R0 = 1): a turn about H at |H|/I1, one about body z at -lam.
    lam = ((i3 - i1) * w0[2] + j * s) / i1
    worst_h, worst_angle = 0.0, 0.0
    for second in range(1, 11):
        step(250)
        h, rot = momentum()
        worst_h = max(worst_h, np.linalg.norm(h - h0) / np.linalg.norm(h0))
        t = float(second)
        expected = rotation(h0 * t / i1) @ rotation(np.array([0.0, 0.0, -lam * t]))
        cos = (np.trace(expected.T @ rot) - 1.0) / 2.0
        worst_angle = max(worst_angle, np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))))
    assert worst_h < 1e-4  # rotor spin included, float32, 10 s
    assert worst_angle < 0.1  # [deg]
    # And the rotor's absolute spin is untouched with no torque on it: s stays 101 rad/s.
    q, qd = state.joint_q.numpy(), state.joint_qd.numpy()
    assert (quat_matrix(q[3:7]).T @ qd[3:6])[2] + qd[6] == pytest.approx(101.0, rel=1e-5)


def test_a_rotor_torque_spins_the_rotor_up_and_the_base_the_other_way():
    model = gyrostat(height=10.0)
    _, state, control, observables, step = stepper(model)
    control.joint_f.assign(np.array([0, 0, 0, 0, 0, 0, 0.01], dtype=np.float32))  # 0.01 N·m on the rotor joint
    step(25)  # 0.1 s
    qd = state.joint_qd.numpy()
    # Internal torque: rotor J ds/dt = 0.01 -> s = 0.01·0.1/2e-4 = 5 rad/s; the base turns back with
    # I3 dw/dt = -0.01 -> w = -0.01·0.1/0.04 = -0.025 rad/s; relative speed 5 - (-0.025) = 5.025 rad/s.
    assert qd[5] == pytest.approx(-0.025, rel=1e-4)
    assert qd[6] == pytest.approx(5.025, rel=1e-4)
    qdd = observables.body_qdd.numpy()
    assert qdd[0, 5] == pytest.approx(-0.25, rel=1e-4)  # -0.01/0.04 [rad/s²]
    assert qdd[1, 5] == pytest.approx(50.0, rel=1e-4)  # the rotor: 0.01/2e-4 [rad/s²]


def test_the_gyrostat_lands_and_rests_on_its_box():
    model = gyrostat(height=0.3, ground=True)
    _, state, _, observables, step = stepper(model)
    step(1000)  # 4 s: falls 0.25 m, lands, settles
    q, qd = state.joint_q.numpy(), state.joint_qd.numpy()
    # Rest: four bottom corners carry the weight; the spring per point is M w^2 / 4 with w = 50 rad/s, so the
    # box sinks g / w^2 = 9.80665 / 2500 = 3.92 mm below z = 0.05 (its half height).
    assert q[2] == pytest.approx(0.05 - 0.0039227, abs=1e-5)
    assert np.abs(qd[:6]).max() < 1e-5
    # On the ground the IMU's acceleration is zero: the contact carries the weight.
    assert np.abs(observables.body_qdd.numpy()[0]).max() < 1e-4


def astro_steps(worlds: int, steps: int = 300):
    """The Astro Max on the ground, rotors pushed by fixed loads: lifts off, so contact and flight both run."""
    plant, _, _ = load_plant("astro_max_base", "empty", worlds=worlds, solver="freeflyer")
    plant.reset()
    per = plant.bodies_per_world
    f = np.zeros((plant.model.body_count, 6), dtype=np.float32)
    tau = np.zeros(plant.model.joint_dof_count, dtype=np.float32)
    for w in range(worlds):
        for k, rotor in enumerate(plant.rotors):
            f[rotor.body + w * per, 2] = 15.0 + k  # uneven thrust [N]: climbs and tilts
            f[rotor.body + w * per, 5] = -0.2 * rotor.spin  # drag torque on the rotor [N·m]
            tau[rotor.dof + w * plant.dofs_per_world] = 0.2 * rotor.spin  # the motor's torque [N·m]
    observables = plant.solver.observables({"body_qdd"})
    for _ in range(steps):
        plant.state.body_f.assign(f)
        plant.control.joint_f.assign(tau)
        plant.solver.step(plant.state, plant.state, plant.control, None, DT, observables=observables)
    arrays = (plant.state.joint_q, plant.state.joint_qd, plant.state.body_q, plant.state.body_qd,
              observables.body_qdd)
    return plant, [a.numpy() for a in arrays]


def test_world_i_of_n_equals_a_one_world_run_and_runs_repeat_bit_for_bit():
    plant1, one = astro_steps(1)
    _, again = astro_steps(1)
    plant3, three = astro_steps(3)
    assert one[0][2] > 0.5  # it lifted off the ground it started on
    for a, b in zip(one, again):
        assert a.tobytes() == b.tobytes()
    per = (plant3.coords_per_world, plant3.dofs_per_world, plant3.bodies_per_world, plant3.bodies_per_world,
           plant3.bodies_per_world)
    for w in range(3):
        for a, b, n in zip(one, three, per):
            assert a.tobytes() == b[w * n:(w + 1) * n].tobytes(), f"world {w} of 3"


def test_astro_max_layout_gear_and_rotors():
    plant, _, _ = load_plant("astro_max_base", "empty", solver="freeflyer")
    layout = plant.solver.layout
    # Three boxes on the base (body, two skids): 24 corners; the skids' 8 bottom corners at z = -0.285 - 0.015.
    assert layout.gear_point.shape == (1, 24, 3)
    assert layout.rest_points.tolist() == [8]
    assert layout.gear_point[0, :, 2].min() == pytest.approx(-0.30, abs=1e-6)
    assert layout.rotor_dof.tolist() == [[6, 7, 8, 9]]
    assert layout.plane.tolist() == [[0.0, 0.0, 1.0, 0.0]]


def test_obstacles_and_payloads_are_refused_in_one_line():
    with pytest.raises(BuildError) as refused:
        load_plant("astro_max_base", "obstacles", solver="freeflyer")
    message = str(refused.value)
    assert "\n" not in message
    assert "obstacle" in message and "--solver mujoco" in message and "/scene/obstacles/box_red (box)" in message
    from nexus.plant.freeflyer import FreeFlyerRefusal

    with pytest.raises(FreeFlyerRefusal, match=r"payload_hinge turns body payload .*articulated payload.*--solver mujoco"):
        SolverFreeFlyer(gyrostat(payload=True))


def test_two_free_bodies_in_a_world_are_refused():
    builder = newton.ModelBuilder()
    builder.add_body(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01), label="one")
    builder.add_body(mass=1.0, inertia=wp.mat33(np.eye(3) * 0.01), label="two")
    from nexus.plant.freeflyer import FreeFlyerRefusal

    with pytest.raises(FreeFlyerRefusal, match=r"2 free bodies.*vehicle-to-vehicle contact.*--solver mujoco"):
        SolverFreeFlyer(builder.finalize(device="cpu"))



def test_a_mass_changed_and_notified_is_flown_with():
    model = gyrostat(height=10.0)
    solver, state, _, _, step = stepper(model)
    model.body_mass.assign(np.array([3.0, 0.1], dtype=np.float32))  # as a variation draw writes it
    solver.notify_model_changed(newton.ModelFlags.BODY_INERTIAL_PROPERTIES)
    # 3.1 kg held up by 3.1 · 9.80665 = 30.400615 N on the base: it stays at 10 m. With the mass it was made
    # with (2.1 kg) it would climb at 30.4/2.1 - 9.81 = 4.67 m/s²: 0.93 m in 0.4 s.
    state.body_f.assign(np.array([[0.0, 0.0, 30.400615, 0.0, 0.0, 0.0], [0.0] * 6], dtype=np.float32))
    step(100)
    assert state.joint_q.numpy()[2] == pytest.approx(10.0, abs=1e-4)


def test_a_differentiable_rollout_refuses_the_freeflyer_in_one_line():
    from nexus.diff.refusals import refuse_undifferentiable

    with pytest.raises(BuildError, match=r"^--solver freeflyer: .*differentiate with --solver featherstone$"):
        refuse_undifferentiable("freeflyer", "pid", "astro_max_base", "empty", "cpu")
