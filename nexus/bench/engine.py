"""Suite ``engine``: what the tick engine costs over a hand-written captured graph.

A ring of 20 device stages, each launching one kernel over 4,096 elements and
chained through signals, runs eager (stage by stage), captured through the
engine, and as the same launches captured by hand into one graph.
"""

from __future__ import annotations

import warp as wp

from nexus.bench.timing import interleaved_best, seconds_per_call
from nexus.core import Component, Loop, Read, Stage, Write
from nexus.core.clock import advance_clock
from nexus.core.schedule import due_table
from nexus.core.loop import DEFAULT_TICK_HZ, tick_ns

STAGES = 20
WIDTH = 4096


@wp.kernel
def relax(source: wp.array2d(dtype=wp.float32), out: wp.array2d(dtype=wp.float32)):
    i = wp.tid()
    out[0, i] = 0.5 * out[0, i] + 0.25 * source[0, i] + 1.0


class Relaxer(Component):
    """One stage: reads the previous stage's row, relaxes its own toward it."""

    def __init__(self, index: int, width: int = WIDTH):
        super().__init__(f"/bench/stage_{index:02d}")
        self.index = index
        self.width = width

    def stages(self) -> list[Stage]:
        source = f"s{self.index - 1}" if self.index else "seed"
        reads = (Read(source, wp.float32, (1, self.width), default=1.0),)
        writes = (Write(f"s{self.index}", wp.float32, (1, self.width)),)
        return [Stage(f"s{self.index:02d}", "sensor", self._run, reads=reads, writes=writes)]

    def _run(self, io) -> None:
        source = f"s{self.index - 1}" if self.index else "seed"
        wp.launch(relax, self.width, inputs=[io[source]], outputs=[io[f"s{self.index}"]], device=io.device)


def _loop(mode: str, device: str, width: int = WIDTH) -> Loop:
    return Loop([Relaxer(i, width) for i in range(STAGES)], device=device, mode=mode).build()


def _hand_graph(device: str):
    """The same launches (clock included), captured directly with Warp."""
    tick = wp.zeros(1, dtype=wp.int64, device=device)
    time_ns = wp.zeros(1, dtype=wp.int64, device=device)
    time = wp.zeros(1, dtype=wp.float64, device=device)
    done = wp.zeros(1, dtype=wp.int32, device=device)
    running = wp.zeros(1, dtype=wp.int32, device=device)
    rows = [wp.full((1, WIDTH), 1.0, dtype=wp.float32, device=device)]
    rows += [wp.zeros((1, WIDTH), dtype=wp.float32, device=device) for _ in range(STAGES)]
    with wp.ScopedDevice(device), wp.ScopedCapture(device=device) as capture:
        wp.launch(advance_clock, 1, inputs=[wp.int64(tick_ns(DEFAULT_TICK_HZ)), done], outputs=[tick, time_ns, time, running, due_table([], device)], device=device)
        for i in range(STAGES):
            wp.launch(relax, WIDTH, inputs=[rows[i]], outputs=[rows[i + 1]], device=device)
    return capture.graph, rows


def run(device: str = "cpu", ticks: int = 400) -> dict:
    eager = _loop("eager", device)
    captured = _loop("captured", device)
    graph, _rows = _hand_graph(device)
    eager_s = seconds_per_call(eager.tick, max(ticks // 4, 20), device=device)
    best = interleaved_best({"captured": captured.tick, "hand": lambda: wp.capture_launch(graph)}, ticks, device=device)
    captured_s, hand_s = best["captured"], best["hand"]
    # The same ring with one element per kernel: what launching costs when no
    # kernel work hides it (on the CPU, 4,096 elements of work bound the speed-up).
    eager_1 = seconds_per_call(_loop("eager", device, 1).tick, max(ticks // 4, 20), device=device)
    captured_1 = seconds_per_call(_loop("captured", device, 1).tick, ticks, device=device)
    result = {
        "suite": "engine",
        "device": device,
        "stages": STAGES,
        "elements": WIDTH,
        "eager_tps": 1.0 / eager_s,
        "captured_tps": 1.0 / captured_s,
        "hand_graph_tps": 1.0 / hand_s,
        "engine_vs_hand": captured_s / hand_s,
        "captured_vs_eager": eager_s / captured_s,
        "captured_vs_eager_1_element": eager_1 / captured_1,
    }
    result["targets_met"] = {
        "engine_vs_hand": result["engine_vs_hand"] <= 1.2,
        "captured_vs_eager": result["captured_vs_eager"] >= 20.0,
    }
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("ticks/s eager", f"{result['eager_tps']:,.0f}"),
        ("ticks/s captured (engine)", f"{result['captured_tps']:,.0f}"),
        ("ticks/s hand-written graph", f"{result['hand_graph_tps']:,.0f}"),
        ("engine vs hand (time ratio, target <= 1.2)", f"{result['engine_vs_hand']:.3f}"),
        ("captured vs eager (speed-up, target >= 20)", f"{result['captured_vs_eager']:.1f}"),
        ("captured vs eager, 1 element per kernel", f"{result['captured_vs_eager_1_element']:.1f}"),
    ]
