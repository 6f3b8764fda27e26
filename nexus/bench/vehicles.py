"""Suite ``vehicles``: the whole loop against the bare step for each shipped vehicle, and its drone-steps per
second at 16 worlds.

For each vehicle (the Astro Max, PX4's x500, the Crazyflie) one process measures, the ``flight`` suite's way
(:func:`nexus.bench.flight.loop_against_bare`: alternating rounds from the same airborne state, CPU time on
the CPU), the default PID mission:

* ``loop_vs_bare``: one world's loop tick over the bare captured ``solver.step`` of the same model;
* ``drone_steps_per_s``: 16 worlds over the loop's time per tick.

Targets on the CPU (issue 32): ``loop_vs_bare`` at most 1.3 for every vehicle. The vehicles differ in their
rotor bodies' sizes and speeds, not in their stage plan, so the figures should agree within the noise.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from nexus.bench.flight import loop_against_bare
from nexus.runtime.config import RunConfig

VEHICLES = ("astro_max_base", "x500", "crazyflie")
WORLDS = 16
#: Rounds of each side (fewer than the flight suite's: six measurements share the time).
ROUNDS = 6


def run(device: str = "cpu", vehicles: tuple[str, ...] = VEHICLES) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="nexus-bench-vehicles-") as folder:
        for vehicle in vehicles:
            one = loop_against_bare(device, Path(folder), wall=device != "cpu", options=RunConfig(vehicle=vehicle),
                                    rounds=ROUNDS)
            many = loop_against_bare(device, Path(folder), wall=device != "cpu",
                                     options=RunConfig(vehicle=vehicle, worlds=WORLDS), rounds=ROUNDS)
            rows.append({"vehicle": vehicle, "loop_tick_us": one["loop"] * 1e6, "bare_step_us": one["bare"] * 1e6,
                         "loop_vs_bare": one["loop"] / one["bare"], "drone_steps_per_s": WORLDS / many["loop"]})
    result = {"suite": "vehicles", "device": device, "clock": "process CPU time" if device == "cpu" else "wall",
              "worlds": WORLDS, "rows": rows}
    if device == "cpu":
        result["targets_met"] = {f"loop_vs_bare_{r['vehicle']}": r["loop_vs_bare"] <= 1.3 for r in rows}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    lines = []
    for row in result["rows"]:
        v = row["vehicle"]
        lines += [
            (f"{v}: loop tick / bare step [µs] ({result['clock']})", f"{row['loop_tick_us']:.1f} / {row['bare_step_us']:.1f}"),
            (f"{v}: loop vs bare (target <= 1.3)", f"{row['loop_vs_bare']:.2f}"),
            (f"{v}: drone-steps per second, {result['worlds']} worlds", f"{row['drone_steps_per_s']:,.0f}"),
        ]
    return lines
