"""``nexus run``: fly a vehicle in a scene and record the flight (or many: ``--worlds N``)."""

from __future__ import annotations

import time
from dataclasses import fields
from pathlib import Path

import click

from nexus.commands.exits import exit_status, report_error, worlds_failed_status
from nexus.commands.options import (LaterOptions, config_option, default_durations, flight_options, later, resolve,
                                    run_config, shards_option)
from nexus.control import registry
from nexus.core.errors import BuildError
from nexus.vocab.settings import help_of


def _files_in(out: Path) -> str:
    """The run files in ``out`` that a reader can open whole, for closing messages."""
    from nexus.runtime.runs import whole_files  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    found = whole_files(out)
    return ", ".join(found) if found else "no files"


def _flown(out: Path) -> str:
    """Ticks and sim time from ``out/run.json`` (best effort, for the interrupt message)."""
    from nexus.runtime.run_folder import RunFolder  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    info = RunFolder(out).peek_info() or {}
    if "ticks" not in info or "sim_time_s" not in info:
        return "before its first tick"
    return f"after {info['ticks']} ticks ({info['sim_time_s']:.2f} s sim)"


def _duration_option() -> list:
    """``--duration``, whose help gives each controller's default run length (from the registry)."""
    from nexus.runtime.config import RunConfig  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    duration = next(f for f in fields(RunConfig) if f.name == "duration")
    return [config_option("duration", help_of(duration) + " Default, by controller: "
                          + ", ".join(f"{name} {seconds:g}" for name, seconds in default_durations().items())
                          + " (a mission ends a run sooner).")]


def _realtime_option() -> list:
    """``--realtime [FACTOR]`` (RunConfig's ``realtime``): alone it means 1, real time."""
    from nexus.runtime.config import RunConfig  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    realtime = next(f for f in fields(RunConfig) if f.name == "realtime")
    return [click.option("--realtime", type=float, is_flag=False, flag_value=1.0, default=None,
                         metavar="[FACTOR]", help=help_of(realtime))]


def _vehicle_kind(options) -> tuple[str, Path] | None:
    """The vehicle file's kind (``multirotor``, ``plane`` or ``vtol``) and path; None for a file that cannot be read (the
    build's error names it)."""
    from nexus.plant.assets import resolve_asset  # noqa: PLC0415  (reason: keeps nexus run --help fast)
    from nexus.plant.usd_files import open_stage  # noqa: PLC0415  (reason: keeps nexus run --help fast)
    from nexus.runtime.assembly import vehicle_kind  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    try:
        path = resolve_asset("vehicle", options.vehicle)
        return vehicle_kind(open_stage(path)), path
    except BuildError:
        return None


def _controller_for_vehicle(options, named: bool) -> str:
    """The controller the run flies. Named on the command line: as named, but ``pid`` (which a run that names
    none stands for) on a plane is refused in one line. Not named: the default of the vehicle's kind (a plane:
    ``fixed_wing``), so the header, the run's length and run.json say what flies."""
    if options.controller != registry.DEFAULT_CONTROLLER:
        return options.controller  # another controller: the build checks it flies this kind
    found = _vehicle_kind(options)
    if found is None:
        return options.controller
    kind, path = found
    if named and kind not in registry.get(options.controller).vehicles:
        choices = [c.name for c in registry.controllers().values() if kind in c.vehicles]
        raise BuildError(f"{path}: --controller {options.controller} flies multirotor vehicles, and this vehicle is "
                         f"a {kind}; choose one of {', '.join(choices)}")
    return registry.DEFAULT_FOR_KIND[kind]


def _controller_run_options() -> list:
    """The options each registered controller adds to ``nexus run`` (PX4's mission and instance)."""
    return [made for hook in registry.run_hooks().values() for made in hook.options()]


class _RunCommand(LaterOptions):
    """``nexus run``: a negative ``--realtime`` is refused in the option's own words (click would read ``-1``
    as an unknown option, since the factor may be left out)."""

    def parse_args(self, ctx, args):
        for at, arg in enumerate(args):
            if arg == "--":
                break
            value = None
            if arg == "--realtime" and at + 1 < len(args):
                value = args[at + 1]
            elif arg.startswith("--realtime="):
                value = arg.partition("=")[2]
            if value is not None and value.startswith("-"):
                try:
                    number = float(value)
                except ValueError:
                    continue
                from nexus.runtime.pacing import check_factor  # noqa: PLC0415  (reason: keeps nexus run --help fast)

                check_factor(number)  # a one-line error, before anything is built
        return super().parse_args(ctx, args)


@click.command(cls=_RunCommand)
@later(flight_options)
@later(_duration_option)
@later(_realtime_option)
@later(lambda: [shards_option()])
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: runs/<UTC timestamp>/. A folder that holds a run is refused.")
@click.option("--overwrite", is_flag=True,
              help="Replace the run in --out: delete its run.json, record.parquet, run.log and mission.json first.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@later(_controller_run_options)
@click.option("--view", "live_view", is_flag=True,
              help="Show the flight live in the browser while it flies (afterwards: `nexus view OUT`).")
@click.option("--view-port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="With --view: TCP port of the live view (0: any free port).")
@click.option("--view-host", default="127.0.0.1", show_default=True,
              help="With --view: address to listen on; the default keeps the flight on this machine.")
@click.option("--world-of", "world_of", default=None, metavar="RUN:I[:K]",
              help="Fly world I of the run in folder RUN alone, with its seed branch and drawn values (its other "
                   "settings come from RUN/run.json); its record matches that world's rows bit for bit on a CPU. "
                   "RUN:I:K flies vehicle K of world I alone (a fleet flown --no-vehicle-contact: the same bits).")
@click.pass_context
def run(ctx, out, overwrite, quiet, live_view, view_port, view_host, world_of, realtime, **flight):
    """Fly a vehicle in a scene and record the flight (or many: --worlds N)."""
    from dataclasses import replace

    # The flight code loads Warp: imported here, it keeps nexus run --help fast.
    from nexus.runtime.run import prepare_out, run_flight, ticks_in  # noqa: PLC0415  (reason: --help fast)

    hooks = registry.run_hooks()  # what each controller adds to the run beyond its options
    extras = {name: {key: flight.pop(key) for key in hook.names} for name, hook in hooks.items()}
    variation = None
    if world_of is not None:
        from nexus.commands.world_of import world_of_run  # noqa: PLC0415  (reason: keeps nexus run --help fast)

        given = [name for name in flight if name != "device"
                 and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"--world-of flies the run's own settings (only --device may change); "
                                   f"drop --{given[0].replace('_', '-')}")
        options, variation = world_of_run(world_of)
        if ctx.get_parameter_source("device") == click.core.ParameterSource.COMMANDLINE:
            options = replace(options, device=flight["device"])
    else:
        options = run_config(ctx, **flight)
        named = ctx.get_parameter_source("controller") == click.core.ParameterSource.COMMANDLINE
        options = replace(options, controller=_controller_for_vehicle(options, named))
        options.check()
    if realtime is not None:  # pacing only: it changes no bit, so --world-of takes it too
        from nexus.runtime.pacing import check_factor  # noqa: PLC0415  (reason: keeps nexus run --help fast)

        options = replace(options, realtime=check_factor(realtime))
    elif world_of is not None:
        options = replace(options, realtime=None)  # the run it came from may have been paced; this one is not
    for name, hook in hooks.items():
        options = hook.check(ctx, options, extras[name])
    chosen = out is None  # runs/<UTC time>/: a build that fails on bad input leaves no folder there
    out = out or Path("runs") / time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    ticks_in(options.duration_s, options.dt_ns)  # a run of no tick is refused before anything is written
    warp_device = resolve(options.device, ctx.obj["verbose"])
    watch = None
    if live_view:  # a busy port is refused here, before anything is written
        from nexus.viz.live import BUDGET, PACED_BUDGET, LiveWatch  # noqa: PLC0415  (reason: --help fast)

        watch = LiveWatch(view_host, view_port, say=lambda line: click.echo(line, err=True),
                          budget=PACED_BUDGET if options.realtime is not None else BUDGET)  # paced: mostly asleep
    prepare_out(out, overwrite)
    finishers = []
    for name, hook in hooks.items():
        options, finish = hook.start(options, extras[name])
        finishers += [finish] if finish is not None else []
    click.echo(f"nexus run: {options.vehicle} in {options.scene} on {warp_device}, controller {options.controller}, "
               f"seed {options.seed} -> {out}", err=True)
    click.echo("building (the first run compiles kernels: minutes on a CPU; later runs take seconds)...", err=True)
    try:
        summary = run_flight(replace(options, device=warp_device), out, progress=not quiet, overwrite=overwrite,
                             watch=watch, variation=variation)
    except KeyboardInterrupt as stop:
        from nexus.runtime.stopping import stop_reason  # noqa: PLC0415  (reason: keeps nexus run --help fast)

        reason = stop_reason(stop)
        click.echo(f"\n{reason} {_flown(out)}; exit_reason {reason}; the run's files are in {out}: "
                   f"{_files_in(out)}", err=True)
        ctx.exit(exit_status(stop))
    except Exception as error:
        from nexus.runtime.run import remove_failed_build  # noqa: PLC0415  (reason: keeps nexus run --help fast)

        status = report_error(ctx, error)
        if chosen and isinstance(error, BuildError) and remove_failed_build(out):
            click.echo("nothing flew: no run folder was kept", err=True)
        else:
            from nexus.runtime.run_folder import RunFolder  # noqa: PLC0415  (reason: keeps nexus run --help fast)

            again = f" (nothing flew: a run into {out} replaces them)" if RunFolder(out).is_failed_build() else ""
            click.echo(f"the run failed; its files are in {out}: {_files_in(out)}{again}", err=True)
        ctx.exit(status)
    finally:
        if finishers:
            _finish(finishers, out)
        if watch is not None and (cost := watch.close()):
            click.echo(cost, err=True)
    if summary.worlds > 1:
        flown = (f"vehicles: {summary.worlds} ({options.worlds} world{'s' * (options.worlds != 1)} x {options.vehicles})"
                 if options.vehicles > 1 else f"worlds: {summary.worlds}")  # the slots of a fleet: its vehicles
        click.echo(f"{flown}, {summary.worlds_failed} failed; "
                   f"{summary.drone_steps_per_s:,.0f} drone-steps/s; across the "
                   f"{'vehicles' if options.vehicles > 1 else 'worlds'}:")
        for line in summary.distribution:
            click.echo(line)
    click.echo(
        f"done: {summary.ticks} ticks, {summary.sim_time:.2f} s sim in {summary.wall_time:.2f} s wall "
        f"(RTF {summary.rtf:.1f}x), ended by {summary.exit_reason}; files in {out}: {_files_in(out)}"
    )
    if summary.paced:
        click.echo(summary.paced)
    if summary.worlds_failed:
        click.echo(f"{summary.worlds_failed} of {summary.worlds} {'vehicles' if options.vehicles > 1 else 'worlds'} "
                   "failed (non-finite state); see "
                   f"{out / 'summary.parquet'}", err=True)
        ctx.exit(worlds_failed_status(summary.worlds_failed))


def _finish(finishers, out: Path) -> None:
    """Each controller's report of what it did around the run (PX4's built-in mission), from run.json."""
    from nexus.runtime.run_folder import RunFolder  # noqa: PLC0415  (reason: keeps nexus run --help fast)

    try:
        info = RunFolder(out).peek_info() or {}
    except (OSError, ValueError):
        info = {}  # the run stopped before it wrote one: nothing to report
    for finish in finishers:
        for line in finish(out, info):
            click.echo(line)
