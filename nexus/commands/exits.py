"""Exit statuses of the ``nexus`` commands, and the one line an error is reported as."""

from __future__ import annotations

import traceback

import click

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
    from nexus.runtime.stopping import Terminated

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
