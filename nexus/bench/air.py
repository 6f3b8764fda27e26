"""Suite ``air``: what the air's stages (wind, drag, ground effect, battery) add to a tick, and the default
flight's loop against the bare step.

``air_cost`` at 1 and 16 worlds: the Astro Max flies the default PID mission twice in one process, once with
all the air (its drag prim, a wind of :data:`WIND` with :data:`TURBULENCE` turbulence, ground effect on its
four propellers and a 12S battery: :data:`AIR_LAYER`) and once with none of it (the same vehicle with its drag
prim made inactive: :data:`STILL_LAYER`). Both take off (``AIRBORNE_S``, untimed), then rounds of
``ROUND_TICKS`` ticks of each flight alternate (:func:`nexus.bench.timing.alternating_best`), timed in this
process's CPU time on the CPU (wall on CUDA), records drained outside the rounds. So both sides do the same
work timed the same way, and

    air_cost = (loop with air - loop without) / loop with air

is the air's share of a tick. ``loop_vs_bare`` is the ``flight`` suite's figure for the default flight
(:func:`nexus.bench.flight.loop_against_bare`), which now carries the Astro Max's drag.

Targets on the CPU (issue 33): ``air_cost`` at most 10 % at 1 and at 16 worlds, ``loop_vs_bare`` at most 1.3.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

import warp as wp

from nexus.bench.flight import AIRBORNE_S, ROUND_TICKS, TICK_S, loop_against_bare
from nexus.bench.timing import alternating_best
from nexus.plant.assets import resolve_asset
from nexus.runtime.flight import fly
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

#: World counts measured.
WORLDS = (1, 16)
#: Rounds of each side per world count.
ROUNDS = 8
#: The mean wind (``--wind``) and turbulence level (``--turbulence``) of the flight with air.
WIND = "5@270"
TURBULENCE = "moderate"

#: The Astro Max with all the air: its own drag prim, ground effect on the four propellers, a 12S pack
#: (8 Ah: it does not run down over the rounds).
AIR_LAYER = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{base}@]
    upAxis = "Z"
)

over "vehicle"
{{
{ground_effect}
    def Scope "battery" (prepend apiSchemas = ["NexusBatteryAPI"])
    {{
        int nexus:battery:cells = 12
        float nexus:battery:capacity = 8
    }}
}}
"""
GROUND_EFFECT_PRIM = """    over "propeller_{k}" (prepend apiSchemas = ["NexusGroundEffectAPI"])
    {{
        float nexus:rotorRadius = 0.2667
    }}"""

#: The Astro Max with no air: its drag prim made inactive (no drag stage), nothing added.
STILL_LAYER = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{base}@]
    upAxis = "Z"
)

over "vehicle"
{{
    over "body"
    {{
        over "base"
        {{
            over "Drag" (active = false)
            {{
            }}
        }}
    }}
}}
"""


def write_vehicles(folder: Path) -> tuple[Path, Path]:
    """The vehicle files with all the air and with none (the Astro Max under each), written into ``folder``."""
    base = resolve_asset("vehicle", "astro_max_base")
    air = folder / "astro_max_air.usda"
    air.write_text(AIR_LAYER.format(base=base, ground_effect="\n".join(GROUND_EFFECT_PRIM.format(k=k)
                                                                       for k in range(1, 5))))
    still = folder / "astro_max_still.usda"
    still.write_text(STILL_LAYER.format(base=base))
    return air, still


def air_against_still(device: str, folder: Path, worlds: int, rounds: int = ROUNDS) -> dict[str, float]:
    """Best seconds per tick of the flight with all the air and of the one without, ``worlds`` worlds each."""
    air, still = write_vehicles(folder)
    options = {
        "air": RunConfig(vehicle=str(air), wind=WIND, turbulence=TURBULENCE, worlds=worlds, device=device),
        "still": RunConfig(vehicle=str(still), worlds=worlds, device=device),
    }
    clock = time.perf_counter if device != "cpu" else time.process_time
    with contextlib.ExitStack() as stack:
        sessions = {name: stack.enter_context(FlightSession(config, folder / f"record_{name}_{worlds}.parquet"))
                    for name, config in options.items()}
        for session in sessions.values():
            fly(session.flight, session.writer, int(round(AIRBORNE_S / TICK_S)))
            session.writer.drain()

        def round_of(session):
            def measure() -> float:
                began = clock()
                fly(session.flight, session.writer, ROUND_TICKS)
                wp.synchronize_device(device)
                seconds = (clock() - began) / ROUND_TICKS
                session.writer.drain()  # outside the round, on both sides alike
                return seconds
            return measure

        best = alternating_best({name: round_of(session) for name, session in sessions.items()}, rounds)
        best["stages"] = {name: [stage.name for stage in session.flight.loop.plan.stages]
                          for name, session in sessions.items()}
    return best


def run(device: str = "cpu", worlds: tuple[int, ...] = WORLDS, rounds: int = ROUNDS) -> dict:
    rows = []
    with tempfile.TemporaryDirectory(prefix="nexus-bench-air-") as folder:
        folder = Path(folder)
        for n in worlds:
            best = air_against_still(device, folder, n, rounds)
            air_only = [s for s in best["stages"]["air"] if s not in best["stages"]["still"]]
            rows.append({"worlds": n, "loop_with_air_us": best["air"] * 1e6, "loop_without_air_us": best["still"] * 1e6,
                         "air_cost": (best["air"] - best["still"]) / best["air"], "air_stages": sorted(set(air_only))})
        bare = loop_against_bare(device, folder, wall=device != "cpu", rounds=rounds)
    result = {"suite": "air", "device": device, "clock": "process CPU time" if device == "cpu" else "wall",
              "wind": WIND, "turbulence": TURBULENCE, "rows": rows,
              "default_loop_tick_us": bare["loop"] * 1e6, "default_bare_step_us": bare["bare"] * 1e6,
              "loop_vs_bare": bare["loop"] / bare["bare"]}
    if device == "cpu":
        result["targets_met"] = {**{f"air_cost_{r['worlds']}_worlds": r["air_cost"] <= 0.10 for r in rows},
                                 "loop_vs_bare": result["loop_vs_bare"] <= 1.3}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    lines = []
    for row in result["rows"]:
        n = row["worlds"]
        lines += [
            (f"{n} world(s): loop tick with air / without [µs] ({result['clock']})",
             f"{row['loop_with_air_us']:.1f} / {row['loop_without_air_us']:.1f}"),
            (f"{n} world(s): air's share of a tick (target <= 10%)", f"{row['air_cost']:.1%}"),
        ]
    if result["rows"]:
        lines.append(("stages the air adds", ", ".join(result["rows"][0]["air_stages"])))
    lines += [
        ("default flight: loop tick / bare step [µs]",
         f"{result['default_loop_tick_us']:.1f} / {result['default_bare_step_us']:.1f}"),
        ("default flight (with drag): loop vs bare (target <= 1.3)", f"{result['loop_vs_bare']:.2f}"),
    ]
    return lines
