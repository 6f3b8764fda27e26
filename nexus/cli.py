"""The ``nexus`` command line."""

from __future__ import annotations

import json
import logging
import platform
import sys
import time
import traceback
from pathlib import Path

import click

from nexus import __version__
from nexus.core.device import DEVICE_CHOICES

#: Exit statuses. 0: the command did what was asked (a run ended by its mission or its
#: duration; a replay was identical). 1: a run failed while flying, a replay differed, or
#: something unexpected broke. 2: bad input (usage, a build error, a refused --out, a record
#: replay cannot use): nothing flew. 130: interrupted (SIGINT), the shell's 128 + 2; 143:
#: terminated (SIGTERM), 128 + 15.
EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143
#: A many-world run in which some worlds went non-finite exits 64 + their count (at most 127: 63 or more).
EXIT_WORLDS_FAILED = 64


def worlds_failed_status(failed: int) -> int:
    """The exit status of a run that flew to its end with ``failed`` failed worlds (0 when none failed)."""
    return 0 if failed <= 0 else EXIT_WORLDS_FAILED + min(int(failed), 63)


def exit_status(error: BaseException) -> int:
    """The exit status an error ends a command with (see ``EXIT_*``)."""
    from nexus.core.errors import BuildError
    from nexus.stopping import Terminated

    if isinstance(error, Terminated):
        return EXIT_TERMINATED
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_BAD_INPUT if isinstance(error, BuildError) else EXIT_FAILED


def report_error(ctx: click.Context, error: BaseException) -> int:
    """Print ``error`` once, as one line (with its traceback under ``--debug``); return the exit status."""
    from nexus.core.errors import NexusError

    debug = (ctx.find_root().obj or {}).get("debug", False)
    if debug:
        traceback.print_exception(error)
    if isinstance(error, NexusError):
        click.echo(f"error: {error}", err=True)
    else:
        hint = "" if debug else " (unexpected: run again with `nexus --debug ...` to see the traceback)"
        click.echo(f"error: {type(error).__name__}: {error}{hint}", err=True)
    return exit_status(error)


class NexusGroup(click.Group):
    """Turns any error a command raises into one line and an exit status: never a traceback
    unless ``--debug`` asks for it."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except KeyboardInterrupt as stop:
            click.echo("terminated" if exit_status(stop) == EXIT_TERMINATED else "interrupted", err=True)
            ctx.exit(exit_status(stop))
        except Exception as error:
            ctx.exit(report_error(ctx, error))


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(message)s",
        stream=sys.stderr,
    )


@click.group(cls=NexusGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nexus")
@click.option("-v", "--verbose", is_flag=True, help="Show Warp's compile messages and debug logs.")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error (for bug reports).")
@click.pass_context
def main(ctx: click.Context, verbose: bool, debug: bool) -> None:
    """Nexus: fly aerial vehicles in a fixed-order tick engine on Newton and Warp."""
    ctx.ensure_object(dict)
    ctx.obj["verbose"] = verbose
    ctx.obj["debug"] = debug
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
    """The options shared by ``run`` and ``plan``; their defaults are :class:`nexus.flight.RunConfig`'s."""
    from nexus.assembly import MISSIONS
    from nexus.flight import RECORD_MODES, RENDER_MODES, RunConfig

    default = RunConfig()
    decorators = [
        click.option("--vehicle", default=default.vehicle, show_default=True,
                     help="Vehicle name (a file in vehicles/) or path to a .usda file."),
        click.option("--scene", default=default.scene, show_default=True,
                     help="Scene name (a file in scenes/) or path to a .usda file."),
        click.option("--device", type=click.Choice(DEVICE_CHOICES), default=default.device, show_default=True,
                     help="auto takes the GPU when one is present."),
        click.option("--controller", type=_Controllers(), default=default.controller, show_default=True,
                     help="What writes the controls (docs/controllers.md; one of your own: --plugin MODULE)."),
        click.option("--seed", type=click.IntRange(min=0), default=default.seed, show_default=True,
                     help="Seed of every random stream."),
        click.option("--tick-hz", type=click.FloatRange(min=1.0, max=10000.0), default=default.tick_hz, show_default=True,
                     help="Control tick rate [Hz]."),
        click.option("--substeps", type=click.IntRange(min=1), default=default.substeps, show_default=True,
                     help="Solver steps per tick."),
        click.option("--solver", type=click.Choice(("mujoco", "featherstone")), default=default.solver,
                     show_default=True, help="Physics solver; featherstone is the differentiable one."),
        click.option("--eager", is_flag=True, default=default.eager,
                     help="Launch stage by stage instead of replaying graphs (debugging)."),
        click.option("--mission", type=click.Choice(MISSIONS), default=default.mission, show_default=True,
                     help="With --controller pid: the scene's mission, or the same mission shortened to under 10 s."),
        *(_controller_option(f, hint) for _, f, hint in _controller_flags()),
        click.option("--worlds", type=int, default=default.worlds, show_default=True,
                     help="Vehicles flown at once, one Newton world each, in one graph (docs/worlds.md)."),
        click.option("--vary", type=click.Path(dir_okay=False), default=default.vary,
                     help="Variation file (TOML): each world's mass, rotors, sensors, start, wind and faults, drawn "
                          "from the seed (docs/worlds.md lists every parameter)."),
        click.option("--record-every", type=int, default=default.record_every, show_default=True,
                     help="Record ticks K, 2K, 3K, ... of every world (every tick: 1)."),
        click.option("--record", "record_mode", type=click.Choice(RECORD_MODES), default=default.record_mode,
                     show_default=True, help="full: the record and the per-world summary; summary: the summary only."),
        click.option("--render", type=click.Choice(RENDER_MODES), default=default.render, show_default=True,
                     help="Where cameras and lidars render: peer (a process of its own, overlapping the loop), "
                          "inline (this process), auto (peer on the CPU, inline on a GPU)."),
        click.option("--plugin", "plugins", multiple=True, is_eager=True, callback=_import_plugins, metavar="MODULE",
                     help="Import MODULE before anything else (repeatable): a module of your own that registers a "
                          "controller (docs/controllers.md); run.json lists it."),
    ]
    for decorator in reversed(decorators):
        f = decorator(f)
    return f


class _Controllers(click.Choice):
    """``--controller``'s choices: the registered controllers, read when the option is used (after ``--plugin``)."""

    def __init__(self):
        super().__init__(())

    @property
    def choices(self):
        from nexus.control import registry

        return registry.names()

    @choices.setter
    def choices(self, value):
        pass


def _import_plugins(ctx, param, modules):
    from nexus.control import registry
    from nexus.core.errors import BuildError

    try:
        registry.import_plugins(modules)
    except BuildError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    return modules


def _controller_flags() -> list:
    """``(controller, field, type hint)`` of each option of Nexus's own controllers that has a flag."""
    import typing
    from dataclasses import fields

    from nexus.control import registry

    found = []
    for entry in registry.controllers(builtin_only=True).values():
        hints = typing.get_type_hints(entry.options)
        found += [(entry.name, f, hints[f.name]) for f in fields(entry.options) if f.metadata.get("flag")]
    return found


def _dest(f) -> str:
    return f.metadata["flag"].lstrip("-").replace("-", "_")


def _controller_option(f, hint):
    """The click option of a controller's option field (its flag, help, default and bounds)."""
    meta = f.metadata
    if hint is bool:
        return click.option(meta["flag"], _dest(f), is_flag=True, default=f.default, help=meta["help"])
    lo, hi = meta.get("minimum"), meta.get("maximum")
    if meta.get("path"):
        kind = click.Path(dir_okay=False)
    elif hint is int:
        kind = click.IntRange(lo, hi) if lo is not None or hi is not None else int
    elif hint is float:
        kind = click.FloatRange(lo, hi) if lo is not None or hi is not None else float
    else:
        kind = str
    return click.option(meta["flag"], _dest(f), type=kind, default=f.default, show_default=f.default is not None,
                        help=meta["help"])


def _default_durations() -> dict[str, float]:
    from nexus.control import registry

    return {name: entry.duration_s for name, entry in registry.controllers(builtin_only=True).items()}


def _options(ctx, controller, **flight):
    """The :class:`~nexus.flight.RunConfig` of the options ``_flight_options`` adds (and ``--duration``).

    A controller's option given on the command line for another controller is refused.
    """
    from nexus.control import registry
    from nexus.flight import RunConfig

    chosen = {}
    for owner, f, _ in _controller_flags():
        value = flight.pop(_dest(f))
        if owner == controller:
            chosen[f.name] = value
        elif ctx.get_parameter_source(_dest(f)) == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{f.metadata['flag']} needs --controller {owner}")
    options = registry.get(controller).options(**chosen)
    return RunConfig(controller=controller, controller_options=options, plugins=list(flight.pop("plugins")), **flight)


def _files_in(out: Path) -> str:
    """The run files in ``out`` that a reader can open whole, for closing messages."""
    from nexus.runs import whole_files

    found = whole_files(out)
    return ", ".join(found) if found else "no files"


def _flown(out: Path) -> str:
    """Ticks and sim time from ``out/run.json`` (best effort, for the interrupt message)."""
    from nexus.runtime.run_folder import RunFolder  # noqa: PLC0415

    info = RunFolder(out).peek_info() or {}
    if "ticks" not in info or "sim_time_s" not in info:
        return "before its first tick"
    return f"after {info['ticks']} ticks ({info['sim_time_s']:.2f} s sim)"


@main.command()
@_flight_options
@click.option("--duration", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Longest sim time to fly [s]. Default, by controller: "
                   + ", ".join(f"{name} {seconds:g}" for name, seconds in _default_durations().items())
                   + " (a mission ends a run sooner).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Output folder. Default: runs/<UTC timestamp>/. A folder that holds a run is refused.")
@click.option("--overwrite", is_flag=True,
              help="Replace the run in --out: delete its run.json, record.parquet, run.log and mission.json first.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
@click.option("--px4-mission", is_flag=True,
              help="With --controller px4: also fly the takeoff, yaw sweep and landing over MAVLink, each command on "
                   "a fixed sim tick (the clock holds until PX4 has it), and end the run after it.")
@click.option("--px4-mission-url", default="udpin:127.0.0.1:14540", show_default=True,
              help="Where the mission commander listens for PX4's MAVLink.")
@click.option("--view", "live_view", is_flag=True,
              help="Show the flight live in the browser while it flies (afterwards: `nexus view OUT`).")
@click.option("--view-port", type=click.IntRange(0, 65535), default=8080, show_default=True,
              help="With --view: TCP port of the live view (0: any free port).")
@click.option("--view-host", default="127.0.0.1", show_default=True,
              help="With --view: address to listen on; the default keeps the flight on this machine.")
@click.option("--px4-instance", type=click.IntRange(min=0), default=None, metavar="K",
              help="With --controller px4: fly against PX4 started as `px4 -i K` (TCP 4560+K, MAVLink UDP 14540+K).")
@click.option("--world-of", "world_of", default=None, metavar="RUN:I",
              help="Fly world I of the run in folder RUN alone, with its seed branch and drawn values (its other "
                   "settings come from RUN/run.json); its record matches that world's rows bit for bit on a CPU.")
@click.pass_context
def run(ctx, out, overwrite, quiet, px4_mission, px4_mission_url, live_view, view_port, view_host, px4_instance, world_of,
        **flight):
    """Fly a vehicle in a scene and record the flight (or many: --worlds N)."""
    from dataclasses import replace

    from nexus.run import prepare_out, run_flight, ticks_in

    variation = None
    if world_of is not None:
        from nexus.commands.world_of import world_of_run

        given = [name for name in flight if name != "device"
                 and ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"--world-of flies the run's own settings (only --device may change); "
                                   f"drop --{given[0].replace('_', '-')}")
        options, variation = world_of_run(world_of)
        if ctx.get_parameter_source("device") == click.core.ParameterSource.COMMANDLINE:
            options = replace(options, device=flight["device"])
    else:
        options = _options(ctx, **flight)
        options.check()
    if px4_mission and options.controller != "px4":
        raise click.UsageError("--px4-mission needs --controller px4")
    if px4_instance is not None:
        from nexus.px4.instance import instance_options

        options, px4_mission_url = instance_options(ctx, options, px4_instance, px4_mission_url)
    out = out or Path("runs") / time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    ticks_in(options.duration_s, options.dt_ns)  # a run of no tick is refused before anything is written
    warp_device = _resolve(options.device, ctx.obj["verbose"])
    watch = None
    if live_view:  # a busy port is refused here, before anything is written
        from nexus.viz.live import LiveWatch

        watch = LiveWatch(view_host, view_port, say=lambda line: click.echo(line, err=True))
    prepare_out(out, overwrite)
    options, commander = _start_mission(options, px4_mission_url) if px4_mission else (options, None)
    click.echo(f"nexus run: {options.vehicle} in {options.scene} on {warp_device}, controller {options.controller}, "
               f"seed {options.seed} -> {out}", err=True)
    click.echo("building (the first run compiles kernels: minutes on a CPU; later runs take seconds)...", err=True)
    try:
        summary = run_flight(options, warp_device, out, progress=not quiet, overwrite=overwrite, watch=watch,
                             variation=variation)
    except KeyboardInterrupt as stop:
        from nexus.stopping import stop_reason

        reason = stop_reason(stop)
        click.echo(f"\n{reason} {_flown(out)}; exit_reason {reason}; the run's files are in {out}: "
                   f"{_files_in(out)}", err=True)
        ctx.exit(exit_status(stop))
    except Exception as error:
        status = report_error(ctx, error)
        click.echo(f"the run failed; its files are in {out}: {_files_in(out)}", err=True)
        ctx.exit(status)
    finally:
        if commander is not None:
            commander.stop_and_report(out)
        if watch is not None and (cost := watch.close()):
            click.echo(cost, err=True)
    if summary.worlds > 1:
        click.echo(f"worlds: {summary.worlds}, {summary.worlds_failed} failed; "
                   f"{summary.drone_steps_per_s:,.0f} drone-steps/s; across the worlds:")
        for line in summary.distribution:
            click.echo(line)
    click.echo(
        f"done: {summary.ticks} ticks, {summary.sim_time:.2f} s sim in {summary.wall_time:.2f} s wall "
        f"(RTF {summary.rtf:.1f}x), ended by {summary.exit_reason}; files in {out}: {_files_in(out)}"
    )
    if summary.worlds_failed:
        click.echo(f"{summary.worlds_failed} of {summary.worlds} worlds failed (non-finite state); see "
                   f"{out / 'summary.parquet'}", err=True)
        ctx.exit(worlds_failed_status(summary.worlds_failed))


@main.command()
@_flight_options
@click.option("--verbose", "details", is_flag=True,
              help="Also print the ticks per replay and the graph nodes (kernel launches) per tick.")
@click.pass_context
def plan(ctx, details, **flight):
    """Print the stage plan of a run without flying it."""
    from nexus.flight import build_flight

    options = _options(ctx, **flight)
    warp_device = _resolve(options.device, ctx.obj["verbose"])
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


@main.command()
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--eager", is_flag=True, help="Replay stage by stage instead of replaying graphs.")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep the replay's own record in this folder.")
@click.pass_context
def replay(ctx, out, eager, keep):
    """Rerun the flight in OUT open loop from its recorded controls, on the CPU, and compare bit for bit."""
    from nexus.replay import replay as replay_run

    _resolve("cpu", ctx.obj["verbose"])
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
        click.echo(f"replay identical: {result.ticks} ticks, {len(result.compared)} columns{frames_text}, every bit equal")
        return
    if result.first_difference is None:
        sensor, tick, array = result.frame_difference
        click.echo(f"replay differs: the frame of {sensor} showing tick {tick}, array {array}")
        sys.exit(EXIT_FAILED)
    tick, column = result.first_difference
    click.echo(f"replay differs: first at tick {tick}, column {column} "
               f"(recorded {result.details.get('recorded')}, replayed {result.details.get('replayed')})")
    sys.exit(EXIT_FAILED)


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


@main.command()
@click.option("--write", "write", is_flag=True, help="Regenerate the schema files from the component specs.")
@click.option("--check", "check", is_flag=True, help="Exit 1, naming them, when the schema files are stale.")
def schema(write: bool, check: bool) -> None:
    """Generate the USD schema files (generatedSchema.usda, plugInfo.json, components.json) from the specs."""
    from nexus.schemas import generate

    if write == check:
        raise click.UsageError("give one of --write or --check")
    folder = generate.FOLDER
    if write:
        changed = generate.write(folder)
        if changed:
            click.echo(f"wrote {', '.join(changed)} in {folder}")
        else:
            click.echo(f"the schema files in {folder} were up to date; nothing changed")
        return
    stale = generate.stale_files(folder)
    if stale:
        click.echo(f"stale schema files in {folder}: {', '.join(stale)}; run `nexus schema --write` "
                   "(they are generated from the component specs)", err=True)
        sys.exit(EXIT_FAILED)
    click.echo(f"the schema files in {folder} match the component specs")


class _LoopMission:
    """The built-in PX4 mission, flown from inside the lockstep loop (nexus.px4.commander); reported after the run."""

    def __init__(self, url: str):
        self.url = url

    def stop_and_report(self, out: Path) -> None:
        from nexus.runtime.run_folder import RunFolder  # noqa: PLC0415

        try:
            report = (RunFolder(out).peek_info() or {})["controller_stats"]["mission"]
        except (OSError, ValueError, KeyError, TypeError):
            return  # the run stopped before PX4 connected: no mission to report
        from nexus.px4.mission import MissionReport

        fields = {k: v for k, v in report.items() if k in MissionReport.__dataclass_fields__}
        for line in MissionReport(**fields).lines():
            click.echo(f"  {line}")
        (out / "mission.json").write_text(json.dumps(report, indent=2, default=str) + "\n")


def _start_mission(options, url: str):
    """The run's options with PX4's built-in mission flown from inside the loop, and its reporter."""
    from dataclasses import replace

    from nexus.px4.api_link import ApiLinkError, parse_url

    try:
        parse_url(url)  # a malformed URL is refused before anything is written
    except ApiLinkError as error:
        raise click.BadParameter(str(error), param_hint="--px4-mission-url") from None
    options = replace(options, controller_options=replace(options.controller_options, mission={"url": url}))
    return options, _LoopMission(url)


@main.group()
def px4():
    """PX4 SITL helpers: parameters for a vehicle, and a mission commander."""


@px4.command("params")
@click.option("--vehicle", default="astro_max_base", show_default=True, help="Vehicle name or .usda path.")
@click.option("--scene", default="empty", show_default=True, help="Scene name or .usda path (for gravity).")
@click.option("--export", "as_export", is_flag=True, help="Prefix each line with 'export ' for a shell.")
@click.pass_context
def px4_params(ctx, vehicle, scene, as_export):
    """Print PX4_PARAM_<NAME>=value settings derived from the vehicle file."""
    from nexus.plant.loading import load_plant
    from nexus.px4.params import environment_lines, px4_parameters

    _resolve("cpu", ctx.obj["verbose"])
    plant, _, _ = load_plant(vehicle, scene, "cpu")
    for line in environment_lines(px4_parameters(plant)):
        click.echo(("export " if as_export else "") + line)


@px4.command("mission")
@click.option("--url", default="udpin:127.0.0.1:14540", show_default=True, help="PX4's MAVLink API stream.")
@click.option("--altitude", type=click.FloatRange(min=0.5), default=2.5, show_default=True, help="Takeoff altitude [m].")
@click.option("--hold", "hold_s", type=click.FloatRange(min=0.0), default=4.0, show_default=True,
              help="Hold after takeoff [s, PX4 time].")
@click.option("--yaw-hold", "yaw_hold_s", type=click.FloatRange(min=0.5), default=8.0, show_default=True,
              help="Time at each yaw of the sweep [s, PX4 time].")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1.0), default=600.0, show_default=True,
              help="Give up after this long [s, wall].")
def px4_mission(url, altitude, hold_s, yaw_hold_s, timeout_s):
    """Take off, sweep yaw 0 -> +90 -> -90 -> 0 deg, and land, on a running PX4 (no fixed ticks: see --px4-mission)."""
    from nexus.px4.mission import MissionError, Px4Mission

    mission = Px4Mission(url, altitude=altitude, hold_s=hold_s, yaw_hold_s=yaw_hold_s, timeout_s=timeout_s,
                         say=lambda text: click.echo(text))
    try:
        report = mission.run()
    except MissionError:
        for line in mission.report.lines():
            click.echo(f"  {line}")
        raise
    for line in report.lines():
        click.echo(f"  {line}")


from nexus.viz.commands import plot, view  # noqa: E402  (light: matplotlib and viser load inside the commands)
from nexus.commands.runs import runs  # noqa: E402
from nexus.commands.render_peer import render_peer  # noqa: E402
from nexus.commands.px4_compare import px4_compare  # noqa: E402
from nexus.commands.sweep import sweep  # noqa: E402
from nexus.commands.optimize import optimize  # noqa: E402
from nexus.commands.params import params  # noqa: E402

main.add_command(plot)
main.add_command(view)
main.add_command(runs)
main.add_command(render_peer)
px4.add_command(px4_compare)
main.add_command(sweep)
main.add_command(optimize)
main.add_command(params)


if __name__ == "__main__":
    main()
