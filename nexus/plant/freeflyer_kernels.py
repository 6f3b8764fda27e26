"""The free-flyer solver's two kernels: each world's mass properties, and the step (see freeflyer.py).

``freeflyer_inertia`` runs when the solver is made and when the model's masses change
(``notify_model_changed``): the composite's mass, centre of mass and inverse inertia, and each rotor's
axis, axial inertia and place, per world. ``freeflyer_step`` is the one launch a step: one thread per
world reads those, the state and the loads, and writes the next state. Rotations by the base's
attitude go through its rotation matrix, formed once a step (9 products a vector instead of a
quaternion sandwich), and the sines and cosines of the half angles through :func:`sin_cos` (no C
library calls), which is what keeps the step short.
"""

from __future__ import annotations

import warp as wp

from nexus.plant.sin_cos import sin_cos


@wp.func
def parallel_axis(mass: float, d: wp.vec3):
    """The inertia a point mass adds about a point ``d`` away [kg·m²]: ``m (|d|² 1 - d d^T)``."""
    return mass * (wp.dot(d, d) * wp.identity(n=3, dtype=float) - wp.outer(d, d))


@wp.func
def turn(q: wp.quat, rate_body: wp.vec3, dt: float):
    """``q`` turned by the body-frame rotation ``rate_body * dt`` (the exact exponential), normalised."""
    phi = rate_body * dt
    angle = wp.length(phi)
    step = wp.quat_identity()
    if angle > 1.0e-12:
        half = 0.5 * angle
        both = sin_cos(half)
        step = wp.quat(phi * (both[0] / angle), both[1])
    return wp.normalize(q * step)


@wp.kernel
def freeflyer_inertia(
    base_body: wp.array(dtype=wp.int32),
    rotor_joint: wp.array2d(dtype=wp.int32),
    rotor_body: wp.array2d(dtype=wp.int32),
    rotor_dof: wp.array2d(dtype=wp.int32),
    body_mass: wp.array(dtype=wp.float32),
    body_inertia: wp.array(dtype=wp.mat33),
    body_com: wp.array(dtype=wp.vec3),
    joint_x_p: wp.array(dtype=wp.transform),
    joint_x_c: wp.array(dtype=wp.transform),
    joint_axis: wp.array(dtype=wp.vec3),
    # out, per world
    total_mass: wp.array(dtype=wp.float32),
    centre: wp.array(dtype=wp.vec3),
    inertia_b: wp.array(dtype=wp.mat33),
    inverse_inertia: wp.array(dtype=wp.mat33),
    # out, per world and rotor
    axis: wp.array2d(dtype=wp.vec3),
    axial: wp.array2d(dtype=wp.float32),
    arm: wp.array2d(dtype=wp.vec3),
    child_inverse: wp.array2d(dtype=wp.transform),
):
    """Each world's composite: mass [kg], centre of mass [m, base frame], ``I_b^-1`` (the locked inertia about
    the centre of mass less each rotor's axial inertia, ``I_b``, and its inverse) and each rotor's axis (base frame), axial inertia
    ``J`` [kg·m²], centre of mass relative to the composite's [m, base frame] and the inverse of its joint's child
    frame (the step places the rotor's body with it)."""
    world = wp.tid()
    nr = rotor_joint.shape[1]
    b = base_body[world]
    mass = body_mass[b]
    moment = body_mass[b] * body_com[b]
    for i in range(nr):
        j = rotor_joint[world, i]
        r = rotor_body[world, i]
        x_r = wp.transform_point(joint_x_p[j] * wp.transform_inverse(joint_x_c[j]), body_com[r])
        mass += body_mass[r]
        moment += body_mass[r] * x_r
    c = moment / mass
    inertia = body_inertia[b] + parallel_axis(body_mass[b], body_com[b] - c)
    for i in range(nr):
        j = rotor_joint[world, i]
        r = rotor_body[world, i]
        frame = joint_x_p[j] * wp.transform_inverse(joint_x_c[j])
        x_r = wp.transform_point(frame, body_com[r])
        turn_r = wp.quat_to_matrix(wp.transform_get_rotation(frame))
        inertia_r = turn_r * body_inertia[r] * wp.transpose(turn_r)
        a = wp.normalize(wp.quat_rotate(wp.transform_get_rotation(joint_x_p[j]), joint_axis[rotor_dof[world, i]]))
        along = wp.dot(a, inertia_r * a)
        inertia += inertia_r + parallel_axis(body_mass[r], x_r - c) - along * wp.outer(a, a)
        axis[world, i] = a
        axial[world, i] = along
        arm[world, i] = x_r - c
        child_inverse[world, i] = wp.transform_inverse(joint_x_c[j])
    total_mass[world] = mass
    centre[world] = c
    inertia_b[world] = inertia
    inverse_inertia[world] = wp.inverse(inertia)


@wp.func
def rotor_advance(s: float, u: float, along: float, a: wp.vec3, w_body1: wp.vec3, speed: float, angle: float,
                  dt: float) -> wp.vec3:
    """A rotor's absolute spin, relative speed and angle after the step: ``(s1, speed1, angle1)``, from its spin
    ``s`` and axial torque ``u`` [N·m] at the step's start, its axial inertia ``along`` [kg·m²] and axis ``a`` (base
    frame), the base's new body rate, and its relative speed and angle at the start (trapezoidal angle)."""
    s1 = s + dt * u / along
    speed1 = s1 - wp.dot(a, w_body1)
    return wp.vec3(s1, speed1, angle + 0.5 * dt * (speed + speed1))


@wp.func
def stable_damping(damping: float, mass: float, inverse: wp.mat33, turn: wp.mat33, lever: wp.vec3, direction: wp.vec3,
                   shared: float, dt: float) -> float:
    """``damping`` [N·s/m] at a gear point, capped where one explicit step of it would reverse the point's velocity
    along ``direction`` (unit, world): at ``m_eff / (shared · dt)``, with ``m_eff`` the vehicle's effective mass there
    (``1 / m_eff = 1 / M + (r × d) · I⁻¹ (r × d)``, ``lever`` r from the centre of mass [m, world]) shared by the points
    the vehicle rests on. Used for the friction's viscous part, whose slip at the gear of a light, narrow frame is
    mostly a roll about a centre of mass high above it: on the x500 the uncapped slope reversed the skids' slip every
    step and the vehicle rocked at ±0.6 rad/s after settling (docs/freeflyer.md, Contact)."""
    arm_body = wp.transpose(turn) * wp.cross(lever, direction)
    inverse_mass = 1.0 / mass + wp.dot(arm_body, inverse * arm_body)
    return wp.min(damping, 1.0 / (inverse_mass * shared * dt))


def _step_kernel(hold: bool):
    """The step kernel, with the hold of finished worlds (``hold``) or without it: two kernels from one source,
    so the plain step (Newton's ``step``, the benchmarks' bare step) carries none of the hold's work."""

    def freeflyer_step(
        # layout, one row per world
        base_body: wp.array(dtype=wp.int32),
        base_coord: wp.array(dtype=wp.int32),
        base_dof: wp.array(dtype=wp.int32),
        rotor_joint: wp.array2d(dtype=wp.int32),
        rotor_body: wp.array2d(dtype=wp.int32),
        rotor_coord: wp.array2d(dtype=wp.int32),
        rotor_dof: wp.array2d(dtype=wp.int32),
        gear_point: wp.array2d(dtype=wp.vec3),
        gear_radius: wp.array2d(dtype=wp.float32),
        gear_mu: wp.array2d(dtype=wp.float32),
        rest_points: wp.array(dtype=wp.int32),
        plane: wp.array(dtype=wp.vec4),
        reach: wp.array(dtype=wp.float32),
        # mass properties (freeflyer_inertia)
        total_mass: wp.array(dtype=wp.float32),
        centre: wp.array(dtype=wp.vec3),
        inertia_b: wp.array(dtype=wp.mat33),
        inverse_inertia: wp.array(dtype=wp.mat33),
        axis: wp.array2d(dtype=wp.vec3),
        axial: wp.array2d(dtype=wp.float32),
        arm: wp.array2d(dtype=wp.vec3),
        child_inverse: wp.array2d(dtype=wp.transform),
        # the model
        body_com: wp.array(dtype=wp.vec3),
        joint_x_p: wp.array(dtype=wp.transform),
        joint_axis: wp.array(dtype=wp.vec3),
        gravity: wp.array(dtype=wp.vec3),
        contact_frequency: float,
        contact_damping_ratio: float,
        dt: float,
        # the applied loads
        body_f: wp.array(dtype=wp.spatial_vector),
        joint_f: wp.array(dtype=wp.float32),
        # the state in (may be the state out: each world reads all it needs before it writes)
        joint_q_in: wp.array(dtype=wp.float32),
        joint_qd_in: wp.array(dtype=wp.float32),
        write_qdd: wp.int32,
        # the hold of finished worlds (read only by the holding kernel: SolverFreeFlyer.step_holding)
        running: wp.array(dtype=wp.int32),
        tick: wp.array(dtype=wp.int64),
        failed_flag: wp.int32,
        # carried from step to step (see SolverFreeFlyer.carried)
        carried_valid: wp.array(dtype=wp.int32),
        carried_momentum: wp.array(dtype=wp.vec3),
        carried_rate: wp.array(dtype=wp.vec3),
        carried_spin: wp.array2d(dtype=wp.float32),
        carried_speed: wp.array2d(dtype=wp.float32),
        # scratch: each rotor's axial torque, formed with the loads and read again where the rotors are written
        rotor_torque: wp.array2d(dtype=wp.float32),
        # out
        joint_q: wp.array(dtype=wp.float32),
        joint_qd: wp.array(dtype=wp.float32),
        body_q: wp.array(dtype=wp.transform),
        body_qd: wp.array(dtype=wp.spatial_vector),
        body_qdd: wp.array(dtype=wp.spatial_vector),
        done: wp.array(dtype=wp.int32),
        failed_tick: wp.array(dtype=wp.int64),
    ):
        world = wp.tid()
        nr = rotor_joint.shape[1]
        b = base_body[world]
        qc = base_coord[world]
        qv = base_dof[world]
        g = gravity[wp.min(world, gravity.shape[0] - 1)]
        mass = total_mass[world]
        c = centre[world]
        inverse = inverse_inertia[world]
        com_base = body_com[b]

        # The base's pose and twist (free joint: origin, quaternion; centre-of-mass velocity, angular velocity).
        p = wp.vec3(joint_q_in[qc], joint_q_in[qc + 1], joint_q_in[qc + 2])
        rot = wp.normalize(wp.quat(joint_q_in[qc + 3], joint_q_in[qc + 4], joint_q_in[qc + 5], joint_q_in[qc + 6]))
        turn0 = wp.quat_to_matrix(rot)
        v_base = wp.vec3(joint_qd_in[qv], joint_qd_in[qv + 1], joint_qd_in[qv + 2])
        w_world = wp.vec3(joint_qd_in[qv + 3], joint_qd_in[qv + 4], joint_qd_in[qv + 5])
        w_body = wp.transpose(turn0) * w_world
        # The momentum and spins this solver wrote last step stand for the state while the state holds the very
        # bits it wrote (a reset, a held world or a restored snapshot changes them, and they are rebuilt).
        carried = carried_valid[world] != 0
        for k in range(3):
            if carried_rate[world][k] != w_world[k]:
                carried = False
        for i in range(nr):
            if carried_speed[world, i] != joint_qd_in[rotor_dof[world, i]]:
                carried = False

        base_arm = turn0 * (com_base - c)
        x_c = p + turn0 * c  # the composite centre of mass [m, world]
        v_c = v_base - wp.cross(w_world, base_arm)

        # Loads: gravity, every body's wrench (about the composite centre of mass), the rotors' axial torques.
        force = mass * g + wp.spatial_top(body_f[b])
        torque = wp.spatial_bottom(body_f[b]) + wp.cross(base_arm, wp.spatial_top(body_f[b]))
        spin_momentum = wp.vec3(0.0)  # sum J_i a_i s_i [base frame]
        axial_load = wp.vec3(0.0)  # sum a_i u_i [base frame]
        for i in range(nr):
            r = rotor_body[world, i]
            dof = rotor_dof[world, i]
            a = axis[world, i]
            wrench = body_f[r]
            force += wp.spatial_top(wrench)
            torque += wp.spatial_bottom(wrench) + wp.cross(turn0 * arm[world, i], wp.spatial_top(wrench))
            s = wp.dot(a, w_body) + joint_qd_in[dof]
            if carried:
                s = carried_spin[world, i]
            u = joint_f[dof] + wp.dot(turn0 * a, wp.spatial_bottom(wrench))
            spin_momentum += axial[world, i] * s * a
            axial_load += u * a
            # Kept for the rotors' pass below (the spin is replaced by the step's own at the end).
            carried_spin[world, i] = s
            rotor_torque[world, i] = u

        # Ground contact at the gear points: spring and damper along the plane's normal, Coulomb friction.
        plane_w = plane[world]
        n = wp.vec3(plane_w[0], plane_w[1], plane_w[2])
        offset = plane_w[3]
        if wp.length_sq(n) > 0.0 and wp.dot(n, p) - offset < reach[world]:
            shared = float(rest_points[world])
            per_point = mass / shared
            stiffness = per_point * contact_frequency * contact_frequency
            damping = per_point * 2.0 * contact_damping_ratio * contact_frequency
            for k in range(gear_point.shape[1]):
                tip = p + turn0 * gear_point[world, k] - gear_radius[world, k] * n
                depth = offset - wp.dot(n, tip)
                if depth > 0.0:
                    lever = tip - x_c
                    velocity = v_c + wp.cross(w_world, lever)
                    normal_speed = wp.dot(n, velocity)
                    push = stiffness * depth - damping * normal_speed
                    if push > 0.0:
                        slip = velocity - normal_speed * n
                        slip_speed = wp.length(slip)
                        contact = push * n
                        if slip_speed > 0.0:
                            grip = stable_damping(damping, mass, inverse, turn0, lever, slip / slip_speed, shared, dt)
                            contact -= wp.min(gear_mu[world, k] * push, grip * slip_speed) / slip_speed * slip
                        force += contact
                        torque += wp.cross(lever, contact)

        # Accelerations at the start of the step (the body_qdd observable).
        torque_body = wp.transpose(turn0) * torque
        h_body = inertia_b[world] * w_body + spin_momentum
        alpha_body = inverse * (torque_body - wp.cross(w_body, h_body) - axial_load)
        a_c = force / mass

        # Step: momentum with the step's torque; attitude by the midpoint rate; centre of mass by the mean velocity.
        momentum = turn0 * h_body
        if carried:
            momentum = carried_momentum[world]
        momentum_half = momentum + 0.5 * dt * torque
        spin_half = spin_momentum + 0.5 * dt * axial_load
        # The momentum in the half-step body frame: turned back by half the start rate's rotation, to first order
        # in it (R_half^T H = R^T H - (dt/2) w x R^T H), which keeps the midpoint rate, and the step, second order.
        held = wp.transpose(turn0) * momentum_half
        rate = inverse * (held - spin_half)
        rate = inverse * (held - (0.5 * dt) * wp.cross(rate, held) - spin_half)
        rot1 = turn(rot, rate, dt)
        turn1 = wp.quat_to_matrix(rot1)
        momentum1 = momentum + dt * torque
        w_body1 = inverse * (wp.transpose(turn1) * momentum1 - (spin_momentum + dt * axial_load))
        w_world1 = turn1 * w_body1
        v_c1 = v_c + dt * a_c
        x_c1 = x_c + 0.5 * dt * (v_c + v_c1)
        p1 = x_c1 - turn1 * c
        v_base1 = v_c1 + wp.cross(w_world1, turn1 * (com_base - c))
        alpha_world = turn0 * alpha_body
        pose1 = wp.transform(p1, rot1)

        # With the hold, a world that is done keeps its state, and a flying world whose step is not finite keeps its
        # last finite state and is marked failed: the state is written only when ``keep``. Everything else (the
        # carried momentum and spins, the accelerations) is written either way, as the step alone writes it.
        keep = True
        if wp.static(hold):
            finite = wp.isfinite(p1) and wp.isfinite(rot1) and wp.isfinite(v_base1) and wp.isfinite(w_world1)
            for i in range(nr):
                advanced = rotor_advance(carried_spin[world, i], rotor_torque[world, i], axial[world, i],
                                         axis[world, i], w_body1, joint_qd_in[rotor_dof[world, i]],
                                         joint_q_in[rotor_coord[world, i]], dt)
                if not (wp.isfinite(advanced[1]) and wp.isfinite(advanced[2])):
                    finite = False
            flying = running[world] != 0
            keep = flying and finite
            if flying and not finite:
                done[world] = failed_flag
                failed_tick[world] = tick[world]

        # Rotors, each read before it is written (in place).
        for i in range(nr):
            j = rotor_joint[world, i]
            r = rotor_body[world, i]
            dof = rotor_dof[world, i]
            coord = rotor_coord[world, i]
            a = axis[world, i]
            along = axial[world, i]
            speed = joint_qd_in[dof]
            u = rotor_torque[world, i]
            advanced = rotor_advance(carried_spin[world, i], u, along, a, w_body1, speed, joint_q_in[coord], dt)
            s1 = advanced[0]
            speed1 = advanced[1]
            angle1 = advanced[2]
            axis_joint = joint_axis[dof]
            half = sin_cos(0.5 * angle1)
            spin_q = wp.quat(axis_joint * half[0], half[1])
            x_p = joint_x_p[j]
            pose_r = wp.transform(wp.transform_get_translation(x_p), wp.transform_get_rotation(x_p) * spin_q) * \
                child_inverse[world, i]
            a_world1 = turn1 * a
            carried_spin[world, i] = s1
            carried_speed[world, i] = speed1
            if keep:
                joint_q[coord] = angle1
                joint_qd[dof] = speed1
                body_q[r] = pose1 * pose_r
                body_qd[r] = wp.spatial_vector(v_c1 + wp.cross(w_world1, turn1 * arm[world, i]),
                                               w_world1 + speed1 * a_world1)
            if write_qdd != 0:
                lever = turn0 * arm[world, i]
                a_world = turn0 * a
                spin_accel = u / along - wp.dot(a, alpha_body)
                body_qdd[r] = wp.spatial_vector(
                    a_c + wp.cross(alpha_world, lever) + wp.cross(w_world, wp.cross(w_world, lever)),
                    alpha_world + spin_accel * a_world + wp.cross(w_world, speed * a_world))
        if keep:
            joint_q[qc] = p1[0]
            joint_q[qc + 1] = p1[1]
            joint_q[qc + 2] = p1[2]
            joint_q[qc + 3] = rot1[0]
            joint_q[qc + 4] = rot1[1]
            joint_q[qc + 5] = rot1[2]
            joint_q[qc + 6] = rot1[3]
            joint_qd[qv] = v_base1[0]
            joint_qd[qv + 1] = v_base1[1]
            joint_qd[qv + 2] = v_base1[2]
            joint_qd[qv + 3] = w_world1[0]
            joint_qd[qv + 4] = w_world1[1]
            joint_qd[qv + 5] = w_world1[2]
            body_q[b] = pose1
            body_qd[b] = wp.spatial_vector(v_base1, w_world1)
        carried_momentum[world] = momentum1
        carried_rate[world] = w_world1
        carried_valid[world] = 1
        if write_qdd != 0:
            body_qdd[b] = wp.spatial_vector(
                a_c + wp.cross(alpha_world, base_arm) + wp.cross(w_world, wp.cross(w_world, base_arm)), alpha_world)

    return wp.kernel(freeflyer_step, module="unique")


#: One step of every world; every world's state written.
freeflyer_step = _step_kernel(False)
#: One step of every world, holding the worlds that are done or whose step is not finite (see ``step_holding``).
freeflyer_step_holding = _step_kernel(True)
