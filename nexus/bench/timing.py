"""Timing helpers shared by the suites: best-of-repeats wall time per call."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

import warp as wp


def seconds_per_call(call: Callable[[], None], calls: int, repeats: int = 5, device: str = "cpu") -> float:
    """Best of ``repeats`` mean wall time [s] of ``calls`` back-to-back calls.

    The best repeat is the least disturbed by the rest of the machine. On CUDA
    the device is synchronized before the clock stops.
    """
    call()  # warm caches and lazy loads outside the timed region
    wp.synchronize_device(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        wp.synchronize_device(device)
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def interleaved_best(calls: dict[str, Callable[[], None]], per_round: int, rounds: int = 6, device: str = "cpu") -> dict[str, float]:
    """Best seconds per call of each of ``calls``, timed in alternating rounds.

    Alternating keeps a busy machine from slowing one measurement and not the
    other, so their ratio holds even when the absolute figures wander.
    """
    best = {name: float("inf") for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            best[name] = min(best[name], seconds_per_call(call, per_round, repeats=1, device=device))
    return best


def alternating_best(rounds_of: dict[str, Callable[[], float]], rounds: int = 6) -> dict[str, float]:
    """Best of ``rounds`` of each measurement, the measurements taken in turn, round by round.

    Each callable runs one round and returns its own figure (seconds per
    tick), so it can keep set-up and clean-up (restoring a state) out of the
    time it reports. Both sides get the same number of rounds.
    """
    best = {name: float("inf") for name in rounds_of}
    for _ in range(rounds):
        for name, measure in rounds_of.items():
            best[name] = min(best[name], measure())
    return best


def bare_step_round(graph, arrays: list, ticks: int, device: str, clock: Callable[[], float]) -> float:
    """One round of the bare captured step: ``ticks`` launches of ``graph`` from the state as it is, in seconds
    per tick by ``clock``. The state ``arrays`` are put back afterwards, outside the timing, so the loop's next
    round starts where its last one left off (both sides of a ratio see the same state)."""
    saved = [wp.clone(array) for array in arrays]
    wp.synchronize_device(device)
    began = clock()
    for _ in range(ticks):
        wp.capture_launch(graph)
    wp.synchronize_device(device)
    seconds = (clock() - began) / ticks
    for array, copy in zip(arrays, saved):
        wp.copy(array, copy)
    return seconds


class TimedCall:
    """Wraps a host stage's ``run`` and adds up the wall time [s] and the number of its calls."""

    def __init__(self, run):
        self.run, self.seconds, self.calls = run, 0.0, 0

    def __call__(self, io) -> None:
        began = time.perf_counter()
        try:
            self.run(io)
        finally:
            self.seconds += time.perf_counter() - began
            self.calls += 1


def time_host_stages(stages: Iterable) -> dict[str, TimedCall]:
    """Wrap each host stage of ``stages`` (a plan's, before the loop runs) in a :class:`TimedCall`; name -> timer."""
    timers = {}
    for stage in stages:
        if stage.host:
            stage.run = timers[stage.name] = TimedCall(stage.run)
    return timers
