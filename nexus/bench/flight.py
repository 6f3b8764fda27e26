"""Suite ``flight`` (the default): real-time factor of the default PID flight on the CPU.

In one run: the default mission flown captured, the same ring flown eager
(over a shorter stretch: eager is slow), and the bare captured physics step
of the same model. ``loop_vs_bare`` is the loop's time per tick over the bare
step's: what sensors, estimator, guidance, controller and record add.
"""

from __future__ import annotations

import time

import warp as wp

from nexus.bench.plant import bare_step_graph
from nexus.bench.timing import seconds_per_call
from nexus.flight import FlightOptions, build_flight
from nexus.startup import start

TICK_S = 0.004
#: Sim time flown eagerly [s]: enough ticks for a stable figure.
EAGER_S = 1.0
#: Longest mission flown captured [s].
CAP_S = 60.0


def _fly(eager: bool, device: str, seconds: float) -> tuple[float, int, float]:
    """(wall seconds, ticks, sim seconds) of the default flight, start-up excluded."""
    flight = build_flight(FlightOptions(eager=eager), device)
    start(flight.loop, flight.vehicle.plant)
    loop = flight.loop
    ticks = int(round(seconds / TICK_S))
    began = time.perf_counter()
    loop.run(ticks)
    wp.synchronize_device(device)
    wall = time.perf_counter() - began
    loop.close()
    return wall, loop.ticks, loop.sim_time


def run(device: str = "cpu") -> dict:
    captured_wall, captured_ticks, captured_sim = _fly(False, device, CAP_S)
    eager_wall, eager_ticks, eager_sim = _fly(True, device, EAGER_S)
    flight = build_flight(FlightOptions(controller="hold"), device)
    graph = bare_step_graph(flight.vehicle, device)
    bare_s = seconds_per_call(lambda: wp.capture_launch(graph), 1000, device=device)
    flight.loop.close()
    loop_tick_s = captured_wall / captured_ticks
    result = {
        "suite": "flight",
        "device": device,
        "mission_sim_s": captured_sim,
        "rtf_captured": captured_sim / captured_wall,
        "rtf_eager": eager_sim / eager_wall,
        "rtf_bare_physics": TICK_S / bare_s,
        "loop_tick_us": loop_tick_s * 1e6,
        "eager_tick_us": eager_wall / eager_ticks * 1e6,
        "bare_step_us": bare_s * 1e6,
        "loop_vs_bare": loop_tick_s / bare_s,
        "captured_vs_eager": (eager_wall / eager_ticks) / loop_tick_s,
    }
    result["targets_met"] = {"rtf_captured": result["rtf_captured"] >= 20.0, "loop_vs_bare": result["loop_vs_bare"] <= 1.5}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("default mission flown [s sim]", f"{result['mission_sim_s']:.2f}"),
        ("RTF captured (target >= 20)", f"{result['rtf_captured']:.1f}x"),
        ("RTF eager", f"{result['rtf_eager']:.2f}x"),
        ("RTF bare captured physics step", f"{result['rtf_bare_physics']:.1f}x"),
        ("loop tick, captured [µs]", f"{result['loop_tick_us']:.1f}"),
        ("bare physics step [µs]", f"{result['bare_step_us']:.1f}"),
        ("loop vs bare (time ratio, target <= 1.5)", f"{result['loop_vs_bare']:.2f}"),
        ("captured vs eager (speed-up)", f"{result['captured_vs_eager']:.0f}x"),
    ]
