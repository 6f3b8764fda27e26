"""Per-world cost of one plant step, free-flyer against MuJoCo, at 1, 64 and 1,024 worlds (CPU).

Usage: python tools/freeflyer_timing.py [--worlds 1 64 1024] [--solvers freeflyer mujoco]

Each solver steps the Astro Max in the air (5 m up, rotors at the hover speed, no applied load, so it
falls freely and touches nothing during the timing), with ``body_qdd`` asked for as the IMU asks for it.
16 steps are captured in one graph and replayed; the figure is the best of 5 rounds of 8 replays
(128 steps), divided by the steps and the worlds [µs per world per step]. Only the solver's step is
timed: the servos, propellers and sensors above it are not.
"""

from __future__ import annotations

import argparse
import time

import warp as wp

from nexus.plant.loading import load_plant

DT = 0.004  # [s]
STEPS_PER_GRAPH = 16
REPLAYS = 8
ROUNDS = 5


def per_world_step_us(solver: str, worlds: int) -> tuple[float, float]:
    started = time.perf_counter()
    plant, _, _ = load_plant("astro_max_base", "empty", worlds=worlds, solver=solver)
    built = time.perf_counter() - started
    observables = plant.solver.observables({"body_qdd"})

    def steps():
        for _ in range(STEPS_PER_GRAPH):
            plant.solver.step(plant.state, plant.state, plant.control, None, DT, observables=observables)

    plant.reset(base_position=(0.0, 0.0, 5.0), rotor_speed=251.5)
    steps()  # compile and warm up outside the capture
    with wp.ScopedCapture(device="cpu") as capture:
        steps()
    best = float("inf")
    for _ in range(ROUNDS):
        plant.reset(base_position=(0.0, 0.0, 5.0), rotor_speed=251.5)
        wp.synchronize()
        start = time.perf_counter()
        for _ in range(REPLAYS):
            wp.capture_launch(capture.graph)
        wp.synchronize()
        best = min(best, time.perf_counter() - start)
    return best / (REPLAYS * STEPS_PER_GRAPH * worlds) * 1e6, built


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, nargs="+", default=[1, 64, 1024])
    parser.add_argument("--solvers", nargs="+", default=["freeflyer", "mujoco"])
    args = parser.parse_args()
    wp.config.quiet = True
    wp.init()
    print(f"{'solver':<10} {'worlds':>6} {'us/world/step':>14} {'drone-steps/s':>14} {'build s':>8}")
    for solver in args.solvers:
        for worlds in args.worlds:
            cost, built = per_world_step_us(solver, worlds)
            print(f"{solver:<10} {worlds:>6} {cost:>14.3f} {1e6 / cost:>14,.0f} {built:>8.1f}", flush=True)


if __name__ == "__main__":
    main()
