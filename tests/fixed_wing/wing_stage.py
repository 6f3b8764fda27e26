"""The wing's force stage evaluated alone on one body: a pose, a velocity, a wind and deflections in, the wrench out.

Shared by the fixed-wing tests: it launches the stage's own kernel (``add_aero_wrench``) on arrays written here,
so a test states the motion by hand and reads what the stage adds to the base's wrench (world ENU, at the
centre of mass). The Aerosonde's values are read from vehicles/aerosonde.usda with the stage's spec.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC, add_aero_wrench, aero_model
from nexus.plant.loading import open_stage
from nexus.plant.assets import resolve_asset
from nexus.schemas.reader import read_prim

AEROSONDE = resolve_asset("vehicle", "aerosonde")


def aerosonde_wing() -> dict:
    """The Aerosonde's wing prim, read against the stage's spec."""
    stage = open_stage(AEROSONDE)
    return read_prim(stage.GetPrimAtPath("/vehicle/body/base/Aero"), FIXED_WING_AERO_SPEC, AEROSONDE)


def pitched(theta: float) -> tuple:
    """(x, y, z, w) of a nose-up pitch ``theta`` [rad]: about FLU +y (left) by -theta."""
    return (0.0, math.sin(-theta / 2.0), 0.0, math.cos(theta / 2.0))


def wing_wrench(wing: dict, *, velocity=(0.0, 0.0, 0.0), angular_velocity=(0.0, 0.0, 0.0), wind=(0.0, 0.0, 0.0),
                rotation=(0.0, 0.0, 0.0, 1.0), surfaces=(0.0, 0.0, 0.0, 0.0), com=(0.0, 0.0, 0.0),
                reference=(0.0, 0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """(force [N], moment [N·m]) the stage adds to a body at the origin turned by ``rotation`` (x, y, z, w),
    moving at ``velocity`` [m/s] and ``angular_velocity`` [rad/s] in ``wind`` [m/s] (all world ENU), with the
    deflections (aileron, elevator, rudder, flap) [rad]; ``com`` is the body's centre of mass and ``reference``
    the derivatives' reference point [m, body FLU from the body's origin] (the velocity is the centre of mass's,
    the moment about it)."""
    one = {"dtype": wp.float32, "device": "cpu"}
    body_q = wp.array([wp.transform(wp.vec3(0.0, 0.0, 100.0), wp.quat(*rotation))], dtype=wp.transform, device="cpu")
    body_qd = wp.array([wp.spatial_vector(*velocity, *angular_velocity)], dtype=wp.spatial_vector,
                       device="cpu")
    body_f = wp.zeros(1, dtype=wp.spatial_vector, device="cpu")
    wp.launch(add_aero_wrench, 1, inputs=[wp.array([wp.vec3(*wind)], dtype=wp.vec3, device="cpu"),
                                          *(wp.array([float(s)], **one) for s in surfaces), body_q, body_qd,
                                          wp.array([wp.vec3(*com)], dtype=wp.vec3, device="cpu"), 0, 1,
                                          aero_model(wing), wp.vec3(*reference)],
              outputs=[body_f], device="cpu")
    f = body_f.numpy()[0].astype(np.float64)
    return f[:3], f[3:]
