"""Running a sweep on Ray: one task per point, results taken with ``ray.wait`` as they finish.

Ray does the scheduling, the resource accounting (CPUs per run, a GPU for a
CUDA run) and the retries of a task whose worker died (``max_retries``); this
module only keeps at most ``parallel`` points in flight, records each result
once, and keeps ``DIR`` resumable:

* a point whose folder holds a run that ended by itself (``finished`` or
  ``failed`` in its run.json) is skipped by ``--resume`` and its row is read
  back from the folder;
* any other folder (a run killed, interrupted or never started) is emptied
  and flown again; nothing from a half-written folder is counted;
* a worker that dies is retried by Ray up to ``max_retries`` times, then the
  point is recorded as failed (``worker-died``) and the sweep goes on;
* Ctrl-C (or SIGTERM) cancels the points in flight with Ray's cancel (a
  KeyboardInterrupt in each task, taken between Python bytecodes: a flying
  run ends as ``interrupted`` and stops its PX4), force-cancels what has not
  ended 10 s later (a run stuck in one call; its folder is then a killed run;
  the PX4 link waits in slices of at most 0.2 s, so a run waiting for PX4 is
  not one), ends any PX4 a killed worker
  left behind, writes sweep.parquet for what finished, and re-raises.

SIGTERM takes the Ctrl-C path: ``ray.init`` puts in the core worker's own
SIGTERM handler (it prints a stack and aborts the process, exit 134), so
:func:`run_sweep` puts in one of its own after Ray started, which raises
:class:`~nexus.runtime.stopping.Terminated` (a KeyboardInterrupt, so the
command ends 143 as every Nexus command stopped by SIGTERM). A SIGTERM while
the sweep is already stopping is held: the stop goes on to its end. When :func:`fly_points` returns or raises (``nexus
sweep`` and ``nexus test`` alike), the handler the process had before it
started Ray is back in place, not Ray's nor the sweep's.
"""

from __future__ import annotations

import json
import logging
import math
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from nexus.record.durable import write_atomic
from nexus.runtime.stopping import Terminated
from nexus.sweep.cluster import connect
from nexus.sweep.figures import run_figures, run_info
from nexus.sweep.points import Point, check_attribute_values, count, expand, varied_keys
from nexus.sweep.progress import SweepProgress
from nexus.sweep.px4_fleet import end_leftovers
from nexus.sweep.spec import MAX_POINTS_WITHOUT_YES, SweepError, parse
from nexus.sweep.table import OK_STATUSES, write_table
from nexus.sweep.gate import Gate
from nexus.sweep.task import fly_point, unpack, warm

log = logging.getLogger("nexus")

#: What DIR holds besides sweep.parquet: the sweep file's points, and one run folder per point.
SWEEP_FILE = "sweep.json"
RUNS = "runs"
#: Statuses of a run that ended by itself: --resume keeps these.
ENDED = ("finished", "failed")
#: Seconds cancelled runs get to end by themselves before their workers are killed [s].
CANCEL_GRACE_S = 10.0
#: Worker deaths Ray retries per point before the point is recorded as failed.
DEFAULT_RETRIES = 2


@dataclass
class SweepOptions:
    out: Path
    parallel: int | None = None
    address: str | None = None
    resume: bool = False
    yes: bool = False
    allow_commands: bool = False
    dashboard: bool = False
    #: CPUs Ray reserves for each run (a fraction lets more runs share a core).
    cpus_per_run: float = 1.0
    max_retries: int = DEFAULT_RETRIES
    progress: bool = True
    #: Return each run's files through Ray instead of writing DIR from the worker (None: when not local).
    ship: bool | None = None


@dataclass
class SweepResult:
    out: Path
    rows: list[dict] = field(default_factory=list)
    wall_s: float = 0.0
    workers: int = 1
    skipped: int = 0
    #: Time to start the workers and import the flight code in each, before the first point [s].
    workers_start_s: float = 0.0

    @property
    def failed(self) -> int:
        return sum(1 for r in self.rows if r.get("status") not in OK_STATUSES)

    @property
    def sweep_over_ideal(self) -> float:
        """Wall time over the sum of the points' wall times shared by the workers (1: no overhead at all).

        The wall time counts from the first point submitted, after the workers started (``workers_start_s``).
        Workers that slow each other down make the points' own times grow with the wall time, so this stays
        near 1 for a sweep slower than flying its points one after another: the bench suite's
        ``sweep_speedup`` is the measure of that.
        """
        flown = [r["wall_s"] for r in self.rows if not r.get("resumed") and r.get("wall_s") is not None]
        ideal = sum(flown) / max(1, min(self.workers, len(flown) or 1))
        return self.wall_s / ideal if ideal > 0 else math.nan


def prepare(spec_path: Path, options: SweepOptions) -> tuple:
    """Everything checked before any run starts: the file, the points, the attributes, commands, DIR."""
    spec = parse(spec_path)
    asked = count(spec)
    if asked > MAX_POINTS_WITHOUT_YES and not options.yes:
        raise SweepError(f"{spec_path}: {asked} points is more than {MAX_POINTS_WITHOUT_YES}; pass --yes to "
                         "run them all, or make the grid smaller")
    points = expand(spec)
    check_attribute_values(spec, points)
    if spec.px4 is not None and spec.px4.command and not options.allow_commands:
        raise SweepError(f"{spec_path}: [px4] command {spec.px4.command[0]!r} would run a program of the sweep "
                         "file's; pass --allow-commands if you trust this file")
    out = Path(options.out)
    if out.exists() and not out.is_dir():
        raise SweepError(f"--out {out} is a file; give a folder")
    held = (out / SWEEP_FILE).exists() or (out / RUNS).is_dir() and any((out / RUNS).iterdir())
    if held and not options.resume:
        raise SweepError(f"--out {out} already holds a sweep; pass --resume to finish it, or choose another folder")
    if options.parallel is not None and options.parallel < 1:
        raise SweepError(f"--parallel {options.parallel}: give 1 or more")
    return spec, points


def _write_sweep_file(out: Path, spec, points: list[Point]) -> None:
    data = {"sweep_file": str(spec.path), "mode": spec.mode, "parameters": varied_keys(spec),
            "points": [p.as_dict() for p in points]}
    write_atomic(out / SWEEP_FILE, (json.dumps(data, indent=2, sort_keys=True, default=str) + "\n").encode())


def _ended_row(point: Point, folder: Path) -> dict | None:
    """The row of a point whose folder already holds a run that ended by itself (for --resume), else None."""
    info = run_info(folder)
    if info is None or info.get("status") not in ENDED:
        return None
    row = {"point": point.id, **run_figures(folder), "resumed": True}
    wall = info.get("wall_time_s")
    row["wall_s"] = wall
    return row


def _uses_gpu(point: Point) -> bool:
    return str(point.config.device).startswith("cuda")


def _sigterm_handler(handler) -> object:
    """Put in ``handler`` for SIGTERM (in the main thread only); return the handler to put back, or None."""
    if threading.current_thread() is not threading.main_thread():
        return None
    before = signal.signal(signal.SIGTERM, handler)
    return signal.SIG_DFL if before is None else before  # None: a handler put in outside Python (Ray's)


class _Terminated:
    """The sweep's SIGTERM handler: Ctrl-C's path (a KeyboardInterrupt, :class:`Terminated`), remembering that it
    was SIGTERM, since Ray's waits turn any KeyboardInterrupt raised in them into a plain one."""

    def __init__(self):
        self.seen = False

    def __call__(self, _number, _frame) -> None:
        self.seen = True
        raise Terminated("terminated by SIGTERM")


def _held(_number, _frame) -> None:
    log.warning("SIGTERM received while the sweep is stopping: finishing the stop first")


@contextmanager
def _sigterm_kept():
    """The SIGTERM handler in place on entry put back on exit, on return or raise, whatever ``ray.init`` and the
    sweep put in between (in the main thread only; elsewhere Python cannot set one)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if before is None else before)  # None: set outside Python


@contextmanager
def _sigterm(handler):
    """SIGTERM handled by ``handler`` while entered, the handler before it put back at the end."""
    before = _sigterm_handler(handler)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)


def run_sweep(spec_path: Path, options: SweepOptions, say=print) -> SweepResult:
    """Check everything, start or join Ray, fly every point not yet flown, and write sweep.parquet."""
    spec, points = prepare(Path(spec_path), options)
    return fly_points(spec, points, options, say)


def fly_points(spec, points: list[Point], options: SweepOptions, say=print) -> SweepResult:
    """Start or join Ray and fly ``points`` (checked already) into ``options.out``: what :func:`run_sweep` does
    after reading its file, and what ``nexus test`` does with the points of its scenarios."""
    out = Path(options.out)
    with _sigterm_kept():  # the caller's handler back at the end, not the one ray.init put in
        cluster = connect(options.address, options.parallel, options.dashboard)
        terminated = _Terminated()
        with _sigterm(terminated):  # after ray.init, which put in Ray's own (see the module's docstring)
            try:
                if cluster.gpus < 1 and any(_uses_gpu(p) for p in points):
                    raise SweepError(f"{spec.path}: points with device cuda need a GPU, and the Ray cluster has "
                                     "none; fly them with device = \"cpu\" or on a cluster with GPUs")
                out.mkdir(parents=True, exist_ok=True)
                (out / RUNS).mkdir(exist_ok=True)
                _write_sweep_file(out, spec, points)
                return _fly_all(spec, points, options, cluster, say)
            except KeyboardInterrupt as stop:  # the command ends 143 for SIGTERM, 130 for Ctrl-C
                if terminated.seen and not isinstance(stop, Terminated):
                    raise Terminated("terminated by SIGTERM") from None
                raise
            finally:
                with _sigterm(_held):
                    cluster.close()


def _fly_all(spec, points: list[Point], options: SweepOptions, cluster, say) -> SweepResult:
    import ray  # noqa: PLC0415  (reason: heavy optional dependency, imported where a sweep flies)

    out = Path(options.out)
    parameters = varied_keys(spec)
    ship = (not cluster.local) if options.ship is None else options.ship
    slots = max(1, int(cluster.cpus // options.cpus_per_run)) if options.cpus_per_run > 0 else len(points)
    parallel = min(options.parallel or slots, slots, len(points))
    result = SweepResult(out, workers=parallel)
    rows: dict[str, dict] = {}
    todo: list[Point] = []
    for point in points:
        row = _ended_row(point, out / RUNS / point.id) if options.resume else None
        if row is not None:
            rows[point.id] = {**row, "values": point.values, "folder": f"{RUNS}/{point.id}"}
            result.skipped += 1
        else:
            todo.append(point)
    by_id = {p.id: p for p in points}
    bar = SweepProgress(len(points), enabled=options.progress)
    bar.update(len(rows), sum(1 for r in rows.values() if r.get("status") not in OK_STATUSES), 0)
    remote = ray.remote(fly_point)
    pending: dict = {}
    started = time.perf_counter()
    if todo:  # start the workers together (each imports Nexus and Warp once), not one per finished point
        first = todo[0].config.as_dict()
        count = min(parallel, len(todo), int(cluster.gpus) if _uses_gpu(todo[0]) else len(todo))
        gate = ray.remote(num_cpus=0)(Gate).remote()
        ray.get([ray.remote(warm).options(num_cpus=options.cpus_per_run,
                                          num_gpus=1 if _uses_gpu(todo[0]) else 0).remote(first, gate, count)
                 for _ in range(max(count, 1))])
        ray.kill(gate)
        result.workers_start_s = time.perf_counter() - started
        started = time.perf_counter()

    def record(point: Point, row: dict) -> None:
        files = row.pop("files", None)
        if files is not None:
            unpack(files, out / RUNS / point.id)
        rows[point.id] = {**row, "values": point.values, "folder": f"{RUNS}/{point.id}"}
        ordered = [rows[p.id] for p in points if p.id in rows]
        write_table(out, parameters, ordered)

    def submit(point: Point) -> None:
        task = remote.options(num_cpus=options.cpus_per_run, num_gpus=1 if _uses_gpu(point) else 0,
                              max_retries=options.max_retries, retry_exceptions=False)
        ref = task.remote(point.as_dict(), str((out / RUNS / point.id).resolve()), ship, options.allow_commands)
        pending[ref] = point

    queue = list(todo)
    try:
        while queue or pending:
            while queue and len(pending) < parallel:
                submit(queue.pop(0))
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
            for ref in ready:
                point = pending.pop(ref)
                try:
                    row = ray.get(ref)
                except ray.exceptions.RayError as error:  # the worker died more often than Ray retries, or Ray failed
                    reason = ("worker-died" if isinstance(error, (ray.exceptions.WorkerCrashedError,
                                                                  ray.exceptions.NodeDiedError)) else "task-error")
                    text = str(error).strip().splitlines()
                    row = {"point": point.id, "status": "failed", "exit_reason": reason,
                           "error": text[-1] if text else type(error).__name__}
                    end_leftovers(out / RUNS / point.id)
                record(point, row)
            failed = sum(1 for r in rows.values() if r.get("status") not in OK_STATUSES)
            bar.update(len(rows), failed, len(pending))
    except KeyboardInterrupt:
        with _sigterm(_held):
            bar.close()
            say(f"stopping: cancelling {len(pending)} runs in flight...")
            for ref in pending:  # KeyboardInterrupt in each task: its run ends as interrupted and stops its PX4
                ray.cancel(ref, force=False)
            _, stuck = ray.wait(list(pending), num_returns=len(pending), timeout=CANCEL_GRACE_S)
            # Force only what has not ended: Ray 2.60 aborts the driver ("Tried to complete task that was not
            # pending") when a force-cancel kills a worker whose task's reply is already on its way.
            for ref in stuck:
                ray.cancel(ref, force=True)
            if stuck:
                ray.wait(stuck, num_returns=len(stuck), timeout=5.0)
            for point in by_id.values():
                end_leftovers(out / RUNS / point.id)
            result.rows = [rows[p.id] for p in points if p.id in rows]
            result.wall_s = time.perf_counter() - started
            if result.rows:
                write_table(out, parameters, result.rows)
        raise
    bar.close()
    result.rows = [rows[p.id] for p in points]
    result.wall_s = time.perf_counter() - started
    write_table(out, parameters, result.rows)
    return result
