"""A stage: one step of a component's work in the tick, of a known kind."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from nexus.core.signals import Read, Write

if TYPE_CHECKING:
    from nexus.core.component import Component
    from nexus.core.stage_io import StageIO


@dataclass
class Stage:
    """One unit of work in the ring.

    ``run(io)`` receives its buffers through ``io`` and must not allocate the
    signals it declares. A device stage only launches Warp work (it may be
    captured into a graph and replayed); a host stage (``host=True``) runs
    Python between graph replays and may read and write device signals through
    copies. A device stage that can end the run declares ``finishes=True`` and
    writes a non-zero value to its world's element of ``io.done`` (1: done, 2:
    failed); a host stage calls ``io.finish()``, which ends every world.

    ``start(io)``, when given, is host work the start-up runs once, just
    before the stage's own first run: it may read the stage's inputs (through
    copies) and fill buffers the stage's kernels read, such as a plan that
    depends on the first estimate. The buffers exist before capture, so a
    captured graph sees what ``start`` put in them.

    ``idle_ticks()``, when a host stage gives it, says how many of the coming
    ticks the stage will leave alone (run, it would read nothing it needs and
    write nothing): a camera between its frames. When every host stage of a
    captured ring gives it, the loop runs those ticks as one graph of the
    device stages alone instead of cutting every tick at the host stages.
    It is asked after the stage has run; before its first run it must say 0.
    """

    name: str
    kind: str
    run: Callable[[StageIO], None]
    reads: Sequence[Read] = ()
    writes: Sequence[Write] = ()
    host: bool = False
    finishes: bool = False
    start: Callable[[StageIO], None] | None = None
    #: A host stage that serves every world of a many-world ring in one call (reading and writing
    #: whole world axes, ``DevicePort.read_all``/``write_all``); other host stages serve one world.
    batched: bool = False
    idle_ticks: Callable[[], int] | None = None
    #: A device stage that has work only on the ticks its due-time schedule falls due
    #: (:mod:`nexus.core.schedule`): the name of its component's state variable that holds the schedule.
    #: On any other tick it must change nothing (its kernel copies its state in place and returns), so a
    #: one-world captured ring may skip its launch there. ``schedule_period()`` gives the period [ns] once the
    #: component is prepared (0: every tick, never skipped).
    schedule: str | None = None
    schedule_period: Callable[[], int] | None = None
    component: Component | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """``stage 'name' of 'component'``: how errors point at this stage."""
        owner = self.component.name if self.component is not None else "?"
        return f"{'host' if self.host else 'device'} stage '{self.name}' ({self.kind}) of '{owner}'"

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "host": self.host,
            "component": self.component.name if self.component else None,
        }
