"""Suite ``diff``: what a differentiable rollout costs per tick, forward and backward, with and without checkpoints.

One rollout of the hover-and-climb (1 s, 250 ticks, altitude loss) on Featherstone: the
forward pass launched kernel by kernel as the tape records it, the backward pass over that
tape, and the forward replayed as a captured graph (what finite differences and plain
evaluations use). ``backward_over_forward`` is the backward pass's time over the taped
forward's (target <= 4 on the 2-core CPU); ``bytes_per_tick`` is the memory the rollout keeps
per tick (states, signals, Featherstone's per-state arrays, scratch, and their gradients);
``memory_estimate_per_tick`` adds the arrays' objects and the tape (``Rollout.memory_estimate``).

The same rollout with ``checkpoint`` = ⌈√ticks⌉ keeps one segment's arrays and a checkpoint
per segment (``checkpointed_bytes_per_tick``); its backward pass runs every segment but the
last again (``checkpointed_forward_backward_us_per_tick``). ``checkpointed_gradients_equal``:
its gradients equal the full tape's, bit for bit.
"""

from __future__ import annotations

import math
import time

TICKS = 250
#: Parameters whose gradients the checkpointed rollout must reproduce.
NAMES = ("pid.kp_z", "pid.kd_z", "mass", "rotor1.kt", "esc.tau_up", "init.vz")


def _best(call, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best


def run(device: str = "cpu", ticks: int = TICKS) -> dict:
    from nexus.diff import Rollout  # noqa: PLC0415

    rollout = Rollout(ticks, loss="altitude", device=device, checkpoint=None)
    rollout.forward(record=True)  # first runs
    rollout.backward()
    rollout.forward()
    rollout.forward()
    forward_s = _best(lambda: rollout.forward(record=True))
    backward_s = _best(rollout.backward)
    replay_s = _best(rollout.forward)
    _, grads = rollout.value_and_gradients(NAMES)
    every = math.isqrt(ticks - 1) + 1
    checkpointed = Rollout(ticks, loss="altitude", device=device, checkpoint=every)
    _, checkpointed_grads = checkpointed.value_and_gradients(NAMES)
    both_s = _best(lambda: checkpointed.value_and_gradients(NAMES))
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
        "memory_estimate_per_tick": rollout.memory_estimate() / ticks,
        "checkpoint": every,
        "checkpointed_bytes_per_tick": checkpointed.bytes_per_tick(),
        "checkpointed_memory_estimate_per_tick": checkpointed.memory_estimate() / ticks,
        "checkpointed_forward_backward_us_per_tick": both_s * per_tick,
        "checkpointed_gradients_equal": checkpointed_grads == grads,
    }
    result["targets_met"] = {"backward_over_forward": result["backward_over_forward"] <= 4.0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    every = result["checkpoint"]
    return [
        ("forward (taped) [us/tick]", f"{result['forward_us_per_tick']:,.0f}"),
        ("backward [us/tick]", f"{result['backward_us_per_tick']:,.0f}"),
        ("forward + backward [us/tick]", f"{result['forward_backward_us_per_tick']:,.0f}"),
        ("forward replayed as a graph [us/tick]", f"{result['captured_forward_us_per_tick']:,.0f}"),
        ("backward over forward (target <= 4)", f"{result['backward_over_forward']:.2f}"),
        ("bytes per tick (arrays and gradients)", f"{result['bytes_per_tick']:,.0f}"),
        ("memory per tick, estimated (with objects and tape)", f"{result['memory_estimate_per_tick']:,.0f}"),
        (f"bytes per tick, checkpoint every {every} ticks", f"{result['checkpointed_bytes_per_tick']:,.0f}"),
        (f"memory per tick, estimated, checkpoint every {every}",
         f"{result['checkpointed_memory_estimate_per_tick']:,.0f}"),
        (f"forward + backward, checkpoint every {every} [us/tick]",
         f"{result['checkpointed_forward_backward_us_per_tick']:,.0f}"),
        ("checkpointed gradients equal the full tape's", "yes" if result["checkpointed_gradients_equal"] else "NO"),
    ]
