"""Build, start, fly and close one flight, as one object: how every caller flies.

``nexus run`` (:func:`nexus.runtime.run.run_flight`, and so the sweep task and
``nexus replay``) and every benchmark suite fly the same way: the flight built
from a :class:`~nexus.runtime.config.RunConfig` (on its ``device``), its record
written part by part, start-up settling the vehicle before the clock, and the
loop, the render peer and the record closed whatever happens.
:class:`FlightSession` does that once::

    with FlightSession(RunConfig(device="cpu"), folder / "record.parquet") as session:
        wall = session.timed(ticks)          # [s] the flight, record drained, device synchronised
        rtf = session.loop.sim_time / wall

``run_flight`` adds what only a run needs around the same steps, through the
session's hooks: run.json at every drain and at the end, the log, the stop
signals and the summary.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import warp as wp

from nexus.core import Component
from nexus.core.device import resolve_device
from nexus.core.errors import BuildError
from nexus.record.writer import RecordWriter
from nexus.render.preview import write_previews
from nexus.runtime.flight import Flight, build_flight, fly
from nexus.runtime.config import RunConfig
from nexus.runtime.pacing import Pacer, peer_waits
from nexus.runtime.startup import start

log = logging.getLogger("nexus")


class FlightSession:
    """One flight of ``options`` on ``options.device`` (resolved: ``auto`` takes the GPU when present).

    ``record``: the record folder's path (None, or a flight of no recorder: no record).
    ``flight``: a flight already built (from ``options``, on the same device) to fly
    instead of building one; the session closes it like its own. ``replace_controller``,
    ``extra_components`` and ``variation`` go to :func:`~nexus.runtime.flight.build_flight`.
    ``frames``: where a flight with cameras keeps its frames (None: not kept); ``previews``:
    MP4 previews of them written at close (a failure is only a warning).
    ``on_drain`` and ``shield`` go to the :class:`~nexus.record.writer.RecordWriter`.

    Hooks, each given the flight: ``on_built`` right after the build (before the
    record's first part is written), ``before_start`` after the record and frames are
    set up and before start-up (a bench wraps host stages in timers there).

    ``with`` builds and starts on entering and closes on leaving; :meth:`open` and
    :meth:`close` do the same for a caller that must see an open's failure before the
    close (``run_flight``). :meth:`close` is idempotent: the flight stays readable after it.
    """

    def __init__(self, options: RunConfig, record: Path | None = None, *, flight: Flight | None = None,
                 replace_controller: Component | None = None, extra_components: Sequence[Component] = (),
                 variation: Sequence[dict] | None = None, frames: Path | None = None, previews: bool = False,
                 on_drain: Callable[[int, int], None] | None = None,
                 shield: Callable[[], AbstractContextManager] = nullcontext,
                 on_built: Callable[[Flight], None] | None = None,
                 before_start: Callable[[Flight], None] | None = None):
        self.options = options
        self.record = None if record is None else Path(record)
        self.flight = flight
        self.replace_controller, self.extra_components, self.variation = replace_controller, extra_components, variation
        self.frames, self.previews = frames, previews
        self.on_drain, self.shield = on_drain, shield
        self.on_built, self.before_start = on_built, before_start
        #: The Warp device flown on (the options' device, resolved), once :meth:`open` has run.
        self.device: str | None = None
        self.writer: RecordWriter | None = None
        #: Where start-up settled the base (world ENU [m]).
        self.origin = None
        #: The preview files written at close (None: none asked for, or writing them failed).
        self.preview_files: list[Path] | None = None
        #: With ``options.realtime``: what holds the flight to the wall clock between replays (made at open).
        self.pacer = None
        self._closed = False

    def open(self) -> FlightSession:
        """Build (unless a flight was given), set up the record and frames, and start; leaves closing to the caller."""
        self.device = resolve_device(self.options.device)
        if self.flight is None:
            self.flight = build_flight(self.options, self.device, replace_controller=self.replace_controller,
                                       extra_components=self.extra_components, variation=self.variation)
        elif resolve_device(self.flight.device) != self.device:
            raise BuildError(f"the flight given was built on {self.flight.device} but its configuration's device is "
                             f"{self.options.device} ({self.device}); give the configuration the flight's device")
        if self.on_built is not None:
            self.on_built(self.flight)
        if self.record is not None and self.flight.recorder is not None:
            self.writer = RecordWriter(self.record, self.flight.recorder, on_drain=self.on_drain, shield=self.shield)
        if self.frames is not None and self.flight.render is not None:
            self.flight.render.record_to(self.frames)
        if self.before_start is not None:
            self.before_start(self.flight)
        self.origin = start(self.flight.loop, self.flight.vehicle.plant)
        if self.options.realtime is not None:
            self.pacer = Pacer(self.options.realtime, self.flight.loop.dt_ns,
                               excused=peer_waits(self.flight.loop.components))
        return self

    def __enter__(self) -> FlightSession:
        try:
            return self.open()
        except BaseException:
            try:
                self.close()
            except Exception:  # the open's own failure is the one to report
                log.exception("closing the flight after a failed start failed too")
            raise

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def loop(self):
        return self.flight.loop

    @property
    def vehicle(self):
        return self.flight.vehicle

    def fly(self, ticks: int, on_progress=None) -> bool:
        """Fly up to ``ticks`` ticks (the loop's replays, then tick by tick); True when every world is done.

        With ``options.realtime`` each replay waits until its ticks are due on the wall clock (the pacer
        starts counting at the first call)."""
        return fly(self.flight, self.writer, ticks, on_progress=on_progress, pacer=self.pacer)

    def timed(self, ticks: int, on_progress=None) -> float:
        """Wall seconds [s] of :meth:`fly` with the record drained and the device synchronised after it."""
        began = time.perf_counter()
        self.fly(ticks, on_progress=on_progress)
        if self.writer is not None:
            self.writer.drain()
        wp.synchronize_device(self.device)
        return time.perf_counter() - began

    def close(self) -> None:
        """Close the loop, stop the render peer (its frames written, then the previews), drain the record.

        Each once, the later ones even if an earlier one fails; the first failure is raised
        after all have run (a :class:`~nexus.record.durable.WriteFailed` from the record's last drain).
        """
        if self._closed or self.flight is None:
            return
        self._closed = True
        flight = self.flight
        try:
            flight.loop.close()
        finally:
            try:
                if flight.render is not None:
                    flight.render.close()  # writes the frames it kept, stops the peer
                    self._write_previews()
            finally:
                if self.writer is not None:
                    self.writer.close()

    def _write_previews(self) -> None:
        """MP4 previews of the cameras (the Parquet frames stay the record): never worth the flight."""
        if not self.previews or self.frames is None:
            return
        try:
            self.preview_files = list(write_previews(self.frames))
        except Exception as error:
            log.warning("could not write the camera previews in %s: %s", self.frames, error)


__all__ = ["FlightSession"]
