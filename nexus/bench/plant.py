"""Suite ``plant``: a plant-only tick through the engine vs the bare solver step.

Both are captured on the same model: the engine's tick (clock, clear, four
ESCs, four propellers, servos + ``SolverMuJoCo.step``, state publishing, the
hold controller) against a graph of ``solver.step`` alone. The ratio is what
the engine and the rotor models add around the physics.
"""

from __future__ import annotations

import warp as wp

from nexus.bench.timing import interleaved_best
from nexus.core import Loop
from nexus.core.loop import DEFAULT_TICK_HZ, tick_ns
from nexus.plant.esc import ESC_SPEC
from nexus.plant.hover import hover_command, hover_speed
from nexus.plant.propeller import PROPELLER_SPEC
from nexus.runtime.assembly import assemble

#: One control tick at the default rate, which the plant loop runs at [s].
TICK_S = tick_ns(DEFAULT_TICK_HZ) * 1e-9


def plant_loop(device: str, extra=()):
    """A captured plant-only loop of the Astro Max at hover, and its vehicle."""
    vehicle = assemble("astro_max_base", "empty", device=device, controller="hold")
    # The physics, the hold controller, and the ESCs and propellers (by their specs), in the vehicle's order.
    parts = [c for c in vehicle.components if c is vehicle.physics or c is vehicle.controller
             or c.spec is ESC_SPEC or c.spec is PROPELLER_SPEC]
    loop = Loop(parts + list(extra), device=device, mode="captured").build()
    vehicle.plant.reset(base_position=(0.0, 0.0, 10.0), rotor_speed=hover_speed(vehicle.plant))
    vehicle.controller.set([hover_command(vehicle.plant)] * 4)
    loop.run_kinds(["control"])
    return loop, vehicle


def bare_step_graph(vehicle, device: str):
    plant = vehicle.plant
    with wp.ScopedDevice(device), wp.ScopedCapture(device=device) as capture:
        plant.solver.step(plant.state, plant.state, plant.control, None, TICK_S, observables=None)
    return capture.graph


def run(device: str = "cpu", ticks: int = 500, rounds: int = 12) -> dict:
    loop, vehicle = plant_loop(device)
    graph = bare_step_graph(vehicle, device)
    best = interleaved_best({"tick": loop.tick, "bare": lambda: wp.capture_launch(graph)}, ticks, rounds, device)
    tick_s, bare_s = best["tick"], best["bare"]
    result = {
        "suite": "plant",
        "device": device,
        "plant_tick_us": tick_s * 1e6,
        "bare_step_us": bare_s * 1e6,
        "engine_vs_bare": tick_s / bare_s,
        "plant_rtf": TICK_S / tick_s,
    }
    result["targets_met"] = {"engine_vs_bare": result["engine_vs_bare"] <= 1.1}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("plant tick through the engine, captured [µs]", f"{result['plant_tick_us']:.1f}"),
        ("bare captured solver.step [µs]", f"{result['bare_step_us']:.1f}"),
        ("engine vs bare (time ratio, target <= 1.1)", f"{result['engine_vs_bare']:.3f}"),
        (f"plant real-time factor at {DEFAULT_TICK_HZ:g} Hz", f"{result['plant_rtf']:.0f}x"),
    ]
