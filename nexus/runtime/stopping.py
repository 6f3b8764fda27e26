"""Stopping a run on SIGINT or SIGTERM without losing its record.

The first signal raises in the main thread (``KeyboardInterrupt`` for SIGINT,
:class:`Terminated` for SIGTERM), so every ``finally`` on the way out runs:
the record is drained, run.json written, the PX4 link, mission commander and
viewer closed. While a drain is writing, or once the run is closing, a signal
is held instead: a second Ctrl-C or ``kill`` cannot cut a part or run.json
in half. A signal held during a drain is raised when the drain is done. The exit status
a stop ends the command with is decided in one place, :mod:`nexus.cli`
(``EXIT_INTERRUPTED``, ``EXIT_TERMINATED``).
"""

from __future__ import annotations

import logging
import signal
import threading
from contextlib import contextmanager

log = logging.getLogger("nexus")


class Terminated(KeyboardInterrupt):
    """The process was asked to end (SIGTERM): a CI time-out, ``docker stop``, systemd, a Ray worker's end.

    A ``KeyboardInterrupt`` so that everything that already cleans up after
    Ctrl-C cleans up after SIGTERM too.
    """


def stop_reason(error: BaseException) -> str:
    """The run's exit reason for a stop: ``terminated`` (SIGTERM) or ``interrupted`` (SIGINT)."""
    return "terminated" if isinstance(error, Terminated) else "interrupted"


class StopSignals:
    """While entered (in the main thread), SIGINT and SIGTERM stop the run as described above."""

    HANDLED = (signal.SIGINT, signal.SIGTERM)

    def __init__(self):
        self.depth = 0
        self.closing = False
        self.held: int | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for number in self.HANDLED:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        # Kept, not cleared: two of these exited out of order (the outer first, as generators and objects closed
        # in the order they were opened can do) leave the outer's handler put back by the inner's exit. Once
        # exited, a handler passes each signal on to the one it replaced, so a leaked one still stops the process
        # the way it would have been stopped without it.
        self.exited = True

    exited = False

    def _handle(self, number: int, frame) -> None:
        if self.exited:
            return _pass_on(self._previous.get(number, signal.SIG_DFL), number, frame)
        if self.depth or self.closing:
            self.held = self.held or number
            log.warning("%s received while the record is being written: finishing that first",
                        signal.Signals(number).name)
            return
        raise _exception(number)

    @contextmanager
    def held_back(self):
        """Hold signals for the duration (a drain); raise a held one at the end, unless closing."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
        if not self.depth and self.held is not None and not self.closing:
            number, self.held = self.held, None
            raise _exception(number)

    def close(self) -> None:
        """From here on signals are held for good: the run is writing its last files."""
        self.closing = True


def _pass_on(handler, number: int, frame) -> None:
    """What ``handler`` (a disposition ``signal.signal`` returned) would have done with the signal."""
    if callable(handler):
        return handler(number, frame)
    if handler == signal.SIG_IGN:
        return None
    raise _exception(number)  # SIG_DFL, or None (set outside Python): the stop Python's own handler gives


def _exception(number: int) -> KeyboardInterrupt:
    if number == signal.SIGTERM:
        return Terminated("terminated by SIGTERM")
    return KeyboardInterrupt()
