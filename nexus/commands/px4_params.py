"""``nexus px4 params``: PX4 parameters derived from a vehicle file, as ``PX4_PARAM_<NAME>=value`` lines."""

from __future__ import annotations

import click

from nexus.commands.options import LaterOptions, later, resolve, vehicle_and_scene
from nexus.plant.loading import load_plant
from nexus.px4.params import environment_lines, px4_parameters


@click.command("params", cls=LaterOptions)
@later(vehicle_and_scene("Vehicle name or .usda path.", "Scene name or .usda path (for gravity)."))
@click.option("--export", "as_export", is_flag=True, help="Prefix each line with 'export ' for a shell.")
@click.pass_context
def px4_params(ctx, vehicle, scene, as_export):
    """Print PX4_PARAM_<NAME>=value settings derived from the vehicle file."""

    resolve("cpu", ctx.obj["verbose"])
    plant, _, _ = load_plant(vehicle, scene, "cpu")
    for line in environment_lines(px4_parameters(plant)):
        click.echo(("export " if as_export else "") + line)
