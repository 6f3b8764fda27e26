"""``nexus plot RUN``: a report of a flight (or of a sweep): PNG figures and one report.html.

matplotlib loads inside the command, so the other commands do not pay for it.
"""

from __future__ import annotations

from pathlib import Path

import click

from nexus.runtime.stopping import StopSignals


@click.command()
@click.argument("run_folder", metavar="RUN", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Where to write report.html and plots/. Default: RUN itself.")
@click.option("--ulog", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="PX4's ULog of this flight (.ulg): adds PX4's own estimate against Nexus's truth.")
@click.option("--world", type=int, default=None, metavar="I",
              help="With a run of several worlds (`nexus run --worlds N`): the world highlighted and drawn in "
                   "detail. Default: 0.")
@click.option("--vehicle", type=int, default=None, metavar="K",
              help="With a run of several vehicles a world (`nexus run --vehicles K`): the vehicle drawn in detail "
                   "(every vehicle of the world is one line of the paths figure). Default: 0.")
def plot(run_folder: Path, out: Path | None, ulog: Path | None, world: int | None, vehicle: int | None) -> None:
    """Write a report of the flight in RUN (or of the sweep in a `nexus sweep` folder): PNG figures and report.html."""
    from nexus.viz import report as run_report, sweep_report  # noqa: PLC0415  (reason: `nexus plot --help` loads no Warp)

    # Ctrl-C or SIGTERM ends it 130 / 143 between two figures (each file written whole), not killed mid-way.
    with StopSignals():
        if sweep_report.is_sweep(run_folder):
            report = sweep_report.write_sweep_report(run_folder, out=out)
        else:
            report = run_report.write_report(run_folder, out=out, ulog=ulog or sweep_report.px4_ulog(run_folder),
                                             world=world, vehicle=vehicle)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(f"figures: {', '.join(str(p) for p in report.figures.values())}")
    click.echo(f"report: {report.html}")
