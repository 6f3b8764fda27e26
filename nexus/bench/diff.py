"""Suite ``diff``: what a differentiable rollout costs per tick, forward and backward, with and without checkpoints.

One rollout of the hover-and-climb (1 s, 250 ticks, altitude loss) on Featherstone: the
forward pass launched kernel by kernel as the tape records it, the backward pass over that
tape, and the forward replayed as a captured graph (what finite differences and plain
evaluations use). ``backward_over_forward`` is the backward pass's time over the taped
forward's (target <= 4 on the 2-core CPU). Then the same rollout with both the taped forward
and the backward pass captured and replayed (``captured_*``, what ``nexus optimize`` runs
from its third step): ``captured_speedup`` is kernel by kernel over replayed, forward and
backward together, and ``captured_gradients_equal`` says the replay's gradients are the
kernel-by-kernel tape's bit for bit; ``bytes_per_tick`` is the memory the rollout keeps
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

from nexus.diff import Rollout

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


def _check_captured(rollout, kinds=("plain", "tape", "backward")) -> None:
    """The replayed figures must be replays: a rollout that ran kernel by kernel instead would pass for one."""
    missing = set(kinds) - rollout.captured
    if missing:
        raise RuntimeError(f"the diff suite's rollout did not capture its {', '.join(sorted(missing))} graph(s)")


def run(device: str = "cpu", ticks: int = TICKS) -> dict:
    rollout = Rollout(ticks, loss="altitude", device=device, checkpoint=None, capture=False)
    rollout.forward(record=True)  # first runs
    rollout.backward()
    forward_s = _best(lambda: rollout.forward(record=True))
    backward_s = _best(rollout.backward)
    _, grads = rollout.value_and_gradients(NAMES)
    # The same rollout with its graphs: the plain forward, the taped forward and the backward pass, each
    # run once kernel by kernel, captured on its second run and replayed from the third.
    rollout.capture = rollout.capture_tape = True
    for _ in range(2):
        rollout.forward()
        rollout.value_and_gradients(NAMES)
    _check_captured(rollout)
    replay_s = _best(rollout.forward)
    captured_forward_s = _best(lambda: rollout.forward(record=True))
    captured_backward_s = _best(rollout.backward)
    _, captured_grads = rollout.value_and_gradients(NAMES)
    every = math.isqrt(ticks - 1) + 1
    checkpointed = Rollout(ticks, loss="altitude", device=device, checkpoint=every, capture=False)
    _, checkpointed_grads = checkpointed.value_and_gradients(NAMES)
    both_s = _best(lambda: checkpointed.value_and_gradients(NAMES))
    checkpointed.capture = checkpointed.capture_tape = True
    for _ in range(2):
        checkpointed.value_and_gradients(NAMES)
    _check_captured(checkpointed, ("tape", "backward"))
    captured_both_s = _best(lambda: checkpointed.value_and_gradients(NAMES))
    _, checkpointed_captured_grads = checkpointed.value_and_gradients(NAMES)
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
        "captured_taped_forward_us_per_tick": captured_forward_s * per_tick,
        "captured_backward_us_per_tick": captured_backward_s * per_tick,
        "captured_forward_backward_us_per_tick": (captured_forward_s + captured_backward_s) * per_tick,
        "captured_backward_over_forward": captured_backward_s / captured_forward_s,
        "captured_speedup": (forward_s + backward_s) / (captured_forward_s + captured_backward_s),
        "captured_gradients_equal": captured_grads == grads,
        "bytes_per_tick": rollout.bytes_per_tick(),
        "memory_estimate_per_tick": rollout.memory_estimate() / ticks,
        "checkpoint": every,
        "checkpointed_bytes_per_tick": checkpointed.bytes_per_tick(),
        "checkpointed_memory_estimate_per_tick": checkpointed.memory_estimate() / ticks,
        "checkpointed_forward_backward_us_per_tick": both_s * per_tick,
        "checkpointed_captured_forward_backward_us_per_tick": captured_both_s * per_tick,
        "checkpointed_gradients_equal": checkpointed_grads == grads == checkpointed_captured_grads,
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
        ("taped forward, replayed as a graph [us/tick]", f"{result['captured_taped_forward_us_per_tick']:,.0f}"),
        ("backward, replayed as a graph [us/tick]", f"{result['captured_backward_us_per_tick']:,.0f}"),
        ("forward + backward, replayed [us/tick]", f"{result['captured_forward_backward_us_per_tick']:,.0f}"),
        ("backward over forward, both replayed", f"{result['captured_backward_over_forward']:.2f}"),
        ("kernel by kernel over replayed (forward + backward)", f"{result['captured_speedup']:.1f}"),
        ("replayed gradients equal the kernel-by-kernel tape's",
         "yes" if result["captured_gradients_equal"] else "NO"),
        ("bytes per tick (arrays and gradients)", f"{result['bytes_per_tick']:,.0f}"),
        ("memory per tick, estimated (with objects and tape)", f"{result['memory_estimate_per_tick']:,.0f}"),
        (f"bytes per tick, checkpoint every {every} ticks", f"{result['checkpointed_bytes_per_tick']:,.0f}"),
        (f"memory per tick, estimated, checkpoint every {every}",
         f"{result['checkpointed_memory_estimate_per_tick']:,.0f}"),
        (f"forward + backward, checkpoint every {every} [us/tick]",
         f"{result['checkpointed_forward_backward_us_per_tick']:,.0f}"),
        (f"forward + backward, checkpoint every {every}, replayed [us/tick]",
         f"{result['checkpointed_captured_forward_backward_us_per_tick']:,.0f}"),
        ("checkpointed gradients (kernel by kernel and replayed) equal the full tape's",
         "yes" if result["checkpointed_gradients_equal"] else "NO"),
    ]
