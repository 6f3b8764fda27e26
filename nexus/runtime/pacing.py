"""Flying at the speed of the wall clock (``nexus run --realtime FACTOR``) without changing a bit of the flight.

A :class:`Pacer` sits between the loop's replays. After each replay it knows
how many ticks have been flown since it started; tick ``n`` is due at
``start + n · dt / FACTOR`` of wall time, and the pacer sleeps until then.
Nothing inside the ring reads the wall clock, so the ticks compute exactly the
bits they compute unpaced: only the moments between replays move.

Granularity: the pacer waits between replays, never inside one. A paced run
therefore replays fewer ticks per launch (:func:`paced_ticks_per_replay`): at
most ``FACTOR / FRAME_HZ`` seconds of sim time, a power of two up to the
loop's 16, so a viewer or a ground station sees the vehicle move at least
``FRAME_HZ`` times a second of wall time. The default flight at 250 Hz
replays 4 ticks (16 ms) at ``--realtime 1``, 8 at 2, and 16 from 4 up; a ring
with a host stage that works every tick (PX4's lockstep exchange) replays one
tick at a time anyway. Replaying K ticks at once or one at a time computes
the same bits (``tests/test_ticks_per_replay.py``).

Behind the clock: a replay that ends later than its due time flies on at
once. Once it is more than :data:`SLACK_S` late the pacer starts counting
again from that moment (the debt is dropped, so a flight that fell behind
never races to catch up), and when the machine has flown without a single
wait for :data:`NOTICE_AFTER_S` of wall time and still fell behind, it says
so once, with the speed it reached. Wall time a component spent waiting for
an outside process (PX4 connecting and booting: ``peer_wait_s``) is not the
machine falling behind: the pacer starts counting again after it, silently.

The sleep is an ordinary ``time.sleep``: SIGINT and SIGTERM interrupt it
(their handlers raise, :mod:`nexus.runtime.stopping`), so a paced run stops as
promptly as an unpaced one.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

from nexus.core.errors import BuildError

log = logging.getLogger("nexus")

#: The command line's name for the factor (errors name it).
OPTION = "--realtime"
#: Display rate [Hz of wall time] a paced replay keeps up with: a replay holds at most FACTOR / FRAME_HZ of sim time.
FRAME_HZ = 60.0
#: How late [s of wall time] a replay may end before the pacer stops owing the time and counts afresh from now.
SLACK_S = 0.1
#: Wall time [s] flown without one wait, and behind, after which the pacer says the machine cannot keep up.
NOTICE_AFTER_S = 1.0


def check_factor(factor, option: str = OPTION) -> float:
    """``factor`` as a float, or a one-line :class:`BuildError` naming ``option`` and what to give instead."""
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise BuildError(f"{option}{'' if option.endswith('=') else ' '}{factor!r}: give a number, the speed against "
                         "the wall clock (1: real time, 2: twice as fast)")
    value = float(factor)
    if not math.isfinite(value) or value <= 0.0:
        keyword = option.endswith("=")  # a keyword argument (realtime=) rather than an option (--realtime)
        unpaced = f"give {option}None" if keyword else f"leave {option} out"
        raise BuildError(f"{option}{'' if keyword else ' '}{factor:g}: give a factor above 0, the speed against the "
                         f"wall clock (1: real time, 2: twice as fast, 0.5: half speed); {unpaced} to fly as fast as "
                         "the machine can")
    return value


def paced_ticks_per_replay(factor: float, dt_ns: int, most: int) -> int:
    """Ticks per replay for a paced flight: the largest power of two up to ``most`` whose sim time,
    at ``factor`` times real time, lasts at most 1 / :data:`FRAME_HZ` of wall time (at least 1)."""
    ticks = 1
    while ticks * 2 <= most and ticks * 2 * dt_ns * 1e-9 <= factor / FRAME_HZ + 1e-12:
        ticks *= 2
    return ticks


class Pacer:
    """Holds a flight to ``factor`` times real time between replays (see the module doc).

    ``dt_ns``: one tick [ns]. ``excused()`` returns the wall time [s] the flight has spent waiting for
    outside processes so far (it only grows); the pacer counts afresh after it grows. ``clock`` and
    ``sleep`` are the wall clock [s] and the sleep (tests pass others).
    """

    def __init__(self, factor: float, dt_ns: int, *, excused: Callable[[], float] | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep,
                 option: str = OPTION):
        self.factor = check_factor(factor, option)
        self.option = option
        #: Wall time [s] one tick lasts when paced.
        self.tick_wall_s = dt_ns * 1e-9 / self.factor
        self.dt_s = dt_ns * 1e-9
        self.excused = excused
        self.clock, self.sleep = clock, sleep
        self.started = False
        #: Ticks flown since :meth:`start`.
        self.ticks = 0
        #: Wall time [s] spent asleep, wall time lost behind the clock (the debts dropped), times counted afresh.
        self.slept_s = 0.0
        self.behind_s = 0.0
        self.restarts = 0
        #: The slowest speed [x real time] of a stretch flown without a wait that fell behind (None: kept up).
        self.slowest: float | None = None
        self.warned = False

    def start(self) -> None:
        """Tick 0 is now."""
        self.started = True
        self._excused_seen = self.excused() if self.excused is not None else 0.0
        self.began = self.last = self.clock()
        self._count_from(self.began)

    def _count_from(self, now: float) -> None:
        self.anchor_wall, self.anchor_ticks = now, self.ticks
        self.stretch_wall, self.stretch_ticks = now, self.ticks

    def advanced(self, ticks: int) -> None:
        """``ticks`` more have been flown: wait until the last of them is due (or note that it is late)."""
        if not self.started:
            self.start()
        self.ticks += int(ticks)
        now = self.last = self.clock()
        if self.excused is not None:
            excused = self.excused()
            if excused != self._excused_seen:  # the flight waited for a peer: not a slow machine
                self._excused_seen = excused
                self._count_from(now)
                return
        due = self.anchor_wall + (self.ticks - self.anchor_ticks) * self.tick_wall_s
        if now < due:
            self.sleep(due - now)
            self.slept_s += due - now
            self.last = due
            self.stretch_wall, self.stretch_ticks = due, self.ticks
            return
        late = now - due
        if late <= SLACK_S:
            return
        self.behind_s += late
        self.restarts += 1
        stretch = now - self.stretch_wall
        if stretch >= NOTICE_AFTER_S:
            speed = (self.ticks - self.stretch_ticks) * self.dt_s / stretch
            self.slowest = speed if self.slowest is None else min(self.slowest, speed)
            if not self.warned:
                self.warned = True
                log.warning("%s %g: this machine cannot keep up: it flew %.2f s of sim time in %.2f s of wall time "
                            "(%.2fx real time, %.0f %% short of %gx); flying as fast as it can",
                            self.option, self.factor, speed * stretch, stretch, speed,
                            100.0 * (1.0 - speed / self.factor), self.factor)
        self.anchor_wall, self.anchor_ticks = now, self.ticks  # the debt is dropped; the stretch goes on

    @property
    def kept_up(self) -> bool:
        """No replay ended more than :data:`SLACK_S` after its due time."""
        return self.restarts == 0

    def stats(self) -> dict:
        """What the pacing did, for run.json: ``overall_factor`` is the sim time flown over the wall time it took
        [x real time], waits for a peer included; ``slowest_factor`` the slowest stretch of :data:`NOTICE_AFTER_S`
        or more flown without a wait that fell behind (None: none)."""
        wall = self.last - self.began if self.started else 0.0
        return {"factor": self.factor, "ticks": self.ticks, "slept_s": round(self.slept_s, 3),
                "behind_s": round(self.behind_s, 3), "restarts": self.restarts, "kept_up": self.kept_up,
                "overall_factor": round(self.ticks * self.dt_s / wall, 3) if wall > 0 else None,
                "slowest_factor": None if self.slowest is None else round(self.slowest, 3)}

    def summary(self) -> str:
        """One line for the end of a run."""
        if self.kept_up:
            return f"paced at {self.factor:g}x real time: kept up; slept {self.slept_s:.2f} s"
        overall = self.stats()["overall_factor"]
        speed = f"{overall:.2f}x over the flight" if overall is not None else "no flight"
        return (f"paced at {self.factor:g}x real time: fell behind by {self.behind_s:.2f} s in all ({speed}); "
                f"slept {self.slept_s:.2f} s")


def peer_waits(components) -> Callable[[], float] | None:
    """The wall time [s] ``components`` have spent waiting for outside processes, as a function for
    :class:`Pacer`'s ``excused`` (None when no component waits for one). A component that does declares
    ``peer_wait_s``, the wall time so far (PX4's controller: connecting and booting)."""
    waiting = [c for c in components if hasattr(c, "peer_wait_s")]
    if not waiting:
        return None
    return lambda: sum(float(c.peer_wait_s) for c in waiting)


__all__ = ["Pacer", "check_factor", "paced_ticks_per_replay", "peer_waits", "FRAME_HZ", "SLACK_S", "NOTICE_AFTER_S"]
