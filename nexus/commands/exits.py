"""Exit statuses of the ``nexus`` commands, and the one line an error is reported as."""

from __future__ import annotations

import errno
import os
import sys
import traceback

import click

from nexus.core.errors import BuildError, NexusError
from nexus.runtime.stopping import Terminated

#: Exit statuses. 0: the command did what was asked (a run ended by its mission or its
#: duration; a replay was identical). 1: a run failed while flying, a replay differed, or
#: something unexpected broke. 2: bad input (usage, a build error, a refused --out, a record
#: replay cannot use): nothing flew. 130: interrupted (SIGINT), the shell's 128 + 2; 143:
#: terminated (SIGTERM), 128 + 15.
EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED, EXIT_TERMINATED = 1, 2, 130, 143
#: Output piped into a reader that stopped (``nexus params | head``): the command stops without a word, with
#: the status a Unix tool the pipe's SIGPIPE ended has, 128 + 13.
EXIT_BROKEN_PIPE = 141
#: A many-world run in which some worlds went non-finite exits 64 + their count (at most 127: 63 or more).
EXIT_WORLDS_FAILED = 64


def worlds_failed_status(failed: int) -> int:
    """The exit status of a run that flew to its end with ``failed`` failed worlds (0 when none failed)."""
    return 0 if failed <= 0 else EXIT_WORLDS_FAILED + min(int(failed), 63)


def broken_pipe(error: BaseException) -> bool:
    """Whether ``error`` is a write to a pipe whose reader is gone (``| head`` read what it wanted)."""
    return isinstance(error, BrokenPipeError) or isinstance(error, OSError) and error.errno == errno.EPIPE


def quiet_pipe() -> None:
    """Point standard output at /dev/null: what is still buffered, and the interpreter's last flush, go
    nowhere instead of raising the broken pipe again. Standard error too, when it is the broken one."""
    for stream in (sys.stdout, sys.stderr):
        if stream is sys.stderr:
            try:
                stream.flush()
                continue  # still writable (stdout broke, stderr is a terminal): keep it
            except (OSError, ValueError):
                pass
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # a stream of no file (a test's capture)
            continue
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, fd)
        finally:
            os.close(devnull)


def flush_or_quiet() -> int | None:
    """Flush standard output and error at the command's end; :data:`EXIT_BROKEN_PIPE` when the reader left."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError) as error:  # ValueError: a stream closed already, nothing to flush
            if broken_pipe(error):
                quiet_pipe()
                return EXIT_BROKEN_PIPE
    return None


def exit_status(error: BaseException) -> int:
    """The exit status an error ends a command with (see ``EXIT_*``)."""

    if broken_pipe(error):
        return EXIT_BROKEN_PIPE
    if isinstance(error, Terminated):
        return EXIT_TERMINATED
    if isinstance(error, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_BAD_INPUT if isinstance(error, BuildError) else EXIT_FAILED


def report_error(ctx: click.Context, error: BaseException) -> int:
    """Print ``error`` once, as one line (with its traceback under ``--debug``); return the exit status.

    A broken pipe (the reader of the output stopped: ``| head``) prints nothing, as a Unix tool's."""

    if broken_pipe(error):
        quiet_pipe()
        return EXIT_BROKEN_PIPE
    debug = (ctx.find_root().obj or {}).get("debug", False)
    if debug:
        traceback.print_exception(error)
    if isinstance(error, NexusError):
        click.echo(f"error: {error}", err=True)
    else:
        hint = "" if debug else " (unexpected: run again with `nexus --debug ...` to see the traceback)"
        click.echo(f"error: {type(error).__name__}: {error}{hint}", err=True)
    return exit_status(error)
