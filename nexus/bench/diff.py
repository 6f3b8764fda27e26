"""Suite ``diff``: what a differentiable rollout costs per tick, forward and backward.

One rollout of the hover-and-climb (1 s, 250 ticks, altitude loss) on Featherstone: the
forward pass launched kernel by kernel as the tape records it, the backward pass over that
tape, and the forward replayed as a captured graph (what finite differences and plain
evaluations use). ``backward_over_forward`` is the backward pass's time over the taped
forward's (target <= 4 on the 2-core CPU); ``bytes_per_tick`` is the memory the rollout keeps
per tick (states, signals, Featherstone's per-state arrays, scratch, and their gradients).
"""

from __future__ import annotations

import time

TICKS = 250


def _best(call, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def run(device: str = "cpu", ticks: int = TICKS) -> dict:
    from nexus.diff import Rollout  # noqa: PLC0415

    rollout = Rollout(ticks, loss="altitude", device=device)
    rollout.forward(record=True)  # first runs: Featherstone allocates its per-state arrays
    rollout.backward()
    rollout.forward()
    rollout.forward()
    forward_s = _best(lambda: rollout.forward(record=True))
    backward_s = _best(rollout.backward)
    replay_s = _best(rollout.forward)
    per_tick = 1e6 / ticks
    result = {
        "suite": "diff",
        "device": device,
        "ticks": ticks,
        "forward_us_per_tick": forward_s * per_tick,
        "forward_backward_us_per_tick": (forward_s + backward_s) * per_tick,
        "backward_us_per_tick": backward_s * per_tick,
        "captured_forward_us_per_tick": replay_s * per_tick,
        "backward_over_forward": backward_s / forward_s,
        "bytes_per_tick": rollout.bytes_per_tick(),
    }
    result["targets_met"] = {"backward_over_forward": result["backward_over_forward"] <= 4.0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("forward (taped) [us/tick]", f"{result['forward_us_per_tick']:,.0f}"),
        ("backward [us/tick]", f"{result['backward_us_per_tick']:,.0f}"),
        ("forward + backward [us/tick]", f"{result['forward_backward_us_per_tick']:,.0f}"),
        ("forward replayed as a graph [us/tick]", f"{result['captured_forward_us_per_tick']:,.0f}"),
        ("backward over forward (target <= 4)", f"{result['backward_over_forward']:.2f}"),
        ("bytes per tick", f"{result['bytes_per_tick']:,.0f}"),
    ]
