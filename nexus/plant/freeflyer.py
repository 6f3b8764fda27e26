"""The free-flyer solver: a multirotor as one rigid body with spinning rotors, one kernel launch a step.

A vehicle made as the shipped ones are (a free base, rotors on revolute joints about axes fixed in the
base) needs none of an articulated-body solver's generality between takeoff and landing: with each
rotor symmetric about its spin axis and its centre of mass on that axis, the vehicle's mass, centre of
mass and locked inertia do not depend on the rotor angles. Its exact dynamics are then

* the composite centre of mass: ``M a_c = F + M g`` (every body's force, the ground's included);
* the total angular momentum about it, world frame: ``dH/dt = T`` with
  ``H = R (I_b w + sum_i J_i a_i s_i)``, where ``I_b`` is the locked inertia less each rotor's axial
  inertia ``J_i a_i a_i^T``, ``w`` the base's body rate and ``s_i = a_i . w + w_i`` rotor i's absolute
  spin about its axis ``a_i``;
* each rotor's absolute spin: ``J_i ds_i/dt = u_i``, its joint torque (the servos') plus the axial
  torque its own body wrench carries (the propeller's drag).

The integrator steps ``H`` and ``s_i`` with the applied torques and takes the body rate from them
(``w = I_b^-1 (R^T H - sum J_i a_i s_i)``). ``H`` and ``s_i`` are carried from step to step beside Newton's
state (:meth:`SolverFreeFlyer.carried`), so with no torque the angular momentum keeps its bits, rotor spin
included. The attitude advances by the rate at the step's midpoint (one fixed-point pass through a
half-step attitude): second order, so a torque-free top's orientation follows the closed form. The centre of mass steps its velocity with the step's force and
its position with the mean of the two velocities (exact for a constant force: a free fall lands on
``g t^2 / 2``). All of it happens in one thread per world; world i of N does the same arithmetic as a
one-world run, so it is bit-equal to it.

Contact is with the scene's ground plane only, at gear points: the 8 corners of every colliding box
and the lowest point of every colliding sphere on the base. A point below the plane pushes back with a
spring and damper (per point ``k = M w_n^2 / n``, ``c = 2 M w_n / n``, ``n`` the points the vehicle rests on,
``w_n`` = 50 rad/s, critically damped: MuJoCo's default contact time constant of 0.02 s) and Coulomb
friction (``|f_t| <= mu f_n``, ``mu`` the larger of the two shapes' coefficients as MuJoCo takes it,
regularised below a slip speed as a viscous ``c |v_t|``). The step writes Newton's state as MuJoCo does:
``joint_q`` / ``joint_qd`` (free joint: base origin and quaternion, centre-of-mass velocity and angular
velocity, world frame; rotors: angle and relative speed) and ``body_q`` / ``body_qd`` of every body, and
the ``body_qdd`` observable (each body's acceleration at the start of the step, contact included).

Whatever else a model holds is refused at construction (:func:`freeflyer_layout`), never flown wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import newton
import numpy as np
import warp as wp
from newton.solvers import SolverBase

from nexus.plant.freeflyer_kernels import freeflyer_inertia, freeflyer_step, freeflyer_step_holding

#: The ground contact's natural frequency with the vehicle resting on its gear [rad/s] (MuJoCo's
#: default contact time constant, 0.02 s, is 1 / 50 rad/s) and its damping ratio [1] (critical).
CONTACT_FREQUENCY = 50.0
CONTACT_DAMPING_RATIO = 1.0
#: How far above the lowest gear point a point still counts as one the vehicle rests on [m].
REST_TOLERANCE = 1.0e-3
#: The most gear points one vehicle may have (the kernel keeps no per-point state; this bounds a table).
MAX_GEAR_POINTS = 64

BOX = int(newton.GeoType.BOX)
SPHERE = int(newton.GeoType.SPHERE)
PLANE = int(newton.GeoType.PLANE)
FREE = int(newton.JointType.FREE)
REVOLUTE = int(newton.JointType.REVOLUTE)
COLLIDES = int(newton.ShapeFlags.COLLIDE_SHAPES)

REFUSAL_FIX = "fly it with --solver mujoco"


class FreeFlyerRefusal(ValueError):
    """What the free-flyer solver cannot fly, in one line naming the feature and ``--solver mujoco``."""


@dataclass
class FreeFlyerLayout:
    """Where each world's vehicle sits in Newton's index spaces, and its gear points (host arrays)."""

    base_body: np.ndarray  # (worlds,)
    base_coord: np.ndarray  # (worlds,) first coordinate of the free joint
    base_dof: np.ndarray  # (worlds,)
    rotor_joint: np.ndarray  # (worlds, rotors)
    rotor_body: np.ndarray
    rotor_coord: np.ndarray
    rotor_dof: np.ndarray
    gear_point: np.ndarray  # (worlds, points, 3) in the base body's frame [m]
    gear_radius: np.ndarray  # (worlds, points) [m]
    gear_mu: np.ndarray  # (worlds, points) [1]
    rest_points: np.ndarray  # (worlds,) gear points the vehicle rests on
    plane: np.ndarray  # (worlds, 4): normal and offset (n . x = d on the plane); a zero normal: no ground
    reach: np.ndarray  # (worlds,) the farthest a gear point reaches from the base's origin [m]


def _name(labels, index: int, kind: str) -> str:
    return labels[index] if labels and index < len(labels) and labels[index] else f"{kind} {index}"


def _box_corners(half: np.ndarray) -> np.ndarray:
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64)
    return signs * half


def _rotate(quat_xyzw: np.ndarray, v: np.ndarray) -> np.ndarray:
    x, y, z, w = quat_xyzw
    u = np.array([x, y, z])
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)


def freeflyer_layout(model: newton.Model) -> FreeFlyerLayout:
    """Read and check each world's vehicle; a :class:`FreeFlyerRefusal` names what cannot be flown."""
    joint_type = model.joint_type.numpy()
    parent, child = model.joint_parent.numpy(), model.joint_child.numpy()
    joint_world = model.joint_world.numpy()
    q_start, qd_start = model.joint_q_start.numpy(), model.joint_qd_start.numpy()
    joint_labels = list(getattr(model, "joint_label", []) or [])
    body_labels = list(getattr(model, "body_label", []) or [])
    shape_labels = list(getattr(model, "shape_label", []) or [])
    worlds = max(1, int(model.world_count))
    if model.particle_count:
        raise FreeFlyerRefusal(f"the model has {model.particle_count} particles, which the free-flyer solver does "
                               f"not simulate; {REFUSAL_FIX}")
    bases, rotors = [], []
    if worlds == 1:  # a one-world model may leave its joints global (world -1)
        joint_world = np.zeros_like(joint_world)
    for w in range(worlds):
        mine = np.flatnonzero(joint_world == w)
        free = [j for j in mine if joint_type[j] == FREE]
        if len(free) != 1 or parent[free[0]] != -1:
            raise FreeFlyerRefusal(
                f"world {w} has {len(free)} free bodies: the free-flyer solver flies one free base per world "
                f"(vehicle-to-vehicle contact and several vehicles in one world need MuJoCo); {REFUSAL_FIX}")
        base = int(child[free[0]])
        spun = []
        for j in mine:
            if j == free[0]:
                continue
            what = _name(joint_labels, j, "joint")
            if joint_type[j] != REVOLUTE or parent[j] != base:
                kind = newton.JointType(int(joint_type[j])).name.lower()
                raise FreeFlyerRefusal(
                    f"joint {what} ({kind}, parent body {parent[j]}) is not a rotor on the base: articulated "
                    f"payloads and other joints are not supported by the free-flyer solver; {REFUSAL_FIX}")
            spun.append(int(j))
        bases.append((base, int(q_start[free[0]]), int(qd_start[free[0]])))
        rotors.append(spun)
    counts = {len(r) for r in rotors}
    if len(counts) != 1:
        raise FreeFlyerRefusal(f"the worlds hold vehicles with different rotor counts {sorted(counts)}; {REFUSAL_FIX}")
    if worlds > 1 and joint_world.min() < 0:
        raise FreeFlyerRefusal(f"the model has joints outside every world; {REFUSAL_FIX}")

    # Rotors: symmetric about their spin axis with the centre of mass on it, so the locked inertia and the
    # centre of mass do not depend on the rotor angle.
    inertia, com = model.body_inertia.numpy(), model.body_com.numpy()
    axis, x_p, x_c = model.joint_axis.numpy(), model.joint_X_p.numpy(), model.joint_X_c.numpy()
    for j in rotors[0]:
        b = int(child[j])
        # The axis in the rotor body's own frame: the child frame's rotation applied to the joint axis.
        a = _rotate(x_c[j][3:], axis[qd_start[j]].astype(np.float64))
        a /= np.linalg.norm(a)
        inertia_b = inertia[b].astype(np.float64)
        scale = max(float(np.abs(inertia_b).max()), 1e-30)
        along = float(a @ inertia_b @ a)
        symmetric = np.abs(inertia_b @ a - along * a).max() <= 1e-5 * scale
        offset = com[b].astype(np.float64) - x_c[j][:3]
        on_axis = np.linalg.norm(offset - (offset @ a) * a) <= 1e-6
        if not (symmetric and on_axis):
            raise FreeFlyerRefusal(
                f"joint {_name(joint_labels, j, 'joint')} turns body {_name(body_labels, b, 'body')} whose centre of "
                f"mass is off the joint's axis or whose inertia is not symmetric about it: not a rotor but an "
                f"articulated payload, which the free-flyer solver does not fly; {REFUSAL_FIX}")

    # Shapes: colliding boxes and spheres on the base (gear points), one static plane (the ground).
    shape_type, shape_body = model.shape_type.numpy(), model.shape_body.numpy()
    shape_flags, shape_world = model.shape_flags.numpy(), model.shape_world.numpy()
    scale, xform, mu = model.shape_scale.numpy(), model.shape_transform.numpy(), model.shape_material_mu.numpy()
    base_bodies = {b for b, _, _ in bases}
    planes: dict[int, tuple[np.ndarray, float, float]] = {}
    gear: dict[int, list[tuple[np.ndarray, float, int]]] = {w: [] for w in range(worlds)}
    world_of_base = {b: w for w, (b, _, _) in enumerate(bases)}
    for s in np.flatnonzero((shape_flags & COLLIDES) != 0):
        what = _name(shape_labels, s, "shape")
        kind = newton.GeoType(int(shape_type[s])).name.lower()
        body = int(shape_body[s])
        if body < 0:
            if shape_type[s] != PLANE:
                raise FreeFlyerRefusal(
                    f"static shape {what} ({kind}) is an obstacle; the free-flyer solver collides with the ground "
                    f"plane only; {REFUSAL_FIX}")
            worlds_of = range(worlds) if shape_world[s] < 0 else [int(shape_world[s])]
            normal = _rotate(xform[s][3:].astype(np.float64), np.array([0.0, 0.0, 1.0]))
            for w in worlds_of:
                if w in planes:
                    raise FreeFlyerRefusal(f"world {w} has more than one ground plane ({what}); {REFUSAL_FIX}")
                planes[w] = (normal, float(normal @ xform[s][:3]), float(mu[s]))
            continue
        if body not in base_bodies:
            raise FreeFlyerRefusal(
                f"shape {what} ({kind}) collides on body {_name(body_labels, body, 'body')}, not the base: the "
                f"free-flyer solver collides the base's boxes and spheres only; {REFUSAL_FIX}")
        pose_p, pose_q = xform[s][:3].astype(np.float64), xform[s][3:].astype(np.float64)
        if shape_type[s] == BOX:
            for corner in _box_corners(scale[s].astype(np.float64)):
                gear[world_of_base[body]].append((pose_p + _rotate(pose_q, corner), 0.0, s))
        elif shape_type[s] == SPHERE:
            gear[world_of_base[body]].append((pose_p, float(scale[s][0]), s))
        else:
            raise FreeFlyerRefusal(
                f"shape {what} ({kind}) on the base: the free-flyer solver collides boxes and spheres only; make "
                f"the landing gear boxes or spheres, or {REFUSAL_FIX}")
    points = {len(g) for g in gear.values()}
    if len(points) != 1:
        raise FreeFlyerRefusal(f"the worlds' vehicles have different gear point counts {sorted(points)}; {REFUSAL_FIX}")
    n_points = points.pop()
    if n_points > MAX_GEAR_POINTS:
        raise FreeFlyerRefusal(f"the base has {n_points} gear points (box corners and spheres), more than "
                               f"{MAX_GEAR_POINTS}; use fewer colliding shapes or {REFUSAL_FIX}")
    gear_point = np.zeros((worlds, max(n_points, 1), 3), dtype=np.float32)
    gear_radius = np.zeros((worlds, max(n_points, 1)), dtype=np.float32)
    gear_mu = np.zeros((worlds, max(n_points, 1)), dtype=np.float32)
    rest = np.ones(worlds, dtype=np.int32)
    plane = np.zeros((worlds, 4), dtype=np.float32)
    for w in range(worlds):
        normal, offset, ground_mu = planes.get(w, (np.zeros(3), 0.0, 0.0))
        plane[w, :3], plane[w, 3] = normal, offset
        for k, (p, r, s) in enumerate(gear[w]):
            gear_point[w, k], gear_radius[w, k] = p, r
            gear_mu[w, k] = max(float(mu[s]), ground_mu)
        if gear[w]:
            # The points the vehicle rests on, upright: the lowest along the base's -z.
            low = np.array([p[2] - r for p, r, _ in gear[w]])
            rest[w] = int(np.count_nonzero(low <= low.min() + REST_TOLERANCE))
    return FreeFlyerLayout(
        base_body=np.array([b for b, _, _ in bases], dtype=np.int32),
        base_coord=np.array([c for _, c, _ in bases], dtype=np.int32),
        base_dof=np.array([d for _, _, d in bases], dtype=np.int32),
        rotor_joint=np.array(rotors, dtype=np.int32).reshape(worlds, -1),
        rotor_body=np.array([[child[j] for j in r] for r in rotors], dtype=np.int32).reshape(worlds, -1),
        rotor_coord=np.array([[q_start[j] for j in r] for r in rotors], dtype=np.int32).reshape(worlds, -1),
        rotor_dof=np.array([[qd_start[j] for j in r] for r in rotors], dtype=np.int32).reshape(worlds, -1),
        gear_point=gear_point, gear_radius=gear_radius, gear_mu=gear_mu, rest_points=rest, plane=plane,
        reach=(np.linalg.norm(gear_point, axis=2) + gear_radius).max(axis=1).astype(np.float32),
    )


class SolverFreeFlyer(SolverBase):
    """Newton's solver interface for a free base with rotors: one kernel launch a step over every world.

    ``step(state_in, state_out, control, contacts, dt, observables=...)`` reads ``state_in``'s joint
    coordinates and speeds, ``state_in.body_f`` and ``control.joint_f``, and writes ``state_out``'s
    ``joint_q``, ``joint_qd``, ``body_q`` and ``body_qd`` (in place when they are the same state), and
    ``body_qdd`` when asked. ``contacts`` is ignored: the solver finds its own ground contacts.
    """

    SUPPORTED_OBSERVABLES: ClassVar[frozenset[str]] = frozenset({SolverBase.ObservableKind.BODY_QDD})

    def __init__(self, model: newton.Model, contact_frequency: float = CONTACT_FREQUENCY,
                 contact_damping_ratio: float = CONTACT_DAMPING_RATIO):
        super().__init__(model)
        layout = freeflyer_layout(model)
        self.layout = layout
        device = model.device
        self.worlds = len(layout.base_body)
        self.contact_frequency = float(contact_frequency)
        self.contact_damping_ratio = float(contact_damping_ratio)

        def put(values, dtype):
            return wp.array(values, dtype=dtype, device=device)

        self._tables = [
            put(layout.base_body, wp.int32), put(layout.base_coord, wp.int32), put(layout.base_dof, wp.int32),
            put(layout.rotor_joint, wp.int32), put(layout.rotor_body, wp.int32), put(layout.rotor_coord, wp.int32),
            put(layout.rotor_dof, wp.int32), put(layout.gear_point, wp.vec3), put(layout.gear_radius, wp.float32),
            put(layout.gear_mu, wp.float32), put(layout.rest_points, wp.int32), put(layout.plane, wp.vec4),
            put(layout.reach, wp.float32),
        ]
        rotors = layout.rotor_joint.shape[1]
        per_rotor = (self.worlds, max(rotors, 1))
        #: Each world's mass properties (:func:`freeflyer_inertia`), formed now and when the masses change.
        self._mass = {
            "mass": wp.zeros(self.worlds, dtype=wp.float32, device=device),
            "centre": wp.zeros(self.worlds, dtype=wp.vec3, device=device),
            "inertia": wp.zeros(self.worlds, dtype=wp.mat33, device=device),
            "inverse": wp.zeros(self.worlds, dtype=wp.mat33, device=device),
            "axis": wp.zeros(per_rotor, dtype=wp.vec3, device=device),
            "axial": wp.zeros(per_rotor, dtype=wp.float32, device=device),
            "arm": wp.zeros(per_rotor, dtype=wp.vec3, device=device),
            "child_inverse": wp.zeros(per_rotor, dtype=wp.transform, device=device),
        }
        self._update_mass_properties()
        #: What a step hands the next beside Newton's state: each world's angular momentum [kg·m²/s, world],
        #: the rate and rotor speeds it wrote, and the rotors' absolute spins. Rebuilding the momentum from
        #: the float32 rates every step rounds it by a fraction of an ulp the same way each time (1e-4 of it
        #: in 10 s); carried, a torque-free momentum keeps its bits. Used only while the state holds the bits
        #: the last step wrote (``carried_valid`` and an exact match), so a reset or held world rebuilds it.
        self._carried = {
            "valid": wp.zeros(self.worlds, dtype=wp.int32, device=device),
            "momentum": wp.zeros(self.worlds, dtype=wp.vec3, device=device),
            "rate": wp.zeros(self.worlds, dtype=wp.vec3, device=device),
            "spin": wp.zeros(per_rotor, dtype=wp.float32, device=device),
            "speed": wp.zeros(per_rotor, dtype=wp.float32, device=device),
        }
        #: Where body_qdd goes when no observable asks for it (never read).
        self._no_qdd = wp.zeros(1, dtype=wp.spatial_vector, device=device)
        #: Each rotor's axial torque in the step (scratch: formed and read within one launch).
        self._rotor_torque = wp.zeros(per_rotor, dtype=wp.float32, device=device)
        #: The hold's arguments for a plain step (``freeflyer_step`` never reads or writes them).
        self._no_hold = (wp.zeros(1, dtype=wp.int32, device=device), wp.zeros(1, dtype=wp.int64, device=device),
                         wp.zeros(1, dtype=wp.int32, device=device), wp.zeros(1, dtype=wp.int64, device=device), 0)

    def _update_mass_properties(self) -> None:
        model, tables = self.model, self._tables
        wp.launch(freeflyer_inertia, self.worlds,
                  inputs=[tables[0], tables[3], tables[4], tables[6], model.body_mass, model.body_inertia,
                          model.body_com, model.joint_X_p, model.joint_X_c, model.joint_axis],
                  outputs=list(self._mass.values()), device=model.device)

    def step(self, state_in, state_out, control, contacts, dt: float, *, observables=None) -> None:
        self._launch(state_in, state_out, control, dt, observables, None)

    def step_holding(self, state, control, dt: float, observables, running, tick, done, failed_tick,
                     failed_flag: int) -> None:
        """One step in place that also holds the finished worlds, in the same launch.

        A world whose ``running`` is 0 keeps its state; a flying world whose new state is not finite keeps its
        last finite one and gets ``done = failed_flag`` and ``failed_tick = tick``. This is what the engine's
        separate hold after a step (``nexus.plant.physics.hold_finished_worlds``) does, bit for bit, without its
        launch, its copies of the state and the held arrays it keeps.
        """
        self._launch(state, state, control, dt, observables, (running, tick, done, failed_tick, int(failed_flag)))

    def _launch(self, state_in, state_out, control, dt: float, observables, hold) -> None:
        model = self.model
        control = control if control is not None else model.control()
        qdd = None
        if observables is not None and observables.is_requested(SolverBase.ObservableKind.BODY_QDD):
            qdd = observables.body_qdd
        if hold is None:
            running, tick, done, failed_tick, flag = self._no_hold
        else:
            running, tick, done, failed_tick, flag = hold
        wp.launch(
            freeflyer_step if hold is None else freeflyer_step_holding, self.worlds,
            inputs=[*self._tables, *self._mass.values(), model.body_com, model.joint_X_p, model.joint_axis,
                    model.gravity, self.contact_frequency, self.contact_damping_ratio, float(dt), state_in.body_f,
                    control.joint_f, state_in.joint_q, state_in.joint_qd, 1 if qdd is not None else 0,
                    running, tick, flag, *self._carried.values(), self._rotor_torque],
            outputs=[state_out.joint_q, state_out.joint_qd, state_out.body_q, state_out.body_qd,
                     qdd if qdd is not None else self._no_qdd, done, failed_tick],
            device=model.device,
        )

    def carried(self) -> dict[str, wp.array]:
        """The arrays a step hands the next besides Newton's state (a snapshot of the loop restores them too)."""
        return dict(self._carried)

    def reset(self, state, world_mask=None, flags=None) -> None:
        """Forget the carried momentum: the next step rebuilds it from the state."""
        super().reset(state, world_mask, flags)
        self._carried["valid"].zero_()

    def notify_model_changed(self, flags) -> None:
        """New masses or inertias: the mass properties are formed again and the momentum rebuilt from the state."""
        self._update_mass_properties()
        self._carried["valid"].zero_()


__all__ = ["CONTACT_DAMPING_RATIO", "CONTACT_FREQUENCY", "FreeFlyerLayout", "FreeFlyerRefusal", "SolverFreeFlyer",
           "freeflyer_layout"]
