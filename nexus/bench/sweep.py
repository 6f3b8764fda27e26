"""Suite ``sweep``: the same flights one after another in one process, and as ``nexus sweep`` on Ray.

* ``sweep_speedup`` (the target): the sequential time over the sweep's time
  for the same ``RUNS`` flights of the short mission (seeds 0..RUNS-1), both
  warm, both timed from the first point: ``sequential_s`` flies them one
  after another with :func:`nexus.runtime.run.run_flight` in this process after one
  untimed flight (kernels loaded), ``sweep_s`` flies them as one sweep on a
  local Ray instance with one worker per core, counted from the first point
  submitted, after the workers started and built one flight each (starting
  Ray and its workers is reported apart: ``ray_start_s``,
  ``workers_start_s``). The two are timed in alternating rounds (``ROUNDS``)
  and the best of each is kept. Target at least 1.5 on 2 cores: a sweep that
  is slower than no sweep at all reads below 1.
* Beside it, one point's time: ``point_wall_s`` in a worker (build, flight,
  files, mean over the points), ``sequential_point_s`` in the sequential
  loop (mean). When the workers slow each other down, the first grows
  against the second.
* ``sweep_over_ideal``: the sweep's wall time over the sum of its points'
  own times divided by the workers. It cannot see workers that slow each
  other down (their points' own times grow with them), so it is reported,
  not a target.
* With ``NEXUS_BENCH_SWEEP_LONG=1`` in the environment, the same figures
  (``long_*``) for ``RUNS`` points of ``LONG_SIM_S`` of sim time each: the
  figure-eight scene flown for ``LONG_LAPS`` laps, cut at ``LONG_SIM_S``
  (one round; minutes on a 2-core CPU, hence not by default).
* ``px4_runs_per_hour``: ``PX4_RUNS`` PX4-controller runs of the short
  mission's length (9 s of sim time), each against its own instance of the
  scripted peer (``nexus.px4.scripted_peer``) that a sweep starts as PX4
  (``-i K``, TCP 4560+K), answering at once with the hover row: Nexus's side
  of a PX4 fleet, PX4's own compute left out.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.sweep.cluster import connect
from nexus.sweep.overrides import write_overrides
from nexus.sweep.runner import SweepOptions, run_sweep

#: Short-mission runs per side.
RUNS = 8
#: Alternating rounds of the sequential loop and the sweep (the best of each is kept).
ROUNDS = 2
#: The suite's target: the sweep at least this many times faster than the sequential loop (2 cores).
SPEEDUP_TARGET = 1.5
#: The environment variable that adds the long points, their sim time [s], and the figure-eight laps that
#: last past it (2 s climb, 1 s hold, 8 s a lap).
LONG_ENV = "NEXUS_BENCH_SWEEP_LONG"
LONG_SIM_S = 60.0
LONG_LAPS = 8
LAPS = "/scene/trajectory nexus:laps"
PX4_RUNS = 4
#: Sim time of the PX4 runs [s]: the short mission's length.
PX4_DURATION_S = 9.0
#: The Astro Max's hover command on the first four outputs.
HOVER = (0.5722,) * 4

#: A stand-in for PX4's bin/px4: parses ``-i K`` and, retrying as PX4 does until the simulator listens,
#: answers on TCP 4560+K with the hover row.
PEER_BINARY = """#!{python}
import sys, time
from nexus.px4.scripted_peer import main
k = int(sys.argv[sys.argv.index("-i") + 1])
deadline = time.monotonic() + 300.0
while True:
    try:
        main(["--port", str(4560 + k), "--row", {row}])
        break
    except ConnectionRefusedError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
"""


def _sweep_file(folder: Path, text: str, name: str = "sweep.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def _sequential(points: list[tuple], device: str, folder: Path) -> tuple[float, list[float]]:
    """Fly ``points`` ((RunConfig, attributes) each) one after another; (the whole time, each point's) [s]."""

    times = []
    started = time.perf_counter()
    for index, (config, attributes) in enumerate(points):
        began = time.perf_counter()
        out = folder / f"point{index}"
        out.mkdir(parents=True)
        vehicle, scene = write_overrides(out, config.vehicle, config.scene, attributes)  # as a sweep's point does
        run_flight(replace(config, vehicle=vehicle, scene=scene, device=device), out, progress=False)
        times.append(time.perf_counter() - began)
    return time.perf_counter() - started, times


def _compare(name: str, sweep_text: str, points: list[tuple], device: str, folder: Path, rounds: int) -> dict:
    """The same points, flown one after another and as a sweep, in alternating rounds; the best of each."""

    config, _ = points[0]
    run_flight(replace(config, duration=1.0, device=device), folder / f"{name}-warm", progress=False)  # kernels loaded
    spec = _sweep_file(folder, sweep_text, f"{name}.toml")
    best_sequential, best_sweep = None, None
    for round_ in range(rounds):
        sequential = _sequential(points, device, folder / f"{name}-seq{round_}")
        swept = run_sweep(spec, SweepOptions(out=folder / f"{name}-sweep{round_}", progress=False))
        if best_sequential is None or sequential[0] < best_sequential[0]:
            best_sequential = sequential
        if best_sweep is None or swept.wall_s < best_sweep.wall_s:
            best_sweep = swept
    sequential_s, point_times = best_sequential
    return {
        "sequential_s": sequential_s,
        "sequential_point_s": sum(point_times) / len(point_times),
        "sweep_s": best_sweep.wall_s,
        "point_wall_s": sum(r["wall_s"] for r in best_sweep.rows) / len(best_sweep.rows),
        "sweep_speedup": sequential_s / best_sweep.wall_s,
        "sweep_over_ideal": best_sweep.sweep_over_ideal,
        "workers": best_sweep.workers,
        "workers_start_s": best_sweep.workers_start_s,
        "failed": best_sweep.failed,
    }


def run(device: str = "cpu") -> dict:
    workers = os.cpu_count() or 1
    long = os.environ.get(LONG_ENV, "") not in ("", "0")
    seeds = ", ".join(str(s) for s in range(RUNS))
    with tempfile.TemporaryDirectory(prefix="nexus-bench-sweep-") as tmp:
        folder = Path(tmp)
        started = time.perf_counter()
        cluster = connect(None, workers)  # the sweep's own local Ray instance (loopback only), kept for every sweep
        ray_start_s = time.perf_counter() - started
        try:
            short = _compare("short", f'[run]\nmission = "short"\ndevice = "{device}"\n[grid]\nseed = [{seeds}]\n',
                             [(RunConfig(mission="short", seed=seed, device=device), {}) for seed in range(RUNS)],
                             device, folder, ROUNDS)
            longer = None
            if long:
                laps = {LAPS: LONG_LAPS}
                longer = _compare("long", f'[run]\nscene = "figure_eight"\nduration = {LONG_SIM_S}\n'
                                          f'device = "{device}"\n[grid]\nseed = [{seeds}]\n"{LAPS}" = [{LONG_LAPS}]\n',
                                  [(RunConfig(scene="figure_eight", duration=LONG_SIM_S, seed=seed, device=device),
                                    laps) for seed in range(RUNS)], device, folder, 1)
            binary = folder / "bin" / "px4"
            binary.parent.mkdir()
            binary.write_text(PEER_BINARY.format(python=sys.executable, row=", ".join(repr(str(v)) for v in HOVER)))
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
            px4_seeds = ", ".join(str(s) for s in range(PX4_RUNS))
            px4 = run_sweep(_sweep_file(folder, f'[run]\ncontroller = "px4"\nduration = {PX4_DURATION_S}\n'
                                                f'device = "{device}"\n[grid]\nseed = [{px4_seeds}]\n'
                                                f'[px4]\nbinary = "{binary}"\nmission = "none"\n', "px4.toml"),
                            SweepOptions(out=folder / "px4", progress=False))
        finally:
            cluster.close()
    failed = short.pop("failed") + px4.failed + (longer.pop("failed") if longer else 0)
    result = {
        "suite": "sweep",
        "device": device,
        "runs": RUNS,
        "rounds": ROUNDS,
        **short,
        "sequential_runs_per_hour": RUNS / short["sequential_s"] * 3600.0,
        "sweep_runs_per_hour": RUNS / short["sweep_s"] * 3600.0,
        "ray_start_s": ray_start_s,
        "px4_runs": PX4_RUNS,
        "px4_s": px4.wall_s,
        "px4_runs_per_hour": PX4_RUNS / px4.wall_s * 3600.0,
        "px4_sweep_over_ideal": px4.sweep_over_ideal,
        "failed_runs": failed,
    }
    if longer is not None:
        result.update({f"long_{key}": value for key, value in longer.items() if key != "workers"})
        result["long_sim_s"] = LONG_SIM_S
    result["targets_met"] = {"sweep_speedup": result["sweep_speedup"] >= SPEEDUP_TARGET and failed == 0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    rows = [
        (f"{result['runs']} short runs one after another [s]", f"{result['sequential_s']:.1f}"),
        ("  one point, in the sequential loop [s]", f"{result['sequential_point_s']:.2f}"),
        (f"the same as nexus sweep on {result['workers']} workers [s]", f"{result['sweep_s']:.1f}"),
        ("  one point, in a worker [s]", f"{result['point_wall_s']:.2f}"),
        (f"sweep speedup (target >= {SPEEDUP_TARGET})", f"{result['sweep_speedup']:.2f}"),
        ("  runs per hour, sequential / sweep",
         f"{result['sequential_runs_per_hour']:,.0f} / {result['sweep_runs_per_hour']:,.0f}"),
        ("  sweep over ideal", f"{result['sweep_over_ideal']:.3f}"),
        ("starting Ray / its workers [s]", f"{result['ray_start_s']:.1f} / {result['workers_start_s']:.1f}"),
    ]
    if "long_sweep_speedup" in result:
        sim = f"{result['long_sim_s']:g} s"
        rows += [
            (f"{result['runs']} runs of {sim} sim one after another [s]", f"{result['long_sequential_s']:.1f}"),
            ("  one point, in the sequential loop [s]", f"{result['long_sequential_point_s']:.2f}"),
            (f"the same as nexus sweep [s]", f"{result['long_sweep_s']:.1f}"),
            ("  one point, in a worker [s]", f"{result['long_point_wall_s']:.2f}"),
            (f"sweep speedup, {sim} sim", f"{result['long_sweep_speedup']:.2f}"),
        ]
    rows += [
        (f"{result['px4_runs']} PX4 runs (scripted peer), runs per hour", f"{result['px4_runs_per_hour']:,.0f}"),
        ("  PX4 sweep over ideal", f"{result['px4_sweep_over_ideal']:.3f}"),
        ("failed runs", f"{result['failed_runs']}"),
    ]
    return rows
