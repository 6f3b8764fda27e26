"""``--controller fixed_wing``: the plane's flight stack as a registered controller (a plane's default).

One of the registry's built-in modules; a vehicle with a wing flies it unless the run names another
controller that flies planes. The run places the plane by its air start (``NexusAirStartAPI``) and a plane
mission writes its task (docs/fixed_wing.md, "nexus run --vehicle aerosonde").
"""

from __future__ import annotations

from dataclasses import dataclass

from nexus.control.fixed_wing.controller import FixedWingController, loiter_task, plane_controller
from nexus.control.registry import ControllerOptions, option, register


@dataclass(frozen=True)
class FixedWingOptions(ControllerOptions):
    """``--controller fixed_wing``'s options: the loiter it flies."""

    airspeed: float = option(0.0, "Airspeed to trim at and hold [m/s]; 0: the vehicle's trim airspeed "
                             "(its NexusFixedWingGainsAPI's nexus:trimAirspeed, 25 m/s without one)")
    height: float = option(100.0, "Height to hold above the NED origin [m]")
    loiter_radius: float = option(150.0, "Radius of the loiter circle about the NED origin [m]")


def _build(prim, path: str, ctx, options: FixedWingOptions) -> FixedWingController:
    """Trims the vehicle file's plane at the options' airspeed (or its own trim airspeed) with its own gains;
    loiters about the NED origin until a plane mission sets its task."""
    controller = plane_controller(path, ctx.stage, ctx.path, ctx.plant.mass, ctx.plant.gravity, options.airspeed,
                                  origin_altitude=float(ctx.plant.origin.altitude))
    controller.set_task(loiter_task(controller.trim.airspeed, options.height, (0.0, 0.0), options.loiter_radius))
    return controller


# 300 s: the default plane mission (a catapult launch, a 400 m square at 25 m/s, 60 s of loiter, the descent, the
# approach and the landing) ends itself, stopped on the ground, at 228.2 s.
register("fixed_wing", _build, help="a plane's flight stack (L1 guidance, TECS, attitude loops) flying the plane "
         "mission: climb-out, legs, loiter, approach, flare and landing", options=FixedWingOptions, duration_s=300.0)
