"""Where the default flight's tick goes on this machine: each stage's graph cost, and the record's drain.

    python tools/stage_costs.py
    NEXUS_WORLDS=16 python tools/stage_costs.py   # the same flight with 16 worlds
    NEXUS_VEHICLE=tests/data/astro_max_power_ground.usda python tools/stage_costs.py   # another vehicle file
    NEXUS_SOLVER=freeflyer NEXUS_WORLDS=1024 python tools/stage_costs.py   # another solver

Flies the default mission to 2 s (in the air), then for each stage of the ring
captures 50 copies of that stage alone into one graph and replays it (best of
7 × 20 replays, process CPU time, the tick state restored before each try),
printing graph nodes and µs per stage run. Then it flies the mission to its
end and times the drain of the whole record table (10,240 rows, the 6,920 of
the flight and zeros after, as the flight suite's drain rounds do): the
columns from the table, and the Parquet write with Nexus's options against
pyarrow's defaults. The figures in
docs/benchmarking.md ("Kernels per tick", per-stage costs) come from here.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import warp as wp

from nexus.core.executors import graph_nodes
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession
from nexus.record.writer import PARQUET_OPTIONS

COPIES, REPLAYS, TRIES = 50, 20, 7


def best_of(tries: int, run, before=None) -> float:
    """The smallest process CPU time [s] of ``tries`` calls of ``run``; ``before`` runs untimed ahead of each."""
    best = float("inf")
    for _ in range(tries):
        if before is not None:
            before()
        began = time.process_time()
        run()
        best = min(best, time.process_time() - began)
    return best


def stage_costs(flight) -> list[tuple[str, int, float]]:
    """(stage, graph nodes per run, µs per run) for each stage, in ring order."""
    loop = flight.loop
    snapshot = loop.snapshot()
    rows = []
    for stage in loop.plan.stages:
        io = loop.ios[id(stage)]
        with wp.ScopedCapture(device=loop.device) as capture:
            for _ in range(COPIES):
                stage.run(io)

        def replay(graph=capture.graph) -> None:
            for _ in range(REPLAYS):
                wp.capture_launch(graph)

        seconds = best_of(TRIES, replay, before=lambda: loop.restore(snapshot))
        rows.append((stage.name, graph_nodes(capture.graph) // COPIES, seconds / (COPIES * REPLAYS) * 1e6))
    loop.restore(snapshot)
    return rows


def drain_costs(flight, folder: Path) -> list[tuple[str, float, float]]:
    """(what, ms, kB) for the drain of a full record table."""
    recorder = flight.recorder
    columns = recorder.drain(recorder.capacity)
    rows = [("columns from the table", best_of(TRIES, lambda: recorder.drain(recorder.capacity)) * 1e3, 0.0)]
    table = pa.table(columns)
    for name, options in (("Parquet, Nexus's options", PARQUET_OPTIONS), ("Parquet, pyarrow's defaults", {})):
        path = folder / f"{len(rows)}.parquet"

        def write(options=options, path=path) -> None:
            with pq.ParquetWriter(path, table.schema, **options) as writer:
                writer.write_table(table)

        rows.append((name, best_of(TRIES, write) * 1e3, os.path.getsize(path) / 1e3))
    return rows


def main() -> None:
    config = RunConfig(device="cpu", worlds=int(os.environ.get("NEXUS_WORLDS", "1")),
                       vehicle=os.environ.get("NEXUS_VEHICLE", "astro_max_base"),
                       solver=os.environ.get("NEXUS_SOLVER", RunConfig().solver))
    with FlightSession(config) as session:  # no record written: drain_costs times the drain itself
        flight = session.flight
        session.fly(int(round(2.0 / config.dt)))  # airborne, as the flight suite's rounds are
        total = 0.0
        print(f"{'stage':16s} {'nodes':>5s} {'µs':>7s}")
        for name, nodes, micros in stage_costs(flight):
            total += micros
            print(f"{name:16s} {nodes:5d} {micros:7.2f}")
        print(f"{'sum':16s} {'':5s} {total:7.2f}")
        session.fly(int(round(60.0 / config.dt)))  # to the mission's end: the table holds the whole flight
        with tempfile.TemporaryDirectory() as folder:
            for name, millis, size in drain_costs(flight, Path(folder)):
                print(f"drain: {name:30s} {millis:6.2f} ms" + (f"  {size:6.0f} kB" if size else ""))

if __name__ == "__main__":
    main()
