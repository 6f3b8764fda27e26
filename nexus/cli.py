"""The ``nexus`` command line."""

from __future__ import annotations

import json
import logging
import platform
import sys
import time
from pathlib import Path

import click

from nexus import __version__
from nexus.core.device import DEVICE_CHOICES

#: Sim time a run flies when the controller has no mission to end it [s].
DEFAULT_DURATION_S = 10.0
#: Longest sim time a mission may take before the run stops it [s].
DEFAULT_MISSION_CAP_S = 60.0
#: Controllers whose runs carry a mission that ends the run.
MISSION_CONTROLLERS = ("pid",)


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


def _flight_options(f):
    """The options shared by ``run`` and ``plan``."""
    from nexus.assembly import CONTROLLERS, DEFAULT_CONTROLLER

    decorators = [
        click.option("--vehicle", default="astro_max_base", show_default=True,
                     help="Vehicle name (a file in vehicles/) or path to a .usda file."),
        click.option("--scene", default="empty", show_default=True,
                     help="Scene name (a file in scenes/) or path to a .usda file."),
        click.option("--device", type=click.Choice(DEVICE_CHOICES), default="auto", show_default=True,
                     help="auto takes the GPU when one is present."),
        click.option("--controller", type=click.Choice(CONTROLLERS), default=DEFAULT_CONTROLLER, show_default=True,
                     help="What writes the controls."),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of every random stream."),
        click.option("--tick-hz", type=click.FloatRange(min=1.0, max=10000.0), default=250.0, show_default=True,
                     help="Control tick rate [Hz]."),
        click.option("--substeps", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Solver steps per tick."),
        click.option("--eager", is_flag=True, help="Launch stage by stage instead of replaying graphs (debugging)."),
    ]
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


def _options(vehicle, scene, controller, seed, tick_hz, substeps, eager):
    from nexus.flight import FlightOptions

    return FlightOptions(vehicle=vehicle, scene=scene, controller=controller, seed=seed, tick_hz=tick_hz,
                         substeps=substeps, eager=eager)


def _fail(error: Exception) -> None:
    click.echo(f"error: {error}", err=True)
    sys.exit(2)


@main.command()
@_flight_options
@click.option("--duration", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Longest sim time to fly [s]. Default: until the mission ends (60 s at most), or 10 s without one.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: runs/<UTC timestamp>/.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.pass_context
def run(ctx, vehicle, scene, device, controller, seed, tick_hz, substeps, eager, duration, out, quiet):
    """Fly a vehicle in a scene and record the flight."""
    from nexus.core.errors import NexusError
    from nexus.run import run_flight

    warp_device = _resolve(device, ctx.obj["verbose"])
    options = _options(vehicle, scene, controller, seed, tick_hz, substeps, eager)
    out = out or Path("runs") / time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    if duration is None:
        duration = DEFAULT_MISSION_CAP_S if controller in MISSION_CONTROLLERS else DEFAULT_DURATION_S
    click.echo(f"nexus run: {vehicle} in {scene} on {warp_device}, controller {controller}, seed {seed} -> {out}", err=True)
    click.echo("building (the first run compiles kernels: minutes on a CPU; later runs take seconds)...", err=True)
    try:
        summary = run_flight(options, warp_device, out, duration, progress=not quiet)
    except NexusError as error:
        click.echo(f"the run failed; its log, record and run.json are in {out}", err=True)
        _fail(error)
    click.echo(
        f"done: {summary.ticks} ticks, {summary.sim_time:.2f} s sim in {summary.wall_time:.2f} s wall "
        f"(RTF {summary.rtf:.1f}x), ended by {summary.exit_reason}; record: {out / 'record.parquet'}"
    )


@main.command()
@_flight_options
@click.pass_context
def plan(ctx, vehicle, scene, device, controller, seed, tick_hz, substeps, eager):
    """Print the stage plan of a run without flying it."""
    from nexus.core.errors import NexusError
    from nexus.flight import build_flight

    warp_device = _resolve(device, ctx.obj["verbose"])
    logging.getLogger("nexus").setLevel(logging.WARNING)
    try:
        flight = build_flight(_options(vehicle, scene, controller, seed, tick_hz, substeps, eager), warp_device)
    except NexusError as error:
        _fail(error)
    click.echo(flight.loop.plan.text())


@main.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--eager", is_flag=True, help="Replay stage by stage instead of replaying graphs.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the replay's own record in this folder.")
@click.pass_context
def replay(ctx, out, eager, keep):
    """Rerun the flight in OUT open loop from its recorded controls, on the CPU, and compare bit for bit."""
    from nexus.core.errors import NexusError
    from nexus.replay import replay as replay_run

    _resolve("cpu", ctx.obj["verbose"])
    logging.getLogger("nexus").setLevel(logging.WARNING)
    try:
        result = replay_run(out, eager=eager, keep=keep)
    except NexusError as error:
        _fail(error)
    if result.not_compared:
        click.echo(f"not produced open loop, not compared: {', '.join(result.not_compared)}")
    if result.identical:
        click.echo(f"replay identical: {result.ticks} ticks, {len(result.compared)} columns, every bit equal")
        return
    tick, column = result.first_difference
    click.echo(f"replay differs: first at tick {tick}, column {column} "
               f"(recorded {result.details.get('recorded')}, replayed {result.details.get('replayed')})")
    sys.exit(1)


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
