"""The ``scale`` suite's figure on both cores: the loop's drone-ticks per second with the worlds in one process
and sharded over two, by the wall clock (issue 46, point 3).

``nexus run --shards K`` splits ``[0, N)`` into contiguous ranges (:func:`nexus.runtime.shards.shard_ranges`)
and flies each as the run of ``first_world`` = the range's start in a process of its own. This module times
the same split, the loop phase only (the model build and the take-off are the run's fixed cost, not its rate):
each shard is a child process (``python -m nexus.bench.scale_shards loop ...``) that builds its flight, flies
``AIRBORNE_S`` of sim untimed, says ``ready`` and waits. The parent then starts every round on all shards at
once (one line on each child's stdin) and reads back each child's round: the start and end on the machine's
monotonic clock (one clock for every process on Linux) and the process CPU time it took. A round's wall time
is the last end less the first start over the shards, so a shard that waits for a core counts against the
figure; the best of ``ROUNDS`` rounds is kept. The one-process figure is the same protocol with one shard of
all N worlds, so both are the loop at N worlds by the same clock.

* ``one_process_drone_ticks_per_s``: N × ticks / the best round's wall time, one process;
* ``sharded_drone_ticks_per_s``: the same with the worlds over ``shards`` processes;
* ``efficiency``: sharded / (shards × one process): 1 when each core does what one did alone;
* ``cpu_efficiency``: the CPU time a world-tick takes in one process over what it takes summed over the
  shards (each side's least round): what sharding costs in work, which a busy machine does not hide (the
  wall-clock figures need free cores).

On a machine that other jobs share, a wall-clock figure is what is left to the suite; the suite records
the load average (``os.getloadavg``) before and after beside it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import warp as wp

from nexus.runtime.config import RunConfig
from nexus.runtime.flight import fly
from nexus.runtime.flight_session import FlightSession
from nexus.runtime.shards import shard_ranges

#: Sim time flown (untimed) before the rounds, so every world is in the air [s].
AIRBORNE_S = 2.0
ROUNDS = 5
#: About this many world-ticks a round (at least 64 ticks, at most 1,024; a multiple of the 16 ticks of a replay).
ROUND_WORLD_TICKS = 262_144


def round_ticks(worlds: int) -> int:
    """Ticks one round flies: about :data:`ROUND_WORLD_TICKS` world-ticks, 64 to 1,024 ticks."""
    return max(64, min(1024, ROUND_WORLD_TICKS // max(1, worlds) // 16 * 16))


def shard_config(solver: str, worlds: int, first_world: int, device: str = "cpu") -> RunConfig:
    """Shard ``first_world .. first_world + worlds`` of ``nexus run --worlds N --record summary --solver S``."""
    return RunConfig(worlds=worlds, first_world=first_world, record_mode="summary", solver=solver,
                     estimator="truth", device=device)


def child(solver: str, worlds: int, first_world: int, device: str, ticks: int, airborne_s: float) -> None:
    """One shard's side: build, fly to the air, then one timed round per ``go`` line on stdin, a JSON line each."""
    began = time.perf_counter()
    with FlightSession(shard_config(solver, worlds, first_world, device)) as session:
        flight = session.flight
        build_s = time.perf_counter() - began
        fly(flight, None, int(round(airborne_s / flight.options.dt)))
        wp.synchronize_device(device)
        print(json.dumps({"ready": True, "build_s": build_s}), flush=True)
        for line in sys.stdin:
            if line.strip() != "go":
                break
            cpu, start = time.process_time(), time.monotonic()
            fly(flight, None, ticks)
            wp.synchronize_device(device)
            end = time.monotonic()
            print(json.dumps({"start": start, "end": end, "cpu_s": time.process_time() - cpu, "ticks": ticks,
                              "worlds": flight.loop.worlds, "first_world": flight.options.first_world}), flush=True)


def _start(solver: str, start: int, count: int, device: str, ticks: int, airborne_s: float) -> subprocess.Popen:
    command = [sys.executable, "-m", "nexus.bench.scale_shards", "loop", solver, str(count), str(start), device,
               str(ticks), repr(airborne_s)]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _line(process: subprocess.Popen, what: str) -> dict:
    line = process.stdout.readline()
    if not line:
        process.wait()
        raise RuntimeError(f"scale shards: a shard ended before {what} (exit {process.returncode}):\n"
                           f"{process.stderr.read()[-2000:]}")
    return json.loads(line)


def timed_rounds(solver: str, worlds: int, shards: int, device: str = "cpu", rounds: int = ROUNDS,
                 ticks: int | None = None, airborne_s: float = AIRBORNE_S) -> dict:
    """The best round's wall time of ``worlds`` worlds flown in ``shards`` processes at once (see the module doc)."""
    ticks = ticks or round_ticks(worlds)
    ranges = shard_ranges(worlds, shards)
    began = time.perf_counter()
    processes = [_start(solver, start, count, device, ticks, airborne_s) for start, count in ranges]
    try:
        builds = [_line(p, "it was ready")["build_s"] for p in processes]
        walls, cpus = [], []
        for _ in range(rounds):
            for p in processes:
                p.stdin.write("go\n")
                p.stdin.flush()
            done = [_line(p, "its round ended") for p in processes]
            flown = [(d["first_world"], d["worlds"], d["ticks"]) for d in done]
            if flown != [(start, count, ticks) for start, count in ranges]:
                raise RuntimeError(f"scale shards: the shards flew {flown}, not {ranges} for {ticks} ticks each")
            walls.append(max(d["end"] for d in done) - min(d["start"] for d in done))
            cpus.append([d["cpu_s"] for d in done])
        for p in processes:
            p.stdin.close()
        for p in processes:
            if p.wait(timeout=120) != 0:
                raise RuntimeError(f"scale shards: a shard exited {p.returncode}:\n{p.stderr.read()[-2000:]}")
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    best = min(range(rounds), key=walls.__getitem__)
    return {"shards": len(ranges), "ranges": ranges, "ticks": ticks, "rounds": rounds, "round_wall_s": walls,
            "best_wall_s": walls[best], "best_cpu_s": cpus[best], "build_s": max(builds),
            "cpu_us_per_world_tick": min(sum(c) for c in cpus) / (worlds * ticks) * 1e6,
            "drone_ticks_per_s": worlds * ticks / walls[best], "wall_s": time.perf_counter() - began}


def measure(solver: str, worlds: int, device: str = "cpu", shards: int = 2, rounds: int = ROUNDS,
            ticks: int | None = None, airborne_s: float = AIRBORNE_S) -> dict:
    """One row: ``worlds`` worlds in one process, then in ``shards`` processes, by the wall clock."""
    load_before = os.getloadavg()[0]
    one = timed_rounds(solver, worlds, 1, device, rounds, ticks, airborne_s)
    many = timed_rounds(solver, worlds, shards, device, rounds, ticks, airborne_s)
    return {
        "solver": solver,
        "worlds": worlds,
        "shards": many["shards"],
        "one_process_drone_ticks_per_s": one["drone_ticks_per_s"],
        "sharded_drone_ticks_per_s": many["drone_ticks_per_s"],
        "efficiency": many["drone_ticks_per_s"] / (many["shards"] * one["drone_ticks_per_s"]),
        "cpu_efficiency": one["cpu_us_per_world_tick"] / many["cpu_us_per_world_tick"],
        "round_ticks": one["ticks"],
        "rounds": rounds,
        "one_process": one,
        "sharded": many,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }


def main(argv: list[str]) -> None:
    if argv[:1] == ["loop"]:
        solver, worlds, first_world, device = argv[1], int(argv[2]), int(argv[3]), argv[4]
        child(solver, worlds, first_world, device, int(argv[5]), float(argv[6]))
        return
    raise SystemExit("usage: python -m nexus.bench.scale_shards loop SOLVER WORLDS FIRST_WORLD DEVICE TICKS AIRBORNE_S")


if __name__ == "__main__":
    main(sys.argv[1:])
