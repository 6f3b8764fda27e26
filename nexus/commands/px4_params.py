"""``nexus px4 params``: PX4 parameters derived from a vehicle file, as ``PX4_PARAM_<NAME>=value`` lines."""

from __future__ import annotations

import click

from nexus.commands.options import LaterOptions, later, resolve, vehicle_and_scene
from nexus.plant.loading import load_plant
from nexus.px4.params import environment_lines, is_plane, px4_parameters
from nexus.px4.plane_params import AIRFRAME, SIM_MODEL
from nexus.px4.vtol_params import AIRFRAME as VTOL_AIRFRAME, SIM_MODEL as VTOL_SIM_MODEL


@click.command("params", cls=LaterOptions)
@later(vehicle_and_scene("Vehicle name or .usda path.", "Scene name or .usda path (for gravity)."))
@click.option("--export", "as_export", is_flag=True, help="Prefix each line with 'export ' for a shell.")
@click.pass_context
def px4_params(ctx, vehicle, scene, as_export):
    """Print PX4_PARAM_<NAME>=value settings derived from the vehicle file.

    A multirotor: its rotor geometry, hover thrust and rate gains (for PX4's none_iris airframe). A plane: its
    control surfaces' and propeller's outputs, trim, stall, minimum and maximum airspeeds and trim throttle (for
    PX4's fixed-wing airframe 1030, named on stderr). A standard VTOL (a wing and lift rotors): the plane's, its lift
    rotors' and its transitions' (for PX4's standard-VTOL airframe 1040, named on stderr).
    """

    resolve("cpu", ctx.obj["verbose"])
    plant, stage, _ = load_plant(vehicle, scene, "cpu")
    params = px4_parameters(plant)
    if is_plane(stage) and plant.rotors:  # the airframe is PX4's start-up choice, not a parameter: said on stderr
        click.echo(f"# {plant.vehicle_path} is a standard VTOL: start PX4 with PX4_SYS_AUTOSTART={VTOL_AIRFRAME} "
                   f"(standard-VTOL SITL airframe {VTOL_AIRFRAME}_{VTOL_SIM_MODEL}, on Nexus's lockstep link) and "
                   "these parameters", err=True)
    elif is_plane(stage):
        click.echo(f"# {plant.vehicle_path} is a plane: start PX4 with PX4_SYS_AUTOSTART={AIRFRAME} (fixed-wing SITL "
                   f"airframe {AIRFRAME}_{SIM_MODEL}, on Nexus's lockstep link) and these parameters", err=True)
    for line in environment_lines(params):
        click.echo(("export " if as_export else "") + line)
