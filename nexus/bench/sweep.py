"""Suite ``sweep``: runs per hour of the short mission, one after another versus ``nexus sweep`` on Ray.

* ``sequential_runs_per_hour``: ``RUNS`` flights of the short mission
  (seeds 0..RUNS-1) flown one after another by :func:`nexus.run.run_flight`
  in this process, after one untimed flight (kernels loaded): the best a
  person gets without a sweep, with no process start per run.
* ``sweep_runs_per_hour``: the same flights as one sweep on a local Ray
  instance with one worker per core, counted from the first point submitted
  (starting Ray and its workers is reported apart: ``ray_start_s``,
  ``workers_start_s``).
* ``sweep_over_ideal``: the sweep's wall time over the sum of its points'
  own wall times (each point's build, flight and files, in its worker)
  divided by the workers: 1.0 is a sweep with no overhead at all. Target at
  most 1.15 on 2 cores for 8 short runs.
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
from pathlib import Path

#: Short-mission runs per side.
RUNS = 8
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


def _sweep_file(folder: Path, text: str) -> Path:
    path = folder / "sweep.toml"
    path.write_text(text)
    return path


def _sequential(device: str, folder: Path) -> float:
    from nexus.flight import RunConfig
    from nexus.run import run_flight

    run_flight(RunConfig(mission="short", device=device), device, folder / "warm", progress=False)
    started = time.perf_counter()
    for seed in range(RUNS):
        run_flight(RunConfig(mission="short", seed=seed, device=device), device, folder / f"seq{seed}", progress=False)
    return time.perf_counter() - started


def run(device: str = "cpu") -> dict:
    from nexus.sweep.cluster import connect
    from nexus.sweep.runner import SweepOptions, run_sweep

    workers = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="nexus-bench-sweep-") as tmp:
        folder = Path(tmp)
        sequential_s = _sequential(device, folder)
        started = time.perf_counter()
        cluster = connect(None, workers)  # the sweep's own local Ray instance (loopback only), kept for both sweeps
        ray_start_s = time.perf_counter() - started
        try:
            seeds = ", ".join(str(s) for s in range(RUNS))
            swept = run_sweep(_sweep_file(folder, f'[run]\nmission = "short"\ndevice = "{device}"\n'
                                                  f'[grid]\nseed = [{seeds}]\n'),
                              SweepOptions(out=folder / "sweep", progress=False))
            binary = folder / "bin" / "px4"
            binary.parent.mkdir()
            binary.write_text(PEER_BINARY.format(python=sys.executable, row=", ".join(repr(str(v)) for v in HOVER)))
            binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
            px4_seeds = ", ".join(str(s) for s in range(PX4_RUNS))
            px4 = run_sweep(_sweep_file(folder, f'[run]\ncontroller = "px4"\nduration = {PX4_DURATION_S}\n'
                                                f'device = "{device}"\n[grid]\nseed = [{px4_seeds}]\n'
                                                f'[px4]\nbinary = "{binary}"\nmission = "none"\n'),
                            SweepOptions(out=folder / "px4", progress=False))
        finally:
            cluster.close()
    failed = swept.failed + px4.failed
    result = {
        "suite": "sweep",
        "device": device,
        "runs": RUNS,
        "workers": swept.workers,
        "sequential_s": sequential_s,
        "sequential_runs_per_hour": RUNS / sequential_s * 3600.0,
        "sweep_s": swept.wall_s,
        "sweep_runs_per_hour": RUNS / swept.wall_s * 3600.0,
        "sweep_over_ideal": swept.sweep_over_ideal,
        "point_wall_s": sum(r["wall_s"] for r in swept.rows) / len(swept.rows),
        "ray_start_s": ray_start_s,
        "workers_start_s": swept.workers_start_s,
        "px4_runs": PX4_RUNS,
        "px4_s": px4.wall_s,
        "px4_runs_per_hour": PX4_RUNS / px4.wall_s * 3600.0,
        "px4_sweep_over_ideal": px4.sweep_over_ideal,
        "failed_runs": failed,
    }
    result["targets_met"] = {"sweep_over_ideal": result["sweep_over_ideal"] <= 1.15 and failed == 0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        (f"{result['runs']} short runs one after another [s]", f"{result['sequential_s']:.1f}"),
        ("  runs per hour, sequential", f"{result['sequential_runs_per_hour']:,.0f}"),
        (f"the same as nexus sweep on {result['workers']} workers [s]", f"{result['sweep_s']:.1f}"),
        ("  runs per hour, sweep", f"{result['sweep_runs_per_hour']:,.0f}"),
        ("sweep over ideal (target <= 1.15)", f"{result['sweep_over_ideal']:.3f}"),
        ("one point's own wall time, mean [s]", f"{result['point_wall_s']:.2f}"),
        ("starting Ray / its workers [s]", f"{result['ray_start_s']:.1f} / {result['workers_start_s']:.1f}"),
        (f"{result['px4_runs']} PX4 runs (scripted peer), runs per hour", f"{result['px4_runs_per_hour']:,.0f}"),
        ("  PX4 sweep over ideal", f"{result['px4_sweep_over_ideal']:.3f}"),
        ("failed runs", f"{result['failed_runs']}"),
    ]
