"""The due-time rule every sensor samples by.

The first sample (taken at start-up, or on the first tick it runs) starts
the schedule; the k-th sample after it is due at ``first + k·period``. Times
are whole nanoseconds, so a due time that falls on a tick compares exactly
and a period that is not a whole number of ticks never drifts: a 100 Hz
sensor on a 250 Hz tick samples at 12, 20, 32, 40 ms, ... A period of 0
(rate 0, or a rate faster than the tick) samples every tick.

The schedule is engine-owned state (``wp.int64``, 3 values per world: first
sample time, index of the next sample, last sample time [ns]; see
:data:`SCHEDULE`), so a captured graph keeps it tick after tick and a snapshot
holds it.
"""

from __future__ import annotations

import warp as wp

from nexus.core.spec import StateVar

#: Slots of a schedule array.
FIRST_NS, NEXT_INDEX, LAST_NS = 0, 1, 2
SCHEDULE_SLOTS = 3
#: The state a sampler declares for its schedule: all zeros is "not started".
SCHEDULE = StateVar("schedule", wp.int64, (SCHEDULE_SLOTS,), 0,
                    "first sample time [ns], index of the next sample, last sample time [ns]")


def period_ns(rate: float, tick_ns: int) -> int:
    """Whole nanoseconds between samples; 0 means every tick (rate 0 or faster than the tick)."""
    if rate == 0.0:
        return 0
    period = round(1e9 / rate)
    return 0 if period <= tick_ns else int(period)


@wp.func
def take_if_due(
    now_ns: wp.int64,
    period: wp.int64,
    schedule_in: wp.array2d(dtype=wp.int64),
    schedule_out: wp.array2d(dtype=wp.int64),
    world: wp.int32,
) -> wp.int64:
    """Advance world ``world``'s schedule and return the time since the last sample [ns] if a sample is due now.

    Returns -1 when no sample is due (the schedule is copied unchanged), and 0 for the first sample.
    """
    index = schedule_in[world, NEXT_INDEX]
    first = schedule_in[world, FIRST_NS]
    last = schedule_in[world, LAST_NS]
    schedule_out[world, FIRST_NS] = first
    schedule_out[world, NEXT_INDEX] = index
    schedule_out[world, LAST_NS] = last
    if index == wp.int64(0):
        schedule_out[world, FIRST_NS] = now_ns
        schedule_out[world, NEXT_INDEX] = wp.int64(1)
        schedule_out[world, LAST_NS] = now_ns
        return wp.int64(0)
    if period > wp.int64(0):
        if now_ns < first + index * period:
            return wp.int64(-1)
        # Skip any due time already passed (only if ticks were missed), never drifting.
        while first + index * period <= now_ns:
            index = index + wp.int64(1)
    else:
        index = index + wp.int64(1)
    elapsed = now_ns - last
    schedule_out[world, NEXT_INDEX] = index
    schedule_out[world, LAST_NS] = now_ns
    return elapsed


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
