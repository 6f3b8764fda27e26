"""``nexus sweep``: fly every point of a sweep file, each as an ordinary run folder, on Ray."""

from __future__ import annotations

from pathlib import Path

import click

from nexus.runtime.stopping import StopSignals


@click.command()
@click.argument("sweep_file", metavar="SWEEP.toml", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Sweep folder: runs/<point id>/ per point, sweep.parquet, sweep.json.")
@click.option("--parallel", type=click.IntRange(min=1), default=None,
              help="Runs at once at most. Default: this machine's cores (or the cluster's CPUs).")
@click.option("--address", default=None,
              help="An existing Ray cluster: auto, HOST:PORT or ray://HOST:PORT. Default: a private Ray "
                   "instance on 127.0.0.1, stopped at the end.")
@click.option("--resume", is_flag=True, help="Finish a sweep in --out: keep points whose run ended, redo the rest.")
@click.option("--yes", is_flag=True, help="Run a sweep of more points than the bound (1000) without asking.")
@click.option("--allow-commands", is_flag=True, help="Let the sweep file's [px4] command run (a program it names).")
@click.option("--dashboard", is_flag=True, help="Start Ray's dashboard (on 127.0.0.1) with the local instance.")
@click.option("--cpus-per-run", type=click.FloatRange(min=0.01), default=1.0, show_default=True,
              help="CPUs Ray reserves for each run.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Times a point whose worker died is tried again before it is recorded as failed.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_context
def sweep(ctx, sweep_file, out, parallel, address, resume, yes, allow_commands, dashboard, cpus_per_run, retries,
          quiet):
    """Fly a grid or random draws of runs (RunConfig fields, USD attributes, PX4) and summarise them.

    Exit status: 0 when every run finished, 1 when any failed, 2 for bad input (nothing flew), 130 when
    interrupted, 143 when terminated (SIGTERM; either way the folder is resumable with --resume).
    """
    from nexus.sweep.runner import SweepOptions, run_sweep  # noqa: PLC0415  (reason: `nexus sweep --help` loads no Warp)

    options = SweepOptions(out=out, parallel=parallel, address=address, resume=resume, yes=yes,
                           allow_commands=allow_commands, dashboard=dashboard, cpus_per_run=cpus_per_run,
                           max_retries=retries, progress=not quiet)
    try:
        with StopSignals():  # SIGTERM before Ray starts stops it too (the runner handles it from then on)
            result = run_sweep(sweep_file, options, say=lambda text: click.echo(text, err=True))
    except KeyboardInterrupt:
        click.echo(f"sweep stopped; finished runs are in {out}; `nexus sweep {sweep_file} --out {out} --resume` "
                   "finishes it", err=True)
        raise
    flown = len(result.rows) - result.skipped
    hours = result.wall_s / 3600.0
    rate = f", {flown / hours:,.0f} runs/hour" if flown and hours > 0 else ""
    click.echo(f"sweep: {len(result.rows)} points ({flown} flown, {result.skipped} kept from before), "
               f"{result.failed} failed, {result.wall_s:.1f} s wall on {result.workers} workers{rate} "
               f"(after {result.workers_start_s:.1f} s starting them); "
               f"summary {out / 'sweep.parquet'}")
    for row in result.rows:
        if row.get("status") != "finished":
            click.echo(f"  failed: {row['folder']}: {row.get('exit_reason')}: {row.get('error')}", err=True)
    if result.failed:
        ctx.exit(1)
