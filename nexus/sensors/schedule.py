"""The sensors' side of the due-time rule (:mod:`nexus.core.schedule`): the period for a rate, and the clock a
sampling kernel reads.

Every sensor samples by the core's rule: the first sample starts the schedule, the k-th after it is due at
``first + k·period`` [ns], a period of 0 (rate 0, or a rate faster than the tick) samples every tick.
"""

from __future__ import annotations

import warp as wp

from nexus.core.schedule import FIRST_NS, LAST_NS, NEXT_INDEX, SCHEDULE, SCHEDULE_SLOTS, take_if_due


def period_ns(rate: float, tick_ns: int) -> int:
    """Whole nanoseconds between samples; 0 means every tick (rate 0 or faster than the tick)."""
    if rate == 0.0:
        return 0
    period = round(1e9 / rate)
    return 0 if period <= tick_ns else int(period)


@wp.struct
class SampleClock:
    """The clock and the schedule a sampling kernel reads, as one argument (the same six for every sampler)."""

    #: The tick's sim time [s], per world.
    time: wp.array(dtype=wp.float64)
    #: The tick's sim time [ns], per world: due times compare these.
    time_ns: wp.array(dtype=wp.int64)
    #: Ticks begun, per world: noise kernels offset their random streams by it.
    tick: wp.array(dtype=wp.int64)
    #: Whole nanoseconds between samples; 0 samples every tick.
    period_ns: wp.int64
    #: The schedule state before and after this tick (see :data:`SCHEDULE`).
    schedule_in: wp.array2d(dtype=wp.int64)
    schedule_out: wp.array2d(dtype=wp.int64)


def sample_clock(time, time_ns, tick, period: int, schedule_in, schedule_out) -> SampleClock:
    """A :class:`SampleClock` over the given arrays (``period`` [ns])."""
    clock = SampleClock()
    clock.time = time
    clock.time_ns = time_ns
    clock.tick = tick
    clock.period_ns = wp.int64(period)
    clock.schedule_in = schedule_in
    clock.schedule_out = schedule_out
    return clock


@wp.func
def due(clock: SampleClock, world: wp.int32) -> wp.int64:
    """:func:`take_if_due` for world ``world`` of ``clock``: ns since the last sample, or -1 when none is due."""
    return take_if_due(clock.time_ns[world], clock.period_ns, clock.schedule_in, clock.schedule_out, world)


__all__ = ["FIRST_NS", "LAST_NS", "NEXT_INDEX", "SCHEDULE", "SCHEDULE_SLOTS", "SampleClock", "due", "period_ns",
           "sample_clock", "take_if_due"]
