"""Build, start, fly and close one flight, as one object: how code other than ``nexus run`` flies.

Every benchmark suite flies the same way ``nexus run`` does (the flight built
from a :class:`~nexus.runtime.flight.RunConfig`, its record written part by part,
start-up settling the vehicle before the clock), and must close the loop and
the render peer whatever happens. :class:`FlightSession` does that once::

    with FlightSession(RunConfig(), "cpu", folder / "record.parquet") as session:
        wall = session.timed(ticks)          # [s] the flight, record drained, device synchronised
        rtf = session.loop.sim_time / wall

``nexus run`` itself (:func:`nexus.runtime.run.run_flight`) adds what only a run
needs around the same steps: run.json at every drain, the log, the stop
signals and the summary.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import warp as wp

from nexus.runtime.flight import Flight, RunConfig, build_flight, fly
from nexus.record.writer import RecordWriter
from nexus.runtime.startup import start


class FlightSession:
    """One flight of ``options`` on ``device``, recorded to ``record`` (a record folder's path).

    ``frames``: where a flight with cameras keeps its frames (None: not kept).
    ``before_start(flight)`` runs after the build and before start-up (a bench
    wraps host stages in timers there). Entering builds and starts; leaving
    drains the record and closes the loop and the render peer, once each.
    """

    def __init__(self, options: RunConfig, device: str, record: Path, *, frames: Path | None = None,
                 before_start: Callable[[Flight], None] | None = None):
        self.options, self.device, self.record = options, device, Path(record)
        self.frames, self.before_start = frames, before_start
        self.flight: Flight | None = None
        self.writer: RecordWriter | None = None
        #: Where start-up settled the base (world ENU [m]).
        self.origin = None
        self._closed = False

    def __enter__(self) -> FlightSession:
        self.flight = build_flight(self.options, self.device)
        try:
            self.writer = RecordWriter(self.record, self.flight.recorder)
            if self.frames is not None and self.flight.render is not None:
                self.flight.render.record_to(self.frames)
            if self.before_start is not None:
                self.before_start(self.flight)
            self.origin = start(self.flight.loop, self.flight.vehicle.plant)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def loop(self):
        return self.flight.loop

    @property
    def vehicle(self):
        return self.flight.vehicle

    def fly(self, ticks: int, on_progress=None) -> bool:
        """Fly up to ``ticks`` ticks (the loop's replays, then tick by tick); True when every world is done."""
        return fly(self.flight, self.writer, ticks, on_progress=on_progress)

    def timed(self, ticks: int, on_progress=None) -> float:
        """Wall seconds [s] of :meth:`fly` with the record drained and the device synchronised after it."""
        began = time.perf_counter()
        self.fly(ticks, on_progress=on_progress)
        self.writer.drain()
        wp.synchronize_device(self.device)
        return time.perf_counter() - began

    def close(self) -> None:
        """Drain the record, close the loop, stop the render peer (each once; the later ones even if one fails)."""
        if self._closed or self.flight is None:
            return
        self._closed = True
        try:
            if self.writer is not None:
                self.writer.close()
        finally:
            try:
                self.flight.loop.close()
            finally:
                if self.flight.render is not None:
                    self.flight.render.close()


__all__ = ["FlightSession"]
