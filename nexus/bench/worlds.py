"""Suite ``worlds``: the whole loop of N vehicles against the bare physics step of N, and memory per world.

For each N (1, 16 and 64 on the CPU; up to 16,384 on CUDA) one process
measures, in the same airborne state and timed the same way (the ``flight``
suite's alternating rounds: :func:`nexus.bench.flight.loop_against_bare`):

* ``worlds_vs_bare``: the loop's time per tick (every stage of every world,
  the record drained at the rate a run pays it) over the bare captured
  ``solver.step`` of the same N-world model;
* ``drone_steps_per_s``: N over the loop's time per tick: vehicle-ticks of
  the whole loop per second;
* ``bytes_per_world``: the device memory one more world takes (every Warp
  array of the model, the solver, the signals and the state; the record's
  table excluded), from the difference between N and 1 world.

On the CPU the rounds are timed in this process's CPU time (see the flight
suite); the targets at N = 16 are ``worlds_vs_bare`` at most 1.3 and at least
40,000 drone-steps per second.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import warp as wp

from nexus.bench.flight import loop_against_bare
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig

CPU_WORLDS = (1, 16, 64)
CUDA_WORLDS = (1, 1024, 4096, 16384)
#: Rounds of each side per N (fewer than the flight suite's: three sizes share the time).
ROUNDS = 8


def _arrays_of(holder, seen: set[int]) -> int:
    total = 0
    for value in vars(holder).values():
        if isinstance(value, wp.array) and value.ptr and id(value) not in seen:
            seen.add(id(value))
            total += value.capacity
    return total


def device_bytes(flight) -> int:
    """Bytes of every Warp array the flight holds on its device, the record's table excluded."""
    plant = flight.vehicle.plant
    seen: set[int] = set()
    total = 0
    for holder in (plant.model, plant.state, plant.control, plant.solver.mjw_model, plant.solver.mjw_data):
        total += _arrays_of(holder, seen)
    for output in flight.loop.wiring.outputs:
        if output.on_device and id(output.buffer) not in seen:
            seen.add(id(output.buffer))
            total += output.buffer.capacity
    for array in flight.loop.states.arrays().values():
        total += array.capacity
    return total


def bytes_per_world(device: str, worlds: int) -> float:
    """(bytes of N worlds - bytes of 1) / (N - 1)."""
    sizes = {}
    for n in (1, worlds):
        flight = build_flight(RunConfig(worlds=n, record_mode="summary"), device)
        sizes[n] = device_bytes(flight)
        flight.loop.close()
    return (sizes[worlds] - sizes[1]) / (worlds - 1)


def run(device: str = "cpu", worlds: tuple[int, ...] | None = None) -> dict:
    sizes = worlds or (CUDA_WORLDS if device.startswith("cuda") else CPU_WORLDS)
    rows = []
    with tempfile.TemporaryDirectory(prefix="nexus-bench-worlds-") as folder:
        for n in sizes:
            best = loop_against_bare(device, Path(folder), wall=device != "cpu",
                                     options=RunConfig(worlds=n, record_every=1 if n <= 64 else 10), rounds=ROUNDS)
            rows.append({
                "worlds": n,
                "loop_tick_us": best["loop"] * 1e6,
                "bare_step_us": best["bare"] * 1e6,
                "worlds_vs_bare": best["loop"] / best["bare"],
                "drone_steps_per_s": n / best["loop"],
                "bare_drone_steps_per_s": n / best["bare"],
                "kernels_per_tick": best["kernels_per_tick"],
            })
    result = {
        "suite": "worlds",
        "device": device,
        "clock": "process CPU time" if device == "cpu" else "wall",
        "rows": rows,
        "bytes_per_world": bytes_per_world(device, 64),
    }
    at16 = next((r for r in rows if r["worlds"] == 16), None)
    if at16 is not None and device == "cpu":
        result["targets_met"] = {"worlds_vs_bare_16": at16["worlds_vs_bare"] <= 1.3,
                                 "drone_steps_per_s_16": at16["drone_steps_per_s"] >= 40_000}
    at16k = next((r for r in rows if r["worlds"] == 16384), None)
    if at16k is not None:
        result["targets_met"] = {"drone_steps_per_s_16384": at16k["drone_steps_per_s"] >= 10_000_000}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    lines = []
    for row in result["rows"]:
        n = row["worlds"]
        lines += [
            (f"N={n}: loop tick / bare step [µs] ({result['clock']})", f"{row['loop_tick_us']:.1f} / {row['bare_step_us']:.1f}"),
            (f"N={n}: worlds vs bare" + (" (target <= 1.3)" if n == 16 else ""), f"{row['worlds_vs_bare']:.2f}"),
            (f"N={n}: drone-steps per second" + (" (target >= 40,000)" if n == 16 else ""),
             f"{row['drone_steps_per_s']:,.0f}"),
        ]
    lines.append(("device bytes per world (record excluded)", f"{result['bytes_per_world']:,.0f}"))
    return lines
