"""The ``nexus plot`` and ``nexus view`` commands (registered on the ``nexus`` group in ``nexus/cli.py``).

matplotlib, viser and Newton's viewer are imported inside the commands, so
``nexus run`` does not pay for them.
"""

from __future__ import annotations

import logging
from pathlib import Path

import click


@click.command()
@click.argument("run_folder", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to write report.html and plots/. Default: RUN itself.")
@click.option("--ulog", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PX4's ULog of this flight (.ulg): adds PX4's own estimate against Nexus's truth.")
@click.option("--world", type=int, default=None, metavar="I",
              help="With a run of several worlds (`nexus run --worlds N`): the world highlighted and drawn in "
                   "detail. Default: 0.")
def plot(run_folder: Path, out: Path | None, ulog: Path | None, world: int | None) -> None:
    """Write a report of the flight in RUN (or of the sweep in a `nexus sweep` folder): PNG figures and report.html."""
    from nexus.viz.report import write_report
    from nexus.viz.sweep_report import is_sweep, write_sweep_report

    if is_sweep(run_folder):
        report = write_sweep_report(run_folder, out=out)
    else:
        from nexus.viz.sweep_report import px4_ulog

        report = write_report(run_folder, out=out, ulog=ulog or px4_ulog(run_folder), world=world)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"figures: {', '.join(str(p) for p in report.figures.values())}")
    click.echo(f"report: {report.html}")


@click.command()
@click.argument("run_folder", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="TCP port to serve on (0: any free port).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. The default keeps the flight on this machine; 0.0.0.0 shares it.")
@click.option("--world", type=int, default=None, metavar="I",
              help="With a run of several worlds: the world selected first (the page's selector changes it). "
                   "Default: 0.")
@click.pass_context
def view(ctx: click.Context, run_folder: Path, port: int, host: str, world: int | None) -> None:
    """Replay the flight in RUN in 3D in the browser (time slider, play/pause) until Ctrl-C."""
    from nexus.viz.replay_view import open_replay

    if not (ctx.find_root().obj or {}).get("verbose"):
        logging.getLogger("nexus").setLevel(logging.WARNING)
    replay = open_replay(run_folder, host, port, world)
    for note in replay.notes:
        click.echo(f"note: {note}", err=True)
    worlds = getattr(replay, "worlds", 1)
    click.echo(f"nexus view: {run_folder} ({len(replay.time)} ticks{f' of {worlds} worlds' if worlds > 1 else ''}, "
               f"{replay.t1:.2f} s) at {replay.view.url}  (Ctrl-C to stop)", err=True)
    click.echo(replay.view.url)
    try:
        replay.serve()
    finally:
        replay.view.close()
