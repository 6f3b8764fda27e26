"""``--controller vtol``: a standard VTOL's stack as a registered controller (a VTOL's default).

A vehicle file with a wing and lift rotors (ESCs) is a ``vtol``: it flies this unless the run names another
controller that flies VTOLs (``hold``). Its
mission (:mod:`.mission`) is the scene's or the file's ``NexusVtolMissionAPI`` prim, else the default.
"""

from __future__ import annotations

from nexus.control.fixed_wing.controller import plane_controller
from nexus.control.pid import PidController
from nexus.control.registry import ControllerOptions, register
from nexus.control.vtol.controller import VtolController
from nexus.core.errors import BuildError
from nexus.schemas.reader import read_prim


def _build(prim, path: str, ctx, options: ControllerOptions) -> VtolController:
    """The rotors' PID from the vehicle's ``NexusPidControllerAPI`` prim, the wing's stack trimmed at the file's
    trim airspeed (its ``NexusFixedWingGainsAPI``, else the Aerosonde's 25 m/s)."""
    if prim is None or "NexusPidControllerAPI" not in prim.GetAppliedSchemas():
        raise BuildError(f"{ctx.path}: --controller vtol needs a prim with NexusPidControllerAPI (the lift rotors' "
                         "gains)")
    rotors = PidController.from_prim(prim, read_prim(prim, PidController.spec, ctx.path), ctx)
    wing = plane_controller(f"{path}/wing", ctx.stage, ctx.path, ctx.plant.mass, ctx.plant.gravity,
                            origin_altitude=float(ctx.plant.origin.altitude))
    return VtolController(path, rotors, wing, connections=rotors.connections)


# 240 s: the default mission (take-off to 20 m, transition, three 400 m legs at 25 m/s, back transition, return and a
# landing at 0.7 m/s from 40 m) ends itself on the ground well before.
register("vtol", _build, help="a standard VTOL's stack: the PID on its lift rotors for take-off, hover and landing, "
         "the fixed-wing stack on its pusher and surfaces in cruise, blended through the transitions",
         duration_s=240.0, vehicles=("vtol",))
