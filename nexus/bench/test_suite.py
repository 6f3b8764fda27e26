"""Suite ``test``: ``nexus test``'s speed: its scenarios spread over the cores, and what checking costs.

* ``test_speedup`` (target at least 1.5 on 2 cores): the shipped CPU scenarios (``scenarios/``, PX4's
  skipped) over ``SEEDS`` seeds each, flown one after another in this process (after one untimed flight of
  each scenario: kernels loaded) over the same points flown by the sweep machinery on one local Ray worker
  per core (:func:`nexus.sweep.runner.fly_points`), both timed from the first flight (Ray and its workers
  start before, reported apart as ``workers_start_s``).
* ``check_overhead`` (target at most 0.05): for the passing scenario ``takeoff_hover_land``, the time to
  read its record and judge every check over the wall time of the same flight flown as ``nexus run`` flies
  it (:func:`nexus.runtime.run.run_flight`: build, fly, write), each the best of ``ROUNDS``.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from nexus.core.warp_setup import init_warp
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.runtime.run_folder import RunFolder
from nexus.scenario.checks import evaluate_run
from nexus.scenario.runner import ScenarioOptions, prepare
from nexus.scenario.spec import load
from nexus.sweep.cluster import connect
from nexus.sweep.runner import SweepOptions, fly_points
from nexus.sweep.spec import Axis, SweepSpec
from nexus.sweep.task import fly_point

#: Seeds each scenario is flown with.
SEEDS = 4
ROUNDS = 3
SPEEDUP_TARGET = 1.5
OVERHEAD_TARGET = 0.05
#: The shipped scenarios (the repository's ``scenarios/``).
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
PASSING = "takeoff_hover_land.toml"


def _cases(folder: Path):
    return prepare([SCENARIOS], ScenarioOptions(out=folder, seeds=list(range(SEEDS)), yes=True))


def _sequential(points, folder: Path) -> float:
    started = time.perf_counter()
    for point in points:
        fly_point(point.as_dict(), str(folder / point.id))
    return time.perf_counter() - started


def _check_overhead(folder: Path) -> dict:
    flights, checks = [], []
    for round_ in range(ROUNDS):
        started = time.perf_counter()
        scenario = load(SCENARIOS / PASSING)
        out = folder / f"overhead{round_}"
        run_flight(RunConfig(**scenario.run, scenario=scenario.ring), out, progress=False)
        flights.append(time.perf_counter() - started)
        started = time.perf_counter()
        results = evaluate_run(scenario.checks, RunFolder(out).record(), RunFolder(out).peek_info())
        checks.append(time.perf_counter() - started)
        assert all(r.passed for r in results), [r.message() for r in results if not r.passed]
    return {"flight_s": min(flights), "check_s": min(checks), "check_overhead": min(checks) / min(flights)}


def run(device: str = "cpu") -> dict:
    init_warp(False)
    workers = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="nexus-bench-test-") as tmp:
        folder = Path(tmp)
        cases, points = _cases(folder)
        firsts = {}
        for point in points:  # one untimed flight of each scenario: its kernels loaded
            firsts.setdefault(point.values["scenario"], point)
        for point in firsts.values():
            fly_point(point.as_dict(), str(folder / "warm" / point.id))
        overhead = _check_overhead(folder)
        sequential_s = _sequential(points, folder / "sequential")
        started = time.perf_counter()
        cluster = connect(None, workers)
        ray_start_s = time.perf_counter() - started
        try:
            spec = SweepSpec(SCENARIOS, {}, [Axis("scenario"), Axis("seed")], "scenarios")
            swept = fly_points(spec, points, SweepOptions(out=folder / "swept", progress=False))
        finally:
            cluster.close()
    result = {
        "suite": "test",
        "device": device,
        "scenarios": len(firsts),
        "seeds": SEEDS,
        "runs": len(points),
        "sequential_s": sequential_s,
        "parallel_s": swept.wall_s,
        "workers": swept.workers,
        "ray_start_s": ray_start_s,
        "workers_start_s": swept.workers_start_s,
        "test_speedup": sequential_s / swept.wall_s,
        "failed_runs": swept.failed,
        **overhead,
    }
    result["targets_met"] = {"test_speedup": result["test_speedup"] >= SPEEDUP_TARGET and swept.failed == 0,
                             "check_overhead": result["check_overhead"] <= OVERHEAD_TARGET}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        (f"{result['runs']} scenario runs ({result['scenarios']} scenarios x {result['seeds']} seeds) one after "
         "another [s]", f"{result['sequential_s']:.1f}"),
        (f"the same through the sweep machinery on {result['workers']} workers [s]", f"{result['parallel_s']:.1f}"),
        (f"test speedup (target >= {SPEEDUP_TARGET})", f"{result['test_speedup']:.2f}"),
        ("starting Ray / its workers [s]", f"{result['ray_start_s']:.1f} / {result['workers_start_s']:.1f}"),
        ("one passing flight as nexus run flies it [s]", f"{result['flight_s']:.2f}"),
        ("  judging its checks [s]", f"{result['check_s']:.4f}"),
        (f"check overhead (target <= {OVERHEAD_TARGET})", f"{result['check_overhead']:.4f}"),
        ("failed runs", f"{result['failed_runs']}"),
    ]
