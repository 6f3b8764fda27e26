"""Checking every rigid body's mass properties before Newton reads them.

Newton's importer treats a non-positive mass, a zero inertia or a bad
principal-axes quaternion as "unspecified" and quietly replaces it with what
its mass computer derives from collision shapes (or a sphere of water). A
vehicle would then fly a mass nobody wrote. Nexus flies only the mass
properties the file states, so each rigid body must author ``physics:mass``,
``physics:diagonalInertia`` and ``physics:centerOfMass`` with physical values,
and every other UsdPhysics mass attribute it or its shapes author must be
physical too. Problems are raised as one ``BuildError`` naming the file, the
prim and the attribute.
"""

from __future__ import annotations

import math
from pathlib import Path

from nexus.core.errors import BuildError

#: Newton 1.8's ``ModelBuilder.finalize`` "corrects" (inflates) an inertia whose smallest principal
#: moment is below max(relative x largest, absolute) [kg·m²], or whose moments break the triangle
#: inequality by more than max(float32 epsilon x largest, absolute); the same limits here make such a
#: file fail instead (``inertia_relative_tolerance``, ``inertia_absolute_tolerance`` in its builder).
NEWTON_RELATIVE_FLOOR = 1.0e-6
NEWTON_ABSOLUTE_FLOOR = 1.0e-10
FLOAT32_EPSILON = 1.1920929e-07
#: How far a principal-axes quaternion's length may stray from 1 (float32 rounding).
UNIT_SLACK = 1e-3


def _file_of(attribute, path: Path) -> str:
    """The file holding the attribute's strongest opinion (a sublayer, say), else the opened file."""
    for spec in attribute.GetPropertyStack():
        real = spec.layer.realPath
        if real:
            return real
    return str(path)


def _where(prim, name: str, path: Path) -> str:
    attribute = prim.GetAttribute(name)
    return f"{_file_of(attribute, path) if attribute else path}: prim {prim.GetPath()} attribute '{name}'"


def _authored(prim, name: str):
    attribute = prim.GetAttribute(name)
    if not attribute or not attribute.HasAuthoredValue():
        return None
    return attribute.Get()


def _num(value) -> str:
    """A float32 value as written in the file (``-0.2``, not ``-0.20000000298023224``)."""
    return f"{float(value):.7g}"


def _nums(values) -> str:
    return "(" + ", ".join(_num(v) for v in values) + ")"


def _finite(values) -> bool:
    return all(math.isfinite(float(v)) for v in values)


def _check_inertia(prim, path: Path, diagonal, problems: list[str]) -> None:
    where = _where(prim, "physics:diagonalInertia", path)
    moments = [float(v) for v in diagonal]
    if not _finite(moments) or not all(m > 0.0 for m in moments):
        problems.append(
            f"{where} is {_nums(moments)}; each principal moment of inertia must be positive and finite [kg·m²] "
            "(Newton would replace a zero or negative inertia with a guess); author the body's measured or CAD inertia"
        )
        return
    small, middle, large = sorted(moments)
    floor = max(NEWTON_RELATIVE_FLOOR * large, NEWTON_ABSOLUTE_FLOOR)
    if small < floor:
        problems.append(
            f"{where} is {_nums(moments)}: its smallest moment is below {_num(floor)} "
            f"(a millionth of the largest, at least 1e-10), which Newton would inflate; author the body's real inertia"
        )
        return
    if small + middle < large - max(FLOAT32_EPSILON * large, NEWTON_ABSOLUTE_FLOOR):
        problems.append(
            f"{where} is {_nums(moments)}: {_num(large)} exceeds the sum of the other two ({_num(small + middle)}), "
            "which no real body can have (principal moments obey the triangle inequality); "
            "check the values and their order (x, y, z)"
        )


def _check_body(prim, path: Path, problems: list[str]) -> None:
    mass = _authored(prim, "physics:mass")
    if mass is None:
        problems.append(
            f"{path}: rigid body {prim.GetPath()} has no 'physics:mass'; author it with PhysicsMassAPI "
            "(float physics:mass = <kg>): Nexus does not let Newton derive a body's mass from its shapes"
        )
    elif not (math.isfinite(float(mass)) and float(mass) > 0.0):
        problems.append(
            f"{_where(prim, 'physics:mass', path)} is {_num(mass)}; a rigid body's mass must be positive and "
            "finite [kg] (Newton would silently replace it with one computed from the shapes); author the real mass"
        )
    diagonal = _authored(prim, "physics:diagonalInertia")
    if diagonal is None:
        problems.append(
            f"{path}: rigid body {prim.GetPath()} has no 'physics:diagonalInertia'; author its principal moments "
            "(float3 physics:diagonalInertia = (<Ixx>, <Iyy>, <Izz>) [kg·m²]) so Newton does not guess them"
        )
    else:
        _check_inertia(prim, path, diagonal, problems)
    com = _authored(prim, "physics:centerOfMass")
    if com is None:
        problems.append(
            f"{path}: rigid body {prim.GetPath()} has no 'physics:centerOfMass'; author it "
            "(point3f physics:centerOfMass = (x, y, z) [m, body frame]) so Newton does not derive it from the shapes"
        )


def _check_mass_attributes(prim, path: Path, problems: list[str]) -> None:
    """Mass attributes any prim may author (a body, or a collision shape under one): physical when present."""
    mass = _authored(prim, "physics:mass")
    if mass is not None and not prim.HasAPI("PhysicsRigidBodyAPI"):
        if not (math.isfinite(float(mass)) and float(mass) >= 0.0):
            problems.append(f"{_where(prim, 'physics:mass', path)} is {_num(mass)}; a mass must be 0 (unset) or positive [kg]")
    density = _authored(prim, "physics:density")
    if density is not None and not (math.isfinite(float(density)) and float(density) >= 0.0):
        problems.append(
            f"{_where(prim, 'physics:density', path)} is {_num(density)}; a density must be 0 (unset) or positive [kg/m³]"
        )
    diagonal = _authored(prim, "physics:diagonalInertia")
    if diagonal is not None and not prim.HasAPI("PhysicsRigidBodyAPI"):
        if not _finite(diagonal) or any(float(v) < 0.0 for v in diagonal):
            problems.append(
                f"{_where(prim, 'physics:diagonalInertia', path)} is {_nums(diagonal)}; "
                "moments of inertia must be 0 (unset) or positive [kg·m²]"
            )
    com = _authored(prim, "physics:centerOfMass")
    if com is not None and not _finite(com):
        problems.append(
            f"{_where(prim, 'physics:centerOfMass', path)} is {_nums(com)}; "
            "author a finite position [m, body frame]"
        )
    axes = _authored(prim, "physics:principalAxes")
    if axes is not None:
        parts = [float(axes.GetReal()), *(float(v) for v in axes.GetImaginary())]
        if not _finite(parts) or abs(math.sqrt(sum(p * p for p in parts)) - 1.0) > UNIT_SLACK:
            problems.append(
                f"{_where(prim, 'physics:principalAxes', path)} is {_nums(parts)}; it must be a unit quaternion "
                "(w, x, y, z), e.g. (1, 0, 0, 0) when the body axes are the principal axes"
            )


def check_mass_properties(stage, path: Path) -> None:
    """Raise ``BuildError`` listing every rigid body (or shape) in ``stage`` whose mass properties are not physical."""
    problems: list[str] = []
    for prim in stage.Traverse():
        if prim.HasAPI("PhysicsRigidBodyAPI"):
            _check_body(prim, path, problems)
        _check_mass_attributes(prim, path, problems)
    if problems:
        if len(problems) == 1:
            raise BuildError(problems[0])
        raise BuildError(f"{path} has {len(problems)} problems with mass properties:\n" + "\n".join(f"  - {p}" for p in problems))
