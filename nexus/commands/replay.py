"""``nexus replay OUT``: rerun a recorded flight open loop from its controls and compare bit for bit."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from nexus.commands.exits import EXIT_FAILED


@click.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--eager", is_flag=True, help="Replay stage by stage instead of replaying graphs.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the replay's own record in this folder.")
@click.pass_context
def replay(ctx, out, eager, keep):
    """Rerun the flight in OUT open loop from its recorded controls, on the CPU, and compare bit for bit."""
    from nexus.commands.options import resolve  # noqa: PLC0415  (reason: `nexus replay --help` loads no Warp)
    from nexus.runtime.replay import replay as replay_run  # noqa: PLC0415  (reason: `nexus replay --help` loads no Warp)

    resolve("cpu", ctx.obj["verbose"])
    logging.getLogger("nexus").setLevel(logging.WARNING)
    result = replay_run(out, eager=eager, keep=keep)
    if result.note:
        click.echo(f"note: {result.note}", err=True)
    if result.not_compared:
        click.echo(f"not produced open loop, not compared: {', '.join(result.not_compared)}")
    if result.not_recorded:
        click.echo(f"produced by the replay but not in the record, not compared: {', '.join(result.not_recorded)}")
    frames = sum(result.frames.values())
    frames_text = f", {frames} frames of {len(result.frames)} sensors" if result.frames else ""
    if result.identical:
        slots = (f"{result.worlds} worlds" if result.vehicles == 1 else
                 f"{result.worlds // result.vehicles} world{'s' * (result.worlds != result.vehicles)} x "
                 f"{result.vehicles} vehicles")
        worlds_text = f" of {slots} ({result.rows:,} rows)" if result.worlds > 1 else ""
        click.echo(f"replay identical: {result.ticks} ticks{worlds_text}, {len(result.compared)} columns{frames_text}, "
                   "every bit equal")
        return
    if result.first_difference is None:
        sensor, tick, array = result.frame_difference
        click.echo(f"replay differs: the frame of {sensor} showing tick {tick}, array {array}")
        sys.exit(EXIT_FAILED)
    tick, column = result.first_difference
    click.echo(f"replay differs: first at tick {tick}, column {column} "
               f"(recorded {result.details.get('recorded')}, replayed {result.details.get('replayed')})")
    sys.exit(EXIT_FAILED)
