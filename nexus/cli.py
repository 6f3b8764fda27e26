"""The ``nexus`` command line: the group, its global options, and its commands.

This module only assembles the group. Each command is one module under
:mod:`nexus.commands` (the options several commands share are in
:mod:`nexus.commands.options`, the exit statuses in
:mod:`nexus.commands.exits`); a new command is a new module there, added
below. Every command imports what it flies or draws inside its function, so
``nexus --help`` stays light.
"""

from __future__ import annotations

import gc
import logging
import sys

import click

from nexus import __version__
from nexus.commands.bench import bench
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
from nexus.commands.export import export
from nexus.commands.optimize import optimize
from nexus.commands.params import params
from nexus.commands.plan import plan
from nexus.commands.plot import plot
from nexus.commands.px4 import px4
from nexus.commands.px4_compare import px4_compare
from nexus.commands.px4_mission import px4_mission
from nexus.commands.px4_params import px4_params
from nexus.commands.render_peer import render_peer
from nexus.commands.replay import replay
from nexus.commands.run import run
from nexus.commands.runs import runs
from nexus.commands.schema import schema
from nexus.commands.sweep import sweep
from nexus.commands.train import train
from nexus.commands.test import test
from nexus.commands.vehicle import vehicle
from nexus.commands.view import view


class NexusGroup(click.Group):
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


for command in (run, plan, replay, bench, schema, px4, plot, view, runs, render_peer, sweep, optimize, params,
                vehicle, export, train, test):
    main.add_command(command)
for command in (px4_params, px4_mission, px4_compare):
    px4.add_command(command)


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
