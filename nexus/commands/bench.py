"""``nexus bench``: the engine's speed as ratios taken within one run (suites in :mod:`nexus.bench`)."""

from __future__ import annotations

import json
import logging
import platform

import click

from nexus.bench.suites import DEFAULT_SUITE, SUITES, load
from nexus.commands.options import DEVICES, resolve
from nexus.runtime.stopping import StopSignals


@click.command()
@click.option("--suite", "suites", multiple=True, default=None,
              help="Suite to run (repeatable); 'all' runs every suite. Default: the first suite.")
@click.option("--device", type=DEVICES, default="cpu", show_default=True,
              help="Device to measure on.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per suite instead of a table.")
@click.pass_context
def bench(ctx: click.Context, suites: tuple[str, ...], device: str, as_json: bool) -> None:
    """Measure the engine's speed as ratios taken within one run."""

    names = list(suites) or [DEFAULT_SUITE]
    if "all" in names:
        names = list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise click.UsageError(f"unknown suite {unknown}; choose from {', '.join(SUITES)} or all")
    warp_device = resolve(device, ctx.obj["verbose"])
    if not ctx.obj["verbose"]:
        logging.getLogger("nexus").setLevel(logging.WARNING)  # the suites' plans are not news
    # SIGTERM (a CI time-out, `kill`) stops a suite as Ctrl-C does: its temporary folders (a scale suite's record
    # parts can be large) are removed on the way out, and the command ends 143 saying so.
    with StopSignals():
        for name in names:
            _run_suite(name, warp_device, as_json)


def _run_suite(name: str, warp_device: str, as_json: bool) -> None:
    """One suite measured and printed (a table, or one JSON line)."""
    module = load(name)
    if not as_json:
        click.echo(f"suite {name} on {warp_device} ({platform.processor() or platform.machine()}), measuring...", err=True)
    result = module.run(warp_device)
    if as_json:
        click.echo(json.dumps(result, sort_keys=True))
        return
    rows = module.table(result)
    width = max(len(label) for label, _ in rows)
    click.echo(f"\n{name}")
    for label, value in rows:
        click.echo(f"  {label:<{width}}  {value:>12}")
    missed = [k for k, ok in result.get("targets_met", {}).items() if not ok]
    if missed:
        click.echo(f"  targets not met: {', '.join(missed)}")
