"""The ``nexus`` command line: the group, its global options, and its commands.

This module only assembles the group. Each command is one module under
:mod:`nexus.commands` (the options several commands share are in
:mod:`nexus.commands.options`, the exit statuses in
:mod:`nexus.commands.exits`); a new command is a new module there and a row
of :data:`COMMANDS`. The group loads a command's module only when that
command runs (or shows its help), so ``nexus --help`` imports none of them
and a command module imports what it needs at its top.
"""

from __future__ import annotations

import gc
import logging
import sys

import click

from nexus import __version__
from nexus.commands.exits import (  # noqa: F401  (the exit statuses, as before, for scripts and tests)
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_WORLDS_FAILED,
    exit_status,
    flush_or_quiet,
    report_error,
    worlds_failed_status,
)
from nexus.commands.lazy_group import LazyGroup

#: Every command: name -> (the module and the click command in it, the one-line help ``nexus --help`` shows,
#: which is the command's own: ``tests/test_cli_lazy.py`` checks them).
COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("nexus.commands.bench:bench", "Measure the engine's speed as ratios taken within one run."),
    "export": ("nexus.commands.export:export",
               "Write the record of the run in RUN (and its camera frames) as an MCAP file that Foxglove and "
               "PlotJuggler open, or as CSV for spreadsheets."),
    "optimize": ("nexus.commands.optimize:optimize",
                 "Tune parameters on the differentiable rollout (Adam), write them as a USD layer, fly the mission."),
    "params": ("nexus.commands.params:params",
               "List every parameter name of a vehicle: unit, bounds and what reads it (sweep, variation, "
               "gradient)."),
    "plan": ("nexus.commands.plan:plan", "Print the stage plan of a run without flying it."),
    "plot": ("nexus.commands.plot:plot",
             "Write a report of the flight in RUN (or of the sweep in a `nexus sweep` folder): PNG figures and "
             "report.html."),
    "px4": ("nexus.commands.px4:px4", "PX4 SITL helpers: parameters for a vehicle, and a mission commander."),
    "render-peer": ("nexus.commands.render_peer:render_peer",
                    "Serve a run's render requests on stdin/stdout (a run starts and stops it; see docs/sensors.md)."),
    "replay": ("nexus.commands.replay:replay",
               "Rerun the flight in OUT open loop from its recorded controls, on the CPU, and compare bit for bit."),
    "run": ("nexus.commands.run:run", "Fly a vehicle in a scene and record the flight (or many: --worlds N)."),
    "runs": ("nexus.commands.runs:runs",
             "List the runs at or under FOLDER (default runs/): status, ticks, exit reason, size."),
    "schema": ("nexus.commands.schema:schema",
               "List the Nexus API schemas' attributes, or generate the USD schema files (generatedSchema.usda, "
               "plugInfo.json, components.json) from the component specs."),
    "sweep": ("nexus.commands.sweep:sweep",
              "Fly a grid or random draws of runs (RunConfig fields, USD attributes, PX4) and summarise them."),
    "test": ("nexus.commands.test:test", "Fly every scenario in PATH..."),
    "train": ("nexus.commands.train:train", "Train a policy with PPO (skrl) and export it as OUT/policy.onnx."),
    "vehicle": ("nexus.commands.vehicle:vehicle", "Make vehicle files."),
    "view": ("nexus.commands.view:view",
             "Replay the flight in RUN in 3D in the browser (time slider, play/pause) until Ctrl-C."),
}


class NexusGroup(LazyGroup):
    """Turns any error a command raises into one line and an exit status: never a traceback
    unless ``--debug`` asks for it. Output piped into a reader that stopped (``nexus params | head``) ends
    the command without a word, exit status 141, as a Unix tool's (:data:`EXIT_BROKEN_PIPE`)."""

    def main(self, *args, **kwargs):
        try:
            return super().main(*args, **kwargs)
        finally:  # what is still buffered goes out here: a reader gone by now is a broken pipe too
            if flush_or_quiet() is not None:
                sys.exit(EXIT_BROKEN_PIPE)

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


@click.group(cls=NexusGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"]})
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


def entry() -> None:
    """The ``nexus`` console script: :func:`main`, then an exit without the interpreter's last full garbage
    collection.

    By the time ``main`` returns or raises, every run has closed its files (its ``finally`` blocks), and all
    that is left is the interpreter's teardown. Its final collection walked every object Warp, Newton, USD
    and the solvers had made and took 5 to 13 s on a 2-core machine after ``done:`` (or after the
    ``interrupted`` line of a Ctrl-C) was printed; frozen objects are not walked, so the command ends when
    its last line is out. Only the console script does this: ``main`` itself, called in a process that goes
    on (tests, notebooks), leaves the collector alone.
    """
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    entry()
