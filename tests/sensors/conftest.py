"""Shared set-up for the sensor tests: assembled vehicles, a placement helper, ring builders.

Assembling a vehicle loads USD and builds a MuJoCo model, so each scene's
vehicle is assembled once per session and every test builds its own ``Loop``
over it (building re-prepares every component, and ``place`` resets the plant
and its solver, so tests do not leak state into each other).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import newton
import warp as wp
from nexus.runtime.assembly import Vehicle, assemble
from nexus.core import Component, Loop, Stage, Write
from nexus.plant.body_state import BodyState
from nexus.sensors import Sensor
from tests.conftest import TWO_IMUS  # noqa: F401  (the two-IMU vehicle, shared with other packages' tests)

DATA = Path(__file__).resolve().parents[1] / "data"
VOID_SCENE = DATA / "void.usda"
#: The Astro Max without its drag: a body in free fall here feels gravity alone.
STILL_VEHICLE = DATA / "astro_max_still.usda"
STEADY_VEHICLE = DATA / "astro_max_steady_sensors.usda"
#: Standard gravity of the test scenes [m/s²].
G = 9.80665
#: The scenes' geodetic origin: latitude, longitude [deg], altitude MSL [m].
ORIGIN = (47.397742, 8.545594, 488.0)
#: The base body's centre of mass in its own frame, FLU [m] (vehicles/astro_max_base.usda).
BASE_COM = np.array([0.0, 0.0, -0.011])


@pytest.fixture(scope="session")
def ground_vehicle() -> Vehicle:
    """The Astro Max on the empty scene (flat ground), its biases still (tests/data/astro_max_steady_sensors.usda)
    and its estimator the truth (the sensors are under test; the shipped EKF would read them too)."""
    return assemble(STEADY_VEHICLE, "empty", controller="hold", estimator="truth")


@pytest.fixture(scope="session")
def void_vehicle() -> Vehicle:
    """The Astro Max (without its drag) in a scene with gravity and no ground: it falls freely."""
    return assemble(STILL_VEHICLE, VOID_SCENE, controller="hold", estimator="truth")


@wp.kernel
def publish_body(state: BodyState, out: wp.array(dtype=BodyState)):
    out[0] = state


class KnownBody(Component):
    """Publishes ``body/base`` with a motion the test states by hand, in place of the plant.

    The sensors then see exactly the pose, velocities, accelerations and centre of
    mass written here, whatever a solver would make of them.
    """

    def __init__(self, *, position=(0.0, 0.0, 50.0), yaw: float = 0.0, velocity=(0.0, 0.0, 0.0),
                 angular_velocity=(0.0, 0.0, 0.0), accel=(0.0, 0.0, -G), angular_accel=(0.0, 0.0, 0.0),
                 com=tuple(BASE_COM), name: str = "/test/known_body"):
        super().__init__(name)
        state = BodyState()
        state.pose = wp.transform(wp.vec3(*position), wp.quat(0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)))
        state.velocity = wp.vec3(*velocity)
        state.angular_velocity = wp.vec3(*angular_velocity)
        state.accel = wp.vec3(*accel)
        state.angular_accel = wp.vec3(*angular_accel)
        state.com = wp.vec3(*com)
        self.state = state

    def stages(self) -> list[Stage]:
        return [Stage("body", "state", self._run, writes=(Write("body/base", BodyState, (1,)),))]

    def _run(self, io) -> None:
        wp.launch(publish_body, 1, inputs=[self.state], outputs=[io["body/base"]], device=io.device)


def known_ring(sensors, *, seed: int = 0, mode: str = "captured", **motion) -> Loop:
    """A built loop of a :class:`KnownBody` (``motion``: its keyword arguments) and ``sensors``."""
    return Loop([KnownBody(**motion), *sensors], device="cpu", mode=mode, seed=seed).build()


def plant_parts(vehicle: Vehicle) -> list:
    """Every component of the vehicle except its sensors."""
    return [c for c in vehicle.components if not isinstance(c, Sensor)]


def ring(vehicle: Vehicle, sensors=None, *, mode: str = "captured", seed: int = 0, extra=()) -> Loop:
    """A built loop over the vehicle's plant and ``sensors`` (default: the vehicle's own)."""
    chosen = [c for c in vehicle.components if isinstance(c, Sensor)] if sensors is None else list(sensors)
    return Loop([*plant_parts(vehicle), *chosen, *extra], device="cpu", mode=mode, seed=seed).build()


def place(vehicle: Vehicle, position=(0.0, 0.0, 0.3), *, yaw: float = 0.0, velocity=(0.0, 0.0, 0.0),
          angular_velocity=(0.0, 0.0, 0.0)) -> None:
    """Reset the plant with its base at ``position`` [m, ENU], turned ``yaw`` [rad] about up (ENU,
    counter-clockwise seen from above), moving at ``velocity`` [m/s] and ``angular_velocity`` [rad/s]
    (world frame), rotors co-rotating. The NED origin goes back to the world origin.

    ``Plant.reset`` sets only the position and linear velocity, so the rotation and the angular
    velocity are written into the free joint's coordinates here (q: position, quaternion x y z w;
    qd: COM velocity, angular velocity, both world frame).
    """
    plant = vehicle.plant
    plant.reset(base_position=position, base_velocity=velocity)
    q = plant.state.joint_q.numpy()
    qd = plant.state.joint_qd.numpy()
    c, d = plant._base_coord, plant._base_dof
    q[c + 3 : c + 7] = (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))
    qd[d + 3 : d + 6] = angular_velocity
    plant.state.joint_q.assign(q)
    plant.state.joint_qd.assign(qd)
    newton.eval_fk(plant.model, plant.state.joint_q, plant.state.joint_qd, plant.state)
    # Both the NED origin and the GPS's geodetic anchor: a settle before (tests/sensors/test_settle.py) moves them.
    plant.set_ned_origin(np.zeros((plant.worlds, 3)))


def sample(loop: Loop, signal: str, writer: str | None = None):
    """The current sample of ``signal`` (one struct instance, a copy)."""
    return loop.output(signal, writer).list()[0]


def vec(value) -> np.ndarray:
    return np.array([float(x) for x in value], dtype=np.float64)


def base_pose(loop: Loop) -> tuple[np.ndarray, np.ndarray]:
    """The base body's position [m, ENU] and rotation (x, y, z, w) as the plant last published them."""
    pose = sample(loop, "body/base").pose
    return vec(pose.p), vec(pose.q)


def rotate(q, v) -> np.ndarray:
    """Rotate ``v`` by the (x, y, z, w) quaternion ``q``."""
    from nexus.plant.frames import quat_to_matrix_np

    return quat_to_matrix_np(q) @ np.asarray(v, dtype=np.float64)


