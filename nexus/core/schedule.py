"""The due-time rule a stage samples by, and the per-tick flags that let a captured ring skip it between samples.

The first sample (taken at start-up, or on the first tick the stage runs)
starts the schedule; the k-th sample after it is due at ``first + k·period``.
Times are whole nanoseconds, so a due time that falls on a tick compares
exactly and a period that is not a whole number of ticks never drifts: a
100 Hz sensor on a 250 Hz tick samples at 12, 20, 32, 40 ms, ... A period of
0 samples every tick.

The schedule is engine-owned state (``wp.int64``, 3 values per world: first
sample time, index of the next sample, last sample time [ns]; see
:data:`SCHEDULE`), so a captured graph keeps it tick after tick and a snapshot
holds it.

**Skipping the ticks between samples.** On the CPU a kernel launch costs
about 0.1 µs even when its kernel finds nothing due and returns, which is
most ticks of a 10 Hz GPS on a 250 Hz ring. A device stage that declares its
schedule (:attr:`nexus.core.stage.Stage.schedule`) and changes nothing on a
tick with no sample due is captured under a conditional node
(``wp.capture_if``) whose flag the clock's kernel sets each tick from the
same rule (:func:`set_due_flags`), so its launch is skipped on those ticks.
The flag is computed from the schedule the stage itself will read, with the
same comparison, so a skipped tick is one the stage would have left alone:
the bits do not change (``tests/core/test_due_flags.py``).
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


@wp.func
def falls_due(now_ns: wp.int64, period: wp.int64, first: wp.int64, index: wp.int64) -> wp.bool:
    """Whether a sample is due at ``now_ns`` [ns] on a schedule (``first``, ``index``) of ``period`` [ns]."""
    if index == wp.int64(0) or period <= wp.int64(0):
        return True
    return now_ns >= first + index * period


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
    if not falls_due(now_ns, period, first, index):
        return wp.int64(-1)
    if period > wp.int64(0):
        # Skip any due time already passed (only if ticks were missed), never drifting.
        while first + index * period <= now_ns:
            index = index + wp.int64(1)
    else:
        index = index + wp.int64(1)
    elapsed = now_ns - last
    schedule_out[world, NEXT_INDEX] = index
    schedule_out[world, LAST_NS] = now_ns
    return elapsed


@wp.func_native("return ((const long long*)address)[index];")
def int64_at(address: wp.uint64, index: wp.int32) -> wp.int64:
    """The 64-bit integer ``index`` of the buffer at device ``address``."""
    ...


@wp.struct
class DueTable:
    """The scheduled stages of a one-world ring, one entry each, for the clock's kernel."""

    #: Address of each stage's schedule (world 0's row of its ``schedule`` state).
    schedules: wp.array(dtype=wp.uint64)
    #: Each stage's period [ns] (above 0: a stage that samples every tick is never skipped).
    periods: wp.array(dtype=wp.int64)
    #: Each stage's flag this tick: 1 runs it, 0 skips its launch (read by the stage's conditional node).
    flags: wp.array(dtype=wp.int32)


@wp.func
def set_due_flags(table: DueTable, now_ns: wp.int64, stopped: wp.int32):
    """Each entry's flag for the tick at ``now_ns`` [ns]; every flag 1 once the world has ``stopped`` (its
    stages then decide for themselves, as they do in a ring without flags)."""
    for k in range(table.flags.shape[0]):
        address = table.schedules[k]
        due = falls_due(now_ns, table.periods[k], int64_at(address, FIRST_NS), int64_at(address, NEXT_INDEX))
        table.flags[k] = wp.where(due or stopped != 0, 1, 0)


def due_table(entries: list[tuple[int, int]], device) -> DueTable:
    """A :class:`DueTable` of ``entries`` (schedule address, period [ns]); empty for none."""
    table = DueTable()
    table.schedules = wp.array([address for address, _ in entries], dtype=wp.uint64, device=device)
    table.periods = wp.array([period for _, period in entries], dtype=wp.int64, device=device)
    table.flags = wp.ones(len(entries), dtype=wp.int32, device=device)
    return table


__all__ = ["DueTable", "FIRST_NS", "LAST_NS", "NEXT_INDEX", "SCHEDULE", "SCHEDULE_SLOTS", "due_table", "falls_due",
           "int64_at", "set_due_flags", "take_if_due"]
