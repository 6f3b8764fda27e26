"""Suite ``scale``: drone-ticks per second of the whole loop at many worlds, for each solver (issue 46, point 4).

For each solver (``mujoco``, ``freeflyer``) and each world count N (16, 64,
1,024 and 4,096; ``NEXUS_BENCH_SCALE_WORLDS="16,64"`` or ``run(worlds=...)``
for fewer) the flight is what ``nexus run --worlds N --record summary
--solver S --estimator truth`` flies: the default vehicle with its sensors
at their rates, the PID, the per-world summary. After ``AIRBORNE_S`` of sim
time (untimed), rounds of loop ticks alternate with rounds of as many bare
captured ``solver.step`` calls of the same N-world model started from the
state the loop just reached (the ``flight`` suite's method: the state is
saved before a bare round and put back after it, outside the timed region).
Both sides report their best round, in this process's CPU time on the CPU
(the machine is shared) and by the wall clock on CUDA.

Each row:

* ``drone_ticks_per_s``: N over the loop's time per tick;
* ``bare_drone_ticks_per_s``: N over the bare step's time;
* ``stages_us_per_world_tick``: (loop - bare step) / N [µs]: what every
  stage above the solver (clock, ESCs, propellers, drag, sensors, estimator,
  PID, mixer, summary, the hold of finished worlds) costs a world a tick;
* ``step_us_per_world_tick``: the bare step / N [µs].

The EKF's figure (``--estimator ekf``) is measured beside the truth
estimator's at ``EKF_WORLDS`` worlds on each solver.

Each configuration is measured in its own child process (``python -m
nexus.bench.scale measure SOLVER N ESTIMATOR``): a fresh process per
many-world model, so no configuration pays for another's memory and two
many-world MuJoCo models never share a process (see the estimation suite's
note on two 16-world plants in one process). MuJoCo at a world count is
skipped, with the reason in ``skipped``, when the time predicted from the
largest MuJoCo row measured (build and flight, scaled by the world count)
exceeds ``MUJOCO_LIMIT_S``; only above 1,024 worlds (MuJoCo at 1,024 is
always measured).

Both cores (issue 46, point 3): at each world count each solver's truth flight
is flown again by the wall clock, the loop phase only, with its worlds in one
process and sharded over ``shards`` processes as ``nexus run --shards``
splits them (:mod:`nexus.bench.scale_shards`): ``sharded[]`` gives both
figures and the efficiency. ``NEXUS_BENCH_SCALE_SHARDS=0`` leaves them out;
``NEXUS_BENCH_SCALE_QUICK=1`` runs 16 worlds, one short round each (a check
that every part runs, not a measurement).

Targets (issue 46, the 2-core CPU): free-flyer at least 1.2 M drone-ticks/s
at 1,024 worlds and 3 M at 4,096; the stages above the solver at most
0.8 µs a world a tick and the free-flyer step at most 0.4 µs (at 1,024
worlds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import warp as wp

from nexus.bench import scale_shards
from nexus.bench import vector_env_scale
from nexus.bench.flight import _state_arrays
from nexus.bench.plant import bare_step_graph
from nexus.bench.timing import alternating_best, bare_step_round
from nexus.runtime.flight import fly
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

WORLDS = (16, 64, 1024, 4096)
SOLVERS = ("mujoco", "freeflyer")
#: World count at which the EKF's row is measured beside the truth estimator's.
EKF_WORLDS = 1024
#: Sim time flown (untimed) before the rounds, so both sides start in the air [s].
AIRBORNE_S = 2.0
ROUNDS = 6
#: A MuJoCo configuration predicted to take longer than this [s] is skipped.
MUJOCO_LIMIT_S = 120.0
TARGETS = {"freeflyer_drone_ticks_per_s_1024": 1.2e6, "freeflyer_drone_ticks_per_s_4096": 3.0e6,
           "stages_us_per_world_tick": 0.8, "freeflyer_step_us_per_world_tick": 0.4}


def round_ticks(worlds: int) -> int:
    """Ticks in one round: 256 up to 256 worlds, fewer above (a multiple of the 16 ticks of one replay)."""
    return max(16, min(256, 65536 // worlds))


def configured_worlds() -> tuple[int, ...]:
    text = os.environ.get("NEXUS_BENCH_SCALE_WORLDS", "").strip()
    return tuple(int(w) for w in text.split(",") if w.strip()) if text else WORLDS


def measure(solver: str, worlds: int, estimator: str = "truth", device: str = "cpu", rounds: int = ROUNDS,
            ticks: int | None = None, airborne_s: float = AIRBORNE_S) -> dict:
    """One row: the loop against the bare step of ``worlds`` worlds on ``solver``, in this process."""


    ticks = ticks or round_ticks(worlds)
    began = time.perf_counter()
    with FlightSession(scale_config(solver, worlds, estimator, device)) as session:
        flight = session.flight
        built_s = time.perf_counter() - began
        fly(flight, None, int(round(airborne_s / flight.options.dt)))
        graph = bare_step_graph(flight.vehicle, device)
        arrays = _state_arrays(flight.vehicle.plant)
        clock = time.perf_counter if device != "cpu" else time.process_time

        def loop_round() -> float:
            start = clock()
            fly(flight, None, ticks)
            wp.synchronize_device(device)
            return (clock() - start) / ticks

        def bare_round() -> float:
            return bare_step_round(graph, arrays, ticks, device, clock)

        wp.capture_launch(graph)  # the bare graph's first launch outside the rounds
        best = alternating_best({"loop": loop_round, "bare": bare_round}, rounds)
        heights = -flight.loop.output("estimate").numpy()["position"][:, 2]
        kernels = flight.loop.nodes_per_tick
    return {
        "solver": solver,
        "worlds": worlds,
        "estimator": estimator,
        "loop_tick_us": best["loop"] * 1e6,
        "bare_step_us": best["bare"] * 1e6,
        "drone_ticks_per_s": worlds / best["loop"],
        "bare_drone_ticks_per_s": worlds / best["bare"],
        "stages_us_per_world_tick": (best["loop"] - best["bare"]) / worlds * 1e6,
        "step_us_per_world_tick": best["bare"] / worlds * 1e6,
        "loop_vs_bare": best["loop"] / best["bare"],
        "kernels_per_tick": kernels,
        "round_ticks": ticks,
        "rounds": rounds,
        "min_height_m": float(heights.min()),
        "build_s": built_s,
        "wall_s": time.perf_counter() - began,
    }


def scale_config(solver: str, worlds: int, estimator: str = "truth", device: str = "cpu"):
    """``nexus run --worlds N --record summary --solver S --estimator E``'s configuration."""

    return RunConfig(worlds=worlds, record_mode="summary", solver=solver, estimator=estimator, device=device)


def _measure_in_child(solver: str, worlds: int, estimator: str, device: str, rounds: int, ticks: int | None,
                      airborne_s: float) -> dict:
    command = [sys.executable, "-m", "nexus.bench.scale", "measure", solver, str(worlds), estimator, device,
               str(rounds), str(ticks or 0), repr(airborne_s)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"scale: {solver} at {worlds} worlds ({estimator}) failed (exit {done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _predicted_s(rows: list[dict], solver: str, worlds: int) -> float | None:
    """Seconds a configuration should take, scaled from the largest measured row of the same solver."""
    known = [r for r in rows if r["solver"] == solver and r["estimator"] == "truth"]
    if not known:
        return None
    largest = max(known, key=lambda r: r["worlds"])
    return largest["wall_s"] * worlds / largest["worlds"]


def skip_reason(rows: list[dict], solver: str, worlds: int) -> str | None:
    """Why a configuration is not measured, or None: MuJoCo above 1,024 worlds when its predicted time is too long."""
    predicted = _predicted_s(rows, solver, worlds)
    if solver != "mujoco" or worlds <= 1024 or predicted is None or predicted <= MUJOCO_LIMIT_S:
        return None
    return f"predicted {predicted:.0f} s (over {MUJOCO_LIMIT_S:.0f} s) from the largest MuJoCo row measured"


def configured_shards() -> int:
    """Processes the both-cores figure shards over (``NEXUS_BENCH_SCALE_SHARDS``; 0 or 1: not measured)."""
    return int(os.environ.get("NEXUS_BENCH_SCALE_SHARDS", "2"))


def quick() -> dict:
    """``run``'s arguments for ``NEXUS_BENCH_SCALE_QUICK=1``: every part at 16 worlds, one short round."""
    return {"worlds": (16,), "rounds": 1, "ticks": 16, "airborne_s": 0.2}


def run(device: str = "cpu", worlds: tuple[int, ...] | None = None, rounds: int = ROUNDS,
        ekf_worlds: int | None = None, ticks: int | None = None, airborne_s: float = AIRBORNE_S,
        shards: int | None = None) -> dict:
    """Every row (see the module doc). ``worlds``: the world counts (default: ``NEXUS_BENCH_SCALE_WORLDS`` or
    ``WORLDS``); ``ekf_worlds``: where the EKF's rows are taken (default 1,024 if measured, else the largest);
    ``ticks``: ticks a round (default :func:`round_ticks`); ``airborne_s``: sim time flown before the rounds;
    ``shards``: processes of the both-cores figure (default :func:`configured_shards`)."""
    if os.environ.get("NEXUS_BENCH_SCALE_QUICK") == "1" and worlds is None:
        return run(device, shards=shards, **quick())
    shards = configured_shards() if shards is None else shards
    load_before = os.getloadavg()
    sharded = []
    sizes = tuple(sorted(worlds or configured_worlds()))
    ekf_at = ekf_worlds if ekf_worlds is not None else (EKF_WORLDS if EKF_WORLDS in sizes else sizes[-1])
    rows, skipped = [], []
    for solver in SOLVERS:
        for n in sizes:
            reason = skip_reason(rows, solver, n)
            if reason is not None:
                skipped.append({"solver": solver, "worlds": n, "predicted_s": _predicted_s(rows, solver, n),
                                "reason": reason})
                continue
            rows.append(_measure_in_child(solver, n, "truth", device, rounds, ticks, airborne_s))
            if shards > 1 and n >= 2 * shards:
                sharded.append(scale_shards.measure(solver, n, device, shards, rounds, ticks, airborne_s))
            if n == ekf_at:
                rows.append(_measure_in_child(solver, n, "ekf", device, rounds, ticks, airborne_s))
    result = {"suite": "scale", "device": device,
              "clock": "process CPU time" if device == "cpu" else "wall",
              "rows": rows, "skipped": skipped, "sharded": sharded, "targets": dict(TARGETS),
              "load_average": {"before": list(load_before), "after": list(os.getloadavg())}}
    result["targets_met"] = {**targets_met(rows), **sharded_targets_met(sharded)}
    vector_sizes = tuple(n for n in sizes if n >= vector_env_scale.MIN_WORLDS)  # the vector env, 1 and K processes
    if vector_sizes and os.environ.get("NEXUS_BENCH_SCALE_VECTOR", "1") != "0":
        result["vector_env"] = vector_env_scale.run(vector_sizes)
    return result


def _row(rows: list[dict], solver: str, worlds: int, estimator: str = "truth") -> dict | None:
    return next((r for r in rows if (r["solver"], r["worlds"], r["estimator"]) == (solver, worlds, estimator)), None)


def targets_met(rows: list[dict]) -> dict[str, bool]:
    """The targets whose rows were measured (a quick run at fewer worlds judges none of the 1,024-world ones)."""
    met = {}
    for n in (1024, 4096):
        row = _row(rows, "freeflyer", n)
        if row is not None:
            met[f"freeflyer_drone_ticks_per_s_{n}"] = row["drone_ticks_per_s"] >= TARGETS[f"freeflyer_drone_ticks_per_s_{n}"]
    for solver in SOLVERS:
        row = _row(rows, solver, 1024)
        if row is not None:
            met[f"{solver}_stages_us_per_world_tick_1024"] = (row["stages_us_per_world_tick"]
                                                             <= TARGETS["stages_us_per_world_tick"])
    row = _row(rows, "freeflyer", 1024)
    if row is not None:
        met["freeflyer_step_us_per_world_tick_1024"] = (row["step_us_per_world_tick"]
                                                        <= TARGETS["freeflyer_step_us_per_world_tick"])
    return met


#: Both cores' targets (issue 46): the free-flyer sharded at 1,024 and 4,096 worlds, two shards at least 85 %
#: efficient at 1,024 worlds, and MuJoCo at 1,024 worlds at least 1.8 times its one-process figure.
SHARDED_TARGETS = {"freeflyer_sharded_drone_ticks_per_s_1024": 1.2e6, "freeflyer_sharded_drone_ticks_per_s_4096": 3.0e6,
                   "sharded_efficiency_1024": 0.85, "mujoco_sharded_over_one_process_1024": 1.8}


def sharded_targets_met(sharded: list[dict]) -> dict[str, bool]:
    """The both-cores targets whose rows were measured."""
    met = {}
    for row in sharded:
        solver, n = row["solver"], row["worlds"]
        if solver == "freeflyer" and n in (1024, 4096):
            met[f"freeflyer_sharded_drone_ticks_per_s_{n}"] = (
                row["sharded_drone_ticks_per_s"] >= SHARDED_TARGETS[f"freeflyer_sharded_drone_ticks_per_s_{n}"])
        if n == 1024:
            met[f"{solver}_sharded_efficiency_1024"] = row["efficiency"] >= SHARDED_TARGETS["sharded_efficiency_1024"]
        if solver == "mujoco" and n == 1024:
            met["mujoco_sharded_over_one_process_1024"] = (
                row["sharded_drone_ticks_per_s"] / row["one_process_drone_ticks_per_s"]
                >= SHARDED_TARGETS["mujoco_sharded_over_one_process_1024"])
    return met


def table(result: dict) -> list[tuple[str, str]]:
    lines = []
    for row in result["rows"]:
        solver, n, est = row["solver"], row["worlds"], row["estimator"]
        name = f"{solver}, N={n}, {est}"
        truth = est == "truth"
        rate = (f" (target >= {TARGETS[f'freeflyer_drone_ticks_per_s_{n}'] / 1e6:g} M)"
                if solver == "freeflyer" and n in (1024, 4096) and truth else "")
        stages = " (target <= 0.8)" if n == 1024 and truth else ""
        step = " (target <= 0.4)" if solver == "freeflyer" and n == 1024 and truth else ""
        lines += [
            (f"{name}: drone-ticks per second{rate}", f"{row['drone_ticks_per_s']:,.0f}"),
            (f"{name}: loop tick / bare step [µs] ({result['clock']})",
             f"{row['loop_tick_us']:.1f} / {row['bare_step_us']:.1f}"),
            (f"{name}: stages above the solver [µs a world a tick]{stages}", f"{row['stages_us_per_world_tick']:.3f}"),
            (f"{name}: solver step [µs a world a tick]{step}", f"{row['step_us_per_world_tick']:.3f}"),
        ]
    for skip in result["skipped"]:
        lines.append((f"{skip['solver']}, N={skip['worlds']}: skipped", skip["reason"]))
    for row in result.get("sharded", []):
        name = f"{row['solver']}, N={row['worlds']}, truth, wall clock"
        lines += [
            (f"{name}: one process / {row['shards']} shards [drone-ticks/s]",
             f"{row['one_process_drone_ticks_per_s']:,.0f} / {row['sharded_drone_ticks_per_s']:,.0f}"),
            (f"{name}: {row['shards']}-shard efficiency (wall clock; CPU time)",
             f"{row['efficiency']:.0%}; {row['cpu_efficiency']:.0%}"),
        ]
    if not result.get("sharded"):
        lines.append(("both cores (issue 46, point 3)", "not measured (NEXUS_BENCH_SCALE_SHARDS < 2)"))
    load = result["load_average"]
    lines.append(("load average (1 min) before / after", f"{load['before'][0]:.2f} / {load['after'][0]:.2f}"))
    if "vector_env" in result:
        lines += vector_env_scale.lines(result["vector_env"])
    return lines


def main(argv: list[str]) -> None:
    if argv[:1] == ["measure"]:
        solver, worlds, estimator, device, rounds = argv[1], int(argv[2]), argv[3], argv[4], int(argv[5])
        ticks, airborne_s = int(argv[6]) or None, float(argv[7])
        print(json.dumps(measure(solver, worlds, estimator, device, rounds, ticks, airborne_s)))
        return
    raise SystemExit("usage: python -m nexus.bench.scale measure SOLVER WORLDS ESTIMATOR DEVICE ROUNDS TICKS AIRBORNE_S")


if __name__ == "__main__":
    main(sys.argv[1:])
