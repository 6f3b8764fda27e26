"""``--controller fixed_wing``: the plane's flight stack as a registered controller, loitering at a trimmed speed.

Registered here, not among the registry's built-in modules (whose list and table the multirotor docs hold):
a run imports it by name, ``nexus run --plugin nexus.control.fixed_wing.plugin --controller fixed_wing``.
The run still needs a start in the air (the run places a vehicle at rest; docs/fixed_wing.md, "Not done yet").
"""

from __future__ import annotations

from dataclasses import dataclass

from nexus.control.fixed_wing.controller import FixedWingController, loiter_task, plane_controller
from nexus.control.registry import ControllerOptions, option, register


@dataclass(frozen=True)
class FixedWingOptions(ControllerOptions):
    """``--controller fixed_wing``'s options: the loiter it flies."""

    airspeed: float = option(25.0, "Airspeed to trim at and hold [m/s]")
    height: float = option(100.0, "Height to hold above the NED origin [m]")
    loiter_radius: float = option(150.0, "Radius of the loiter circle about the NED origin [m]")


def _build(prim, path: str, ctx, options: FixedWingOptions) -> FixedWingController:
    """Trims the vehicle file's plane at the options' airspeed; loiters about the NED origin."""
    controller = plane_controller(path, ctx.stage, ctx.path, ctx.plant.mass, ctx.plant.gravity, options.airspeed)
    controller.set_task(loiter_task(options.airspeed, options.height, (0.0, 0.0), options.loiter_radius))
    return controller


register("fixed_wing", _build, help="a plane's flight stack (L1 guidance, TECS, attitude loops) loitering at a "
         "trimmed airspeed", options=FixedWingOptions, duration_s=60.0)
