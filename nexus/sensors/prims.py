"""Reading the settings every sensor prim shares: its body, mount, rate and noise switch."""

from __future__ import annotations

import math

from nexus.core.errors import BuildError
from nexus.plant.loading import attr
from nexus.sensors.schedule import check_rate


def where(prim, ctx) -> str:
    """``<file>: sensor prim <path>``: how build errors point at a sensor."""
    return f"{ctx.path}: sensor prim {prim.GetPath()}"


def mounted_body(prim, ctx) -> str:
    """The label of the rigid body a sensor prim sits under (its nearest rigid-body ancestor)."""
    parent = prim.GetParent()
    while parent and parent.GetPath().pathString != "/":
        path = parent.GetPath().pathString
        if path in ctx.plant.body_index:
            return ctx.plant.body_label(path)
        parent = parent.GetParent()
    raise BuildError(
        f"{where(prim, ctx)} is not under a rigid body; place the sensor prim below the body it is mounted on "
        "(a prim with PhysicsRigidBodyAPI)"
    )


def common_settings(prim, ctx) -> dict:
    """Keyword arguments every :class:`~nexus.sensors.sensor.Sensor` takes, read from its prim."""
    mount = tuple(float(x) for x in attr(prim, "nexus:mountOffset"))
    if not all(math.isfinite(x) for x in mount):
        shown = ", ".join(f"{x:.7g}" for x in mount)
        raise BuildError(f"{where(prim, ctx)}: nexus:mountOffset is ({shown}); author a finite offset [m, body frame]")
    return {
        "body": mounted_body(prim, ctx),
        "mount": mount,
        "rate": check_rate(float(attr(prim, "nexus:rate")), where(prim, ctx)),
        "noise": bool(attr(prim, "nexus:noise")),
    }


def non_negative(prim, ctx, name: str) -> float:
    """A noise parameter that must not be negative."""
    value = float(attr(prim, name))
    if not 0.0 <= value < math.inf:
        raise BuildError(f"{where(prim, ctx)}: {name} is {value}; a noise parameter must be 0 or positive and finite")
    return value
