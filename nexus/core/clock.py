"""The clock: opens every tick by adding one control tick inside the graph.

It writes ``time`` [s] (``wp.float64``), ``time_ns`` [ns] (``wp.int64``) and
``tick`` (``wp.int64``, the number of ticks begun), the device step counter
that noise kernels offset their random streams by, so a replayed graph draws
fresh noise each tick. Time is kept in whole nanoseconds and converted, so it
never accumulates rounding error.

Each world has its own clock (one thread per world): a world whose done flag
is set stops while the others fly on.

It also writes ``running`` (``wp.int32``): 1 for a tick the world flies, 0 for
a tick replayed after a device stage set the world's done flag. A graph of K
ticks cannot stop half way, so the ticks after "done" still run their stages;
the clock stops counting for them (``tick``, ``time`` and ``time_ns`` stay
those of the tick that ended the run) and the record skips them, so nothing a
run reports changes after "done".
"""

from __future__ import annotations

import math

import numpy as np

import warp as wp

from nexus.core.component import Component
from nexus.core.schedule import DueTable, due_table, set_due_flags
from nexus.core.signals import Write
from nexus.core.stage import Stage
from nexus.core.stage_io import StageIO

CLOCK_NAME = "clock"
#: A time [ns] no run reaches: what an event that never comes is scheduled at.
NEVER_NS = 2**63 - 1


def at_ns(seconds: float) -> int:
    """Sim time ``seconds`` [s] as whole nanoseconds, the clock's ``time_ns``; infinity is :data:`NEVER_NS`."""
    return NEVER_NS if math.isinf(seconds) else int(round(seconds * 1e9))


@wp.kernel
def advance_clock(
    dt_ns: wp.int64,
    done: wp.array(dtype=wp.int32),
    tick: wp.array(dtype=wp.int64),
    time_ns: wp.array(dtype=wp.int64),
    time: wp.array(dtype=wp.float64),
    running: wp.array(dtype=wp.int32),
    due: DueTable,
):
    world = wp.tid()
    if done[world] != 0:
        running[world] = 0
        set_due_flags(due, time_ns[world], 1)
        return
    running[world] = 1
    count = tick[world] + wp.int64(1)
    tick[world] = count
    now_ns = count * dt_ns
    time_ns[world] = now_ns
    time[world] = wp.float64(now_ns) / wp.float64(1.0e9)
    set_due_flags(due, now_ns, 0)


class Clock(Component):
    """Added by the loop as the first component of every ring."""

    def __init__(self, dt_ns: int):
        super().__init__(CLOCK_NAME)
        if dt_ns <= 0:
            raise ValueError(f"the control tick must be positive, got {dt_ns} ns")
        self.dt_ns = int(dt_ns)
        #: The loop's done flags (``wp.int32``, one per world), handed over before capture.
        self.done = None
        self.worlds = 1
        #: The scheduled stages' flags it sets each tick (:mod:`nexus.core.schedule`); empty unless the loop
        #: hands it a table before capture (a one-world captured ring on the CPU).
        self.due: DueTable | None = None

    def stages(self) -> list[Stage]:
        return [
            Stage(
                "clock",
                "clock",
                self._advance,
                writes=(
                    Write("time", wp.float64, (1,)),
                    Write("time_ns", wp.int64, (1,)),
                    Write("tick", wp.int64, (1,)),
                    Write("running", wp.int32, (1,)),
                ),
            )
        ]

    def prepare(self, ctx) -> None:
        if self.done is None:  # a clock outside a loop: nothing ever ends its run
            self.done = wp.zeros(ctx.worlds, dtype=wp.int32, device=ctx.device)
        self.worlds = int(self.done.shape[0])
        self.due = due_table([], ctx.device)  # the loop hands over its table after every component is prepared

    def tables(self, ticks: int, worlds: int, device: str) -> dict[str, wp.array]:
        """What this clock writes on ticks 1 .. ``ticks`` when no world ends, one row per tick (leading axis:
        ticks, then worlds): ``tick``, ``time_ns``, ``time`` and ``running``, the same values the kernel writes.
        A taped run (:mod:`nexus.core.taped`) reads them instead of running the clock: they depend on no
        parameter and carry no gradient."""
        count = np.arange(1, int(ticks) + 1, dtype=np.int64)
        now_ns = count * self.dt_ns
        per_world = lambda values: np.ascontiguousarray(np.repeat(values[:, None], int(worlds), 1))  # noqa: E731
        return {
            "tick": wp.array(per_world(count), dtype=wp.int64, device=device),
            "time_ns": wp.array(per_world(now_ns), dtype=wp.int64, device=device),
            "time": wp.array(per_world(now_ns.astype(np.float64) / 1.0e9), dtype=wp.float64, device=device),
            "running": wp.array(per_world(np.ones(int(ticks), dtype=np.int32)), dtype=wp.int32, device=device),
        }

    def _advance(self, io: StageIO) -> None:
        wp.launch(
            advance_clock,
            dim=self.worlds,
            inputs=[wp.int64(self.dt_ns), self.done],
            outputs=[io["tick"], io["time_ns"], io["time"], io["running"], self.due],
            device=io.device,
        )
