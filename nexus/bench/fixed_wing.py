"""Suite ``fixed_wing``: what a plane's tick costs (issue 48, point 7).

The Aerosonde's default run (``nexus run --vehicle aerosonde``: the air start, the plane mission, the
``fixed_wing`` controller) on the CPU, two measurements in one process:

* ``loop_vs_bare``: the ``flight`` suite's alternating rounds (mission ticks against the bare captured
  ``solver.step`` from the same airborne state, the record's drain counted at its rate; process CPU time);
* each wing stage's cost (the three surfaces, the aerodynamics, the propulsion): the stage alone captured
  ``COPIES`` times into one graph and replayed from the same tick state (best of ``TRIES``), per stage run
  [µs], and the aerodynamics' share of the loop's tick (``aero_share``).

Target: ``loop_vs_bare`` at most 1.3, as the multirotor's default flight. ``launch_us`` and ``memset_us``: one
trivial captured launch and one memset on this machine now (:mod:`nexus.bench.replay_cost`), beside it.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import warp as wp

from nexus.bench.flight import _rounds
from nexus.bench.replay_cost import replay_cost_us
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

#: The stages of a plane that a multirotor does not have, in ring order.
WING_STAGES = ("surface", "aero", "propulsion")
COPIES, REPLAYS, TRIES = 50, 20, 7


def plane_options(device: str) -> RunConfig:
    """The Aerosonde's default run (its controller is the plane's default)."""
    return RunConfig(vehicle="aerosonde", controller="fixed_wing", device=device)


def stage_cost_us(loop, stage) -> float:
    """One run of ``stage`` [µs]: ``COPIES`` runs captured into a graph, replayed ``REPLAYS`` times a try, the
    tick state put back before each try (process CPU time, best of ``TRIES``)."""
    snapshot = loop.snapshot()
    io = loop.ios[id(stage)]
    with wp.ScopedCapture(device=loop.device) as capture:
        for _ in range(COPIES):
            stage.run(io)
    best = float("inf")
    for _ in range(TRIES):
        loop.restore(snapshot)
        wp.synchronize_device(loop.device)
        began = time.process_time()
        for _ in range(REPLAYS):
            wp.capture_launch(capture.graph)
        wp.synchronize_device(loop.device)
        best = min(best, time.process_time() - began)
    loop.restore(snapshot)
    return best / (COPIES * REPLAYS) * 1e6


def run(device: str = "cpu", rounds: int = 6) -> dict:
    with tempfile.TemporaryDirectory(prefix="nexus-bench-") as folder:
        folder = Path(folder)
        replay = replay_cost_us(device)
        with FlightSession(plane_options(device), folder / "record_rounds.parquet") as session:
            best = _rounds(session, device, folder, wall=False, rounds=rounds)
            loop = session.flight.loop
            stages = {}
            for stage in loop.plan.stages:
                if stage.name in WING_STAGES:
                    stages.setdefault(stage.name, []).append(stage_cost_us(loop, stage))
    loop_us, bare_us = best["loop"] * 1e6, best["bare"] * 1e6
    costs = {name: sum(values) for name, values in stages.items()}  # the three surfaces together
    result = {
        "suite": "fixed_wing",
        "device": device,
        "vehicle": "aerosonde",
        "loop_tick_us": loop_us,
        "bare_step_us": bare_us,
        "loop_vs_bare": loop_us / bare_us,
        "record_drain_us_per_tick": best["drain"] * 1e6,
        "launch_us": replay["launch_us"],
        "memset_us": replay["memset_us"],
        "kernels_per_tick": best["kernels_per_tick"],
        "bare_kernels": best["bare_kernels"],
        "stage_us": costs,
        "aero_share": costs.get("aero", 0.0) / loop_us,
        "wing_stages_share": sum(costs.values()) / loop_us,
    }
    result["targets_met"] = {"loop_vs_bare": result["loop_vs_bare"] <= 1.3}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    rows = [
        ("Aerosonde's loop tick / bare step [µs] (process CPU time)",
         f"{result['loop_tick_us']:.1f} / {result['bare_step_us']:.1f}"),
        ("loop vs bare, airborne (target <= 1.3)", f"{result['loop_vs_bare']:.2f}"),
        ("one captured launch / memset on this machine now [µs]", f"{result['launch_us']:.3f} / {result['memset_us']:.3f}"),
        ("kernels per tick (bare step alone)", f"{result['kernels_per_tick']} ({result['bare_kernels']})"),
        ("record drain [µs a tick]", f"{result['record_drain_us_per_tick']:.2f}"),
    ]
    for name, cost in result["stage_us"].items():
        rows.append((f"stage {name} [µs a tick{', three surfaces' if name == 'surface' else ''}]", f"{cost:.2f}"))
    rows += [("aerodynamics' share of the tick", f"{100 * result['aero_share']:.1f}%"),
             ("wing stages' share of the tick", f"{100 * result['wing_stages_share']:.1f}%")]
    return rows
