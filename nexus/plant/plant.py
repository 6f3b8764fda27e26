"""The Newton side of a vehicle: model, solver, the one state, control and rotors.

One ``State`` is stepped in place (``solver.step(state, state, ...)``, which
MuJoCo Warp supports bit-identically to swapping two states), so a graph
captured for one tick replays correctly tick after tick.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import newton
import numpy as np
import warp as wp

from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec
from nexus.plant.solvers import DEFAULT_SOLVER, check_solver, make_solver, needs_contacts

#: The World Magnetic Model epoch a run uses unless told otherwise [decimal year].
#: Fixed, not today's date, so a recorded flight replays bit for bit on any day.
DEFAULT_DECIMAL_YEAR = 2026.0


@dataclass(frozen=True)
class Rotor:
    """One rotor joint and the body it spins, with the propeller and ESC that drive it."""

    index: int
    joint_path: str
    body_path: str
    #: Newton joint, DOF, coordinate and body indices.
    joint: int
    dof: int
    coord: int
    body: int
    #: +1 counter-clockwise seen from above (positive about body z), -1 clockwise.
    spin: int
    thrust_coefficient: float  # kT [N/(rad/s)²]
    torque_coefficient: float  # kQ [N·m/(rad/s)²]
    inertia: float  # rotor about its axis [kg·m²]
    esc: dict = field(default_factory=dict, compare=False)


@dataclass
class GeodeticOrigin:
    """Where the world origin sits on WGS-84: latitude, longitude [deg], altitude MSL [m]."""

    latitude: float
    longitude: float
    altitude: float


#: The scene's geodetic origin: a schema and its checks, but no component (the loader reads it into
#: ``Plant.origin``, which the GPS, magnetometer and barometer use).
GEODETIC_ORIGIN_SPEC = Spec(
    name="GeodeticOrigin",
    schema="NexusGeodeticOriginAPI",
    noun="geodetic origin",
    doc="The geodetic point (WGS-84) that the scene's world origin sits on; the world's +x points east, +y north "
        "and +z up (ENU).",
    params=(
        Param("latitude", "nexus:latitude", "double", 0.0, "deg", "Geodetic latitude, north positive",
              low=-90.0, high=90.0),
        Param("longitude", "nexus:longitude", "double", 0.0, "deg", "Geodetic longitude, east positive",
              low=-180.0, high=180.0),
        Param("altitude", "nexus:altitude", "double", 0.0, "m", "Altitude above mean sea level"),
    ),
)


#: The most contact points MuJoCo Warp writes between a shape of this type and a plane (its plane-box
#: collision tests all 8 corners; a sphere touches at one point). Other types: no bound is known here.
PLANE_CONTACTS = {int(newton.GeoType.BOX): 8, int(newton.GeoType.SPHERE): 1}


def contacts_per_world(model: newton.Model, bodies_per_world: int) -> int | None:
    """A hard bound on one world's contact points, or None when this model's shapes give none.

    It holds when every static colliding shape is a plane (the ground), and the colliding shapes
    of the vehicle sit on one body and have a known plane bound (:data:`PLANE_CONTACTS`). MuJoCo
    Warp sizes its contact buffers and launches its contact kernels by this capacity; the default
    (48 a world here) makes a 16-world step cost 20 to 40 % more with no contact more
    (docs/worlds.md). The capacity changes no result while no step needs more.
    """
    collides = (model.shape_flags.numpy() & int(newton.ShapeFlags.COLLIDE_SHAPES)) != 0
    types, bodies = model.shape_type.numpy(), model.shape_body.numpy()
    static = collides & (bodies < 0)
    if not static.any() or (types[static] != int(newton.GeoType.PLANE)).any():
        return None
    own = collides & (bodies >= 0) & (bodies < bodies_per_world)
    if not own.any() or len(set(bodies[own])) != 1 or any(int(t) not in PLANE_CONTACTS for t in types[own]):
        return None
    return int(sum(PLANE_CONTACTS[int(t)] for t in types[own])) * int(static.sum() // max(1, model.world_count) or 1)


class Plant:
    """What the plant's components share: the model and the arrays the solver steps."""

    def __init__(
        self,
        model: newton.Model,
        *,
        vehicle_path: Path,
        scene_path: Path,
        body_index: dict[str, int],
        joint_index: dict[str, int],
        rotors: list[Rotor],
        base_path: str,
        origin: GeodeticOrigin,
        gravity: float,
        worlds: int = 1,
        per_world: tuple[int, int, int, int] | None = None,
        solver: str = DEFAULT_SOLVER,
        vehicles: int = 1,
        shared_worlds: bool = False,
    ):
        self.model = model
        #: Copies of the vehicle (see :func:`nexus.plant.loading.load_plant`): one Newton world each, or with
        #: several vehicles in a world, its slots (vehicle ``s % vehicles`` of world ``s // vehicles``).
        self.worlds = int(worlds)
        #: Vehicles in each world; slot ``s``'s indices are world ``s``'s of a run of one vehicle a world.
        self.vehicles = int(vehicles)
        #: Whether the vehicles of a world share one Newton world (they collide) or each has its own.
        self.shared_worlds = bool(shared_worlds)
        bodies, joints, dofs, coords = per_world or (model.body_count, model.joint_count, model.joint_dof_count,
                                                     model.joint_coord_count)
        #: What one world adds to each of Newton's index spaces: world ``w``'s body ``b`` is
        #: ``b + w * bodies_per_world``, and likewise for joints, DOFs and coordinates.
        self.bodies_per_world, self.joints_per_world = int(bodies), int(joints)
        self.dofs_per_world, self.coords_per_world = int(dofs), int(coords)
        self.device = str(model.device)
        self.vehicle_path = vehicle_path
        self.scene_path = scene_path
        self.body_index = body_index
        self.joint_index = joint_index
        self.rotors = rotors
        self.base_path = base_path
        self.origin = origin
        #: Magnitude of gravity [m/s²].
        self.gravity = gravity
        #: Prim path -> the checked spec values of the prims loading read to build the model (ESCs,
        #: propellers), so their components are built from the same values without a second read.
        self.prim_values: dict[str, dict] = {}
        self.state = model.state()
        #: The state the step writes: ``state`` itself in a flight (stepped in place); another tick's
        #: copy on a taped run (:class:`nexus.plant.physics.TapedPlant`).
        self.state_out = self.state
        self.control = model.control()
        self.actuators = list(model.actuators)
        #: The ESC's lagged speed command of each rotor [rad/s], rotor order within each world,
        #: world after world (world ``w``'s rotor ``r`` is element ``w * len(rotors) + r``).
        self.esc_speed = wp.zeros(self.worlds * len(rotors), dtype=wp.float32, device=self.device)
        #: The lagged speeds the ESCs write: ``esc_speed`` itself in a flight, the next tick's copy on a taped run.
        self.esc_speed_out = self.esc_speed
        #: Whether this tick's ESC launch has run the rotors' servo, so the step stage leaves Newton's actuator out:
        #: set as the ESCs' fused launch is issued (:func:`nexus.plant.esc.esc_servo_all`), cleared by the clear and
        #: step stages, so a step without the ESCs before it (start-up's settling) runs the servo itself.
        self.servo_ran = False
        #: Where each world's base settled before the first tick [m, world ENU]: its NED origin.
        #: A device array, so captured graphs read the value that start-up writes.
        self.ned_origin = wp.zeros(self.worlds, dtype=wp.vec3, device=self.device)
        #: Where each slot's vehicle starts from vehicle 0 of its world [m, ENU] (zero without a fleet), and the
        #: world point each slot's geodetic origin stands on [m, world ENU]: its NED origin less that place. The
        #: GPS and PX4's ground truth measure latitude and longitude from it, so each vehicle of a fleet has its
        #: own place on the Earth (a ground station's map shows them apart) while its NED origin is its own start.
        self.home_offset = np.zeros((self.worlds, 3), dtype=np.float32)
        self.geodetic_anchor = wp.zeros(self.worlds, dtype=wp.vec3, device=self.device)
        #: The date the magnetic field model is evaluated for [decimal year].
        self.decimal_year = DEFAULT_DECIMAL_YEAR
        #: Contact points one world can have (None: MuJoCo Warp's own estimate), see :func:`contacts_per_world`.
        # Vehicles sharing a world touch each other too: no bound is known for those contacts.
        self.contact_capacity = None if shared_worlds else contacts_per_world(model, self.bodies_per_world)
        #: ``--solver``: ``mujoco`` or ``featherstone`` (:mod:`nexus.plant.solvers`).
        self.solver_name = check_solver(solver)
        self.solver = make_solver(solver, model, vehicle_path, self.contact_capacity)
        #: Newton's collision pipeline and its contacts, for a solver that does not find its own (None for MuJoCo).
        self.collision = None
        self.contacts = None
        if needs_contacts(self.solver):
            self.collision = newton.CollisionPipeline(model)
            self.contacts = self.collision.contacts()
        base_joint = int(np.flatnonzero(model.joint_child.numpy() == self.base)[0])
        self._base_coord = int(model.joint_q_start.numpy()[base_joint])
        self._base_dof = int(model.joint_qd_start.numpy()[base_joint])

    @property
    def base_coord(self) -> int:
        """World 0's index of the base's free joint's first coordinate (position x) in ``joint_q``."""
        return self._base_coord

    @property
    def base_dof(self) -> int:
        """World 0's index of the base's free joint's first DOF (velocity x) in ``joint_qd``."""
        return self._base_dof

    @property
    def base(self) -> int:
        return self.body_index[self.base_path]

    def set_ned_origin(self, origins) -> None:
        """Each slot's NED origin [m, world ENU] (where its base starts), and with it its geodetic anchor."""
        origins = np.asarray(origins, dtype=np.float32)
        self.ned_origin.assign(origins)
        self.geodetic_anchor.assign(origins - self.home_offset)

    def base_bodies(self) -> np.ndarray:
        """Every world's base body index, shape (worlds,)."""
        return self.base + self.bodies_per_world * np.arange(self.worlds)

    def base_positions(self) -> np.ndarray:
        """Every world's base body origin [m, world ENU], shape (worlds, 3), read from the host."""
        return self.state.body_q.numpy()[self.base_bodies()][:, :3].astype(np.float64)

    @property
    def mass(self) -> float:
        """Total mass of world 0's bodies [kg]."""
        return float(self.model.body_mass.numpy()[: self.bodies_per_world].sum())

    def body_label(self, path: str) -> str:
        return path.rstrip("/").split("/")[-1]

    def body_index_of(self, label: str) -> int:
        """World 0's index of the body labelled ``label`` (``base``, ``rotor_1``)."""
        for path, index in self.body_index.items():
            if self.body_label(path) == label:
                return int(index)
        raise KeyError(f"no rigid body labelled '{label}' in {self.vehicle_path}")

    def reset(self, base_position=None, base_velocity=None, rotor_speed: float | None = None) -> None:
        """Put the vehicle at rest (or at ``base_position`` [m, world]), rotors at ``rotor_speed`` [rad/s].

        ``base_position`` and ``base_velocity`` are one vector for every world or one row per world.
        Only for set-up, before the first tick: it writes the state from the host. It
        also clears the solver's warm start, so a reset plant repeats a run bit for bit.
        """
        self.solver.reset(self.state)
        q = self.model.joint_q.numpy().copy()
        qd = np.zeros(self.model.joint_dof_count, dtype=np.float32)
        positions = None if base_position is None else np.broadcast_to(np.asarray(base_position), (self.worlds, 3))
        velocities = None if base_velocity is None else np.broadcast_to(np.asarray(base_velocity), (self.worlds, 3))
        for w in range(self.worlds):
            coord, dof = self._base_coord + w * self.coords_per_world, self._base_dof + w * self.dofs_per_world
            if positions is not None:
                q[coord : coord + 3] = positions[w]
            if velocities is not None:
                qd[dof : dof + 3] = velocities[w]
        speeds = np.zeros(self.worlds * len(self.rotors), dtype=np.float32)
        if rotor_speed is not None:
            for w in range(self.worlds):
                for rotor in self.rotors:
                    qd[rotor.dof + w * self.dofs_per_world] = rotor.spin * rotor_speed
            speeds[:] = rotor_speed
        self.state.joint_q.assign(q)
        self.state.joint_qd.assign(qd)
        newton.eval_fk(self.model, self.state.joint_q, self.state.joint_qd, self.state)
        self.state.body_f.zero_()
        self.control.joint_f.zero_()
        self.control.joint_target_qd.zero_()
        self.control.joint_act.zero_()
        self.esc_speed.assign(speeds)
