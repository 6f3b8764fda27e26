"""What one captured operation costs on this machine now: a trivial launch and a memset, replayed in a graph.

A one-world tick on the CPU is mostly launches (the bare MuJoCo step is 91 of them), and the time Warp's CPU
replay spends on each launch besides the kernel's own work (building the kernel's key, finding it, packing
its arguments: docs/benchmarking.md, "What bounds the one-world tick") moves from day to day on a shared VM
(0.1 µs one evening, 0.11-0.19 µs the next). The flight suite reports these two figures beside
``loop_vs_bare`` so a reader can tell a slower machine from a slower loop.
"""

from __future__ import annotations

import time

import warp as wp

from nexus.core.executors import graph_nodes

#: Operations captured into the graph that is timed.
OPERATIONS = 1000
#: Replays of that graph; the best is kept.
REPLAYS = 9


@wp.kernel
def touch(values: wp.array(dtype=wp.float32)):
    """The least a launch can do: one thread adds one to one value."""
    i = wp.tid()
    values[i] = values[i] + 1.0


def _graph(device: str, operation) -> object:
    with wp.ScopedDevice(device), wp.ScopedCapture(device=device) as capture:
        for _ in range(OPERATIONS):
            operation()
    return capture.graph


def _best_replay_us(graph, device: str, clock) -> float:
    wp.capture_launch(graph)  # warm outside the timing
    wp.synchronize_device(device)
    best = float("inf")
    for _ in range(REPLAYS):
        began = clock()
        wp.capture_launch(graph)
        wp.synchronize_device(device)
        best = min(best, clock() - began)
    return best / OPERATIONS * 1e6


def replay_cost_us(device: str = "cpu") -> dict[str, float | int | None]:
    """``launch_us`` and ``memset_us``: one captured launch of :func:`touch` and one 4-byte memset, each the best
    of ``REPLAYS`` replays of ``OPERATIONS`` of them in one graph [µs an operation] (process CPU time on the CPU,
    wall time on CUDA), with the graphs' node counts (``launch_nodes``, ``memset_nodes``) as Warp counted them."""
    values = wp.zeros(1, dtype=wp.float32, device=device)
    launches = _graph(device, lambda: wp.launch(touch, 1, inputs=[values], device=device))
    memsets = _graph(device, values.zero_)
    clock = time.process_time if wp.get_device(device).is_cpu else time.perf_counter
    return {"launch_us": _best_replay_us(launches, device, clock), "memset_us": _best_replay_us(memsets, device, clock),
            "launch_nodes": graph_nodes(launches), "memset_nodes": graph_nodes(memsets)}
