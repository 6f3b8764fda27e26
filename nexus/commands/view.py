"""``nexus view RUN``: a recorded flight replayed in 3D in the browser.

viser and Newton's viewer load inside the command, so the other commands do not pay for them.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click


@click.command()
@click.argument("run_folder", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="TCP port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The default keeps the flight on this machine; 0.0.0.0 shares it.")
@click.option("--world", type=int, default=None, metavar="I",
              help="With a run of several worlds: the world selected first (the page's selector changes it). "
                   "Default: 0.")
@click.option("--vehicle", type=int, default=None, metavar="K",
              help="With a run of several vehicles a world (`nexus run --vehicles K`): the camera follows vehicle K "
                   "of the selected world (every vehicle is still drawn; the Follow box lets the camera go). "
                   "Default: the camera frames the whole world.")
@click.pass_context
def view(ctx: click.Context, run_folder: Path, port: int, host: str, world: int | None, vehicle: int | None) -> None:
    """Replay the flight in RUN in 3D in the browser (time slider, play/pause) until Ctrl-C."""
    from nexus.viz.replay_view import open_replay  # noqa: PLC0415  (reason: `nexus view --help` loads no Warp)

    if not (ctx.find_root().obj or {}).get("verbose"):
        logging.getLogger("nexus").setLevel(logging.WARNING)
    replay = open_replay(run_folder, host, port, world, vehicle)
    for note in replay.notes:
        click.echo(f"note: {note}", err=True)
    worlds, vehicles = getattr(replay, "worlds", 1), getattr(replay, "vehicles", 1)
    of = (f" of {worlds} worlds" if worlds > 1 else "") + (f", {vehicles} vehicles a world" if vehicles > 1 else "")
    of += f", following vehicle {vehicle}" if vehicle is not None and vehicles > 1 else ""
    click.echo(f"nexus view: {run_folder} ({len(replay.time)} ticks{of}, "
               f"{replay.t1:.2f} s) at {replay.view.url}  (Ctrl-C to stop)", err=True)
    click.echo(replay.view.url)
    try:
        replay.serve()
    finally:
        replay.view.close()
