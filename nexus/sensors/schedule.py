"""The due-time rule every sensor samples by.

The first sample (taken at start-up, or on the first tick it runs) starts
the schedule; the k-th sample after it is due at ``first + k·period``. Times
are whole nanoseconds, so a due time that falls on a tick compares exactly
and a period that is not a whole number of ticks never drifts: a 100 Hz
sensor on a 250 Hz tick samples at 12, 20, 32, 40 ms, ... A period of 0
(rate 0, or a rate faster than the tick) samples every tick.

The schedule lives on the device (``wp.int64``, 3 values: first sample time,
index of the next sample, last sample time [ns]) so a captured graph keeps it
tick after tick.
"""

from __future__ import annotations

import warp as wp

from nexus.core.errors import BuildError

#: Slots of a schedule array.
FIRST_NS, NEXT_INDEX, LAST_NS = 0, 1, 2
SCHEDULE_SLOTS = 3


def check_rate(rate: float, where: str) -> float:
    """The rate [Hz] if usable; a negative or non-finite rate fails the build, naming ``where``."""
    rate = float(rate)
    if not rate >= 0.0 or rate == float("inf"):
        raise BuildError(
            f"{where}: nexus:rate is {rate} Hz; a sensor's rate must be 0 (sample every tick) "
            "or a positive number of samples per second"
        )
    return rate


def period_ns(rate: float, tick_ns: int) -> int:
    """Whole nanoseconds between samples; 0 means every tick (rate 0 or faster than the tick)."""
    if rate == 0.0:
        return 0
    period = round(1e9 / rate)
    return 0 if period <= tick_ns else int(period)


def new_schedule(device: str) -> wp.array:
    """A schedule that has not started: its next sample is the first."""
    return wp.zeros(SCHEDULE_SLOTS, dtype=wp.int64, device=device)


@wp.func
def take_if_due(now_ns: wp.int64, period: wp.int64, schedule: wp.array(dtype=wp.int64)) -> wp.int64:
    """Advance ``schedule`` and return the time since the last sample [ns] if a sample is due now.

    Returns -1 when no sample is due, and 0 for the first sample.
    """
    index = schedule[NEXT_INDEX]
    if index == wp.int64(0):
        schedule[FIRST_NS] = now_ns
        schedule[NEXT_INDEX] = wp.int64(1)
        schedule[LAST_NS] = now_ns
        return wp.int64(0)
    first = schedule[FIRST_NS]
    if period > wp.int64(0):
        if now_ns < first + index * period:
            return wp.int64(-1)
        # Skip any due time already passed (only if ticks were missed), never drifting.
        while first + index * period <= now_ns:
            index = index + wp.int64(1)
    else:
        index = index + wp.int64(1)
    elapsed = now_ns - schedule[LAST_NS]
    schedule[NEXT_INDEX] = index
    schedule[LAST_NS] = now_ns
    return elapsed
