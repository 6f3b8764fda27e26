"""``nexus plan``: the stage plan of a run, printed without flying it."""

from __future__ import annotations

import logging

import click

from nexus.commands.options import LaterOptions, flight_options, later, resolve, run_config
from nexus.runtime.flight import build_flight


@click.command(cls=LaterOptions)
@later(flight_options)
@click.option("--verbose", "details", is_flag=True,
              help="Also print the ticks per replay and the graph nodes (kernel launches) per tick.")
@click.pass_context
def plan(ctx, details, **flight):
    """Print the stage plan of a run without flying it."""

    options = run_config(ctx, **flight)
    warp_device = resolve(options.device, ctx.obj["verbose"])
    logging.getLogger("nexus").setLevel(logging.WARNING)
    built = build_flight(options, warp_device, start_render=False)  # the plan needs no render peer
    built.loop.close()
    if built.render is not None:
        built.render.close()
    click.echo(built.loop.plan.text())
    if details:
        nodes = built.loop.nodes_per_tick
        click.echo(f"ticks per replay: {built.loop.ticks_per_replay}")
        click.echo(f"kernels per tick: {nodes if nodes is not None else 'not counted (eager)'} "
                   "(graph nodes: kernel launches, copies and memsets)")
