"""The ``nexus`` command line."""

from __future__ import annotations

import json
import logging
import platform
import sys

import click

from nexus import __version__
from nexus.core.device import DEVICE_CHOICES


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nexus")
@click.option("-v", "--verbose", is_flag=True, help="Show Warp's compile messages and debug logs.")
@click.pass_context
def main(ctx: click.Context, verbose: bool) -> None:
    """Nexus: fly aerial vehicles in a fixed-order tick engine on Newton and Warp."""
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    _setup_logging(verbose)


def _resolve(device: str, verbose: bool) -> str:
    from nexus.core.device import resolve_device
    from nexus.core.errors import NexusError
    from nexus.core.warp_setup import init_warp

    init_warp(verbose)
    try:
        return resolve_device(device)
    except NexusError as error:
        raise click.UsageError(str(error)) from None


@main.command()
@click.option("--suite", "suites", multiple=True, default=None,
              help="Suite to run (repeatable); 'all' runs every suite. Default: the first suite.")
@click.option("--device", type=click.Choice(DEVICE_CHOICES), default="cpu", show_default=True,
              help="Device to measure on.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per suite instead of a table.")
@click.pass_context
def bench(ctx: click.Context, suites: tuple[str, ...], device: str, as_json: bool) -> None:
    """Measure the engine's speed as ratios taken within one run."""
    from nexus.bench.suites import DEFAULT_SUITE, SUITES, load

    names = list(suites) or [DEFAULT_SUITE]
    if "all" in names:
        names = list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise click.UsageError(f"unknown suite {unknown}; choose from {', '.join(SUITES)} or all")
    warp_device = _resolve(device, ctx.obj["verbose"])
    if not ctx.obj["verbose"]:
        logging.getLogger("nexus").setLevel(logging.WARNING)  # the suites' plans are not news
    for name in names:
        module = load(name)
        if not as_json:
            click.echo(f"suite {name} on {warp_device} ({platform.processor() or platform.machine()}), measuring...", err=True)
        result = module.run(warp_device)
        if as_json:
            click.echo(json.dumps(result, sort_keys=True))
            continue
        rows = module.table(result)
        width = max(len(label) for label, _ in rows)
        click.echo(f"\n{name}")
        for label, value in rows:
            click.echo(f"  {label:<{width}}  {value:>12}")
        missed = [k for k, ok in result.get("targets_met", {}).items() if not ok]
        if missed:
            click.echo(f"  targets not met: {', '.join(missed)}")


if __name__ == "__main__":
    main()
