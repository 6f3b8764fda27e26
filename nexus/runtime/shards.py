"""A run's worlds flown in several processes (``--shards``), joined into one run folder.

A MuJoCo Warp step on the CPU runs on one core, so ``nexus run --worlds N`` on a
machine of several cores leaves all but one idle. With more than one shard the
worlds ``[0, N)`` are split into contiguous ranges (:func:`shard_ranges`; the
default ``auto`` takes one per core once the run's world-ticks are many enough
to pay for the model each process builds). Shard ``i`` is a process of its own
(``python -m nexus.runtime.shard_child``, stopped by SIGTERM if its parent dies) that flies its range as the run of
``first_world`` = the range's start and ``worlds`` = its length, into a folder
of its own under ``OUT/.shards/``. World ``i`` of N is the one-world run with
``first_world = i`` (``tests/worlds``), so every world computes the same bits
in any shard as in one process.

While the shards fly, the parent reads each one's reports (:mod:`nexus.runtime.shard_reports`) and prints the
progress line one process prints, for all of them together; run.log says when each shard started flying and
how it ended. It joins the shards into ``OUT`` as one run:

- ``record.parquet/``: the shards' rows with ``world`` counted from the run's
  world 0, in the order one process writes them (tick by tick, worlds in
  order within a tick), written part by part as the shards drain theirs
  (:mod:`nexus.runtime.shard_join`), so a run killed at any moment leaves the
  parts joined so far;
- ``summary.parquet``: the shards' summaries one after the other (their
  ``world`` column is already the run's);
- ``frames/`` (a vehicle with cameras or lidars): each sensor's frames from
  every shard, ``world`` counted from the run's world 0, shard after shard;
- ``run.json``: the run's own configuration (``shards`` included), what shard 0
  planned (the vehicle, the scene, the plan), each world's drawn values and
  origin, and ``shards``: each shard's range, pid and how it ended;
- ``run.log``: the parent's log.

A shard that fails, or is killed, ends the run: the others are stopped
(SIGTERM, so each writes its files), what every shard drained is joined as
above, run.json says ``failed`` with a one-line error naming the shard and its
worlds, and :class:`ShardError` is raised with the same line.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from nexus.core.device import resolve_device
from nexus.core.errors import NexusError
from nexus.core.planner import slots_text
from nexus.record.durable import write_atomic
from nexus.record.parts import RECORD, part_name, part_paths
from nexus.record.writer import encode
from nexus.runtime.config import AUTO_SHARD_WORLD_TICKS, AUTO_SHARDS, RunConfig
from nexus.runtime.progress_line import Progress
from nexus.runtime.run_file import RUNNING, RunFile, final_status
from nexus.runtime.shard_join import RecordJoin
from nexus.runtime.shard_reports import ShardReports, run_sim_time
from nexus.runtime.stopping import StopSignals, stop_reason
from nexus.runtime.world_ranges import world_ranges
from nexus.worlds.capacity import check_fits
from nexus.worlds.summary import summary_counts

log = logging.getLogger("nexus")

#: The folder under OUT where the shards fly (removed once they are joined).
SHARDS_DIR = ".shards"
#: The summary's file.
SUMMARY = "summary.parquet"
#: The folder of the ray-traced sensors' frame datasets (:mod:`nexus.render.frames`).
FRAMES = "frames"
#: What run.json takes from shard 0's: what was planned, which is the same for every shard.
PLANNED = ("vehicle", "scene", "mode", "tick_hz", "tick_ns", "stage_plan", "segments", "geodetic_origin",
           "decimal_year", "record_columns", "ned_origin_enu_m", "record_every", "record_mode", "render")
#: Seconds a shard has to write its files after SIGTERM before it is killed.
STOP_GRACE_S = 60.0


def _note(message: str, *args) -> None:
    """An INFO line for run.log even when the console shows only warnings (the ``nexus`` logger's level)."""
    if log.isEnabledFor(logging.INFO):
        log.info(message, *args)
        return
    record = log.makeRecord(log.name, logging.INFO, __file__, 0, message, args, None)
    for handler in log.handlers:
        if isinstance(handler, logging.FileHandler):
            handler.handle(record)


class ShardError(NexusError):
    """A shard's process failed or was killed: the run ended, its folder holds what every shard drained."""

    reason = "shard-failed"


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the system says, else every core)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def shard_count(worlds: int, shards: int | str, *, ticks: int = 0, cores: int | None = None, vehicles: int = 1) -> int:
    """How many processes ``shards`` means for ``worlds`` flown ``ticks`` ticks on ``cores`` (None:
    :func:`usable_cores`).

    A count is itself; 0 is one per core; ``auto`` is one per :data:`AUTO_SHARD_WORLD_TICKS` world-ticks
    (``worlds x ticks``), at most one per core and at least one: each process builds its own model, which only a
    long enough flight pays back. Never more than ``worlds // 2``: a shard of one world would write a record
    without its ``world`` column (with several ``vehicles`` a world it has one: then ``worlds``). The world-ticks
    count every vehicle."""
    cores = usable_cores() if cores is None else cores
    if shards == AUTO_SHARDS:
        wanted = min(cores, worlds * vehicles * ticks // AUTO_SHARD_WORLD_TICKS)
    else:
        wanted = shards if shards > 0 else cores
    return max(1, min(wanted, worlds if vehicles > 1 else worlds // 2))


def shard_ranges(worlds: int, shards: int | str, *, ticks: int = 0,
                 cores: int | None = None, vehicles: int = 1) -> list[tuple[int, int]]:
    """``(start, count)`` of each shard (:func:`shard_count` of them): contiguous ranges of ``[0, worlds)``, as
    even as they divide, the first ones one world longer (:func:`nexus.runtime.world_ranges.world_ranges`)."""
    return world_ranges(worlds, shard_count(worlds, shards, ticks=ticks, cores=cores, vehicles=vehicles))


def run_ticks(options: RunConfig) -> int:
    """The ticks ``options`` flies at most (its duration; a mission may end sooner)."""
    return max(1, round(options.duration_s * 1e9 / options.dt_ns))


def sharded(options: RunConfig) -> bool:
    """Whether ``options`` flies in more than one process."""
    return shard_count(options.worlds, options.shards, ticks=run_ticks(options), vehicles=options.vehicles) > 1


class _Shard:
    """One shard: its range, its folder and its process."""

    def __init__(self, index: int, start: int, count: int, root: Path):
        self.index, self.start, self.count = index, start, count
        self.folder = root / f"shard-{index}"
        self.process: subprocess.Popen | None = None
        self.code: int | None = None
        self.reports: ShardReports | None = None
        self.launched = time.monotonic()

    @property
    def name(self) -> str:
        return f"shard {self.index}"

    @property
    def worlds_text(self) -> str:
        return f"worlds {self.start}-{self.start + self.count - 1}"

    def start_process(self, options: RunConfig) -> None:
        self.folder.mkdir(parents=True)
        config = self.folder / "config.json"
        config.write_text(json.dumps(options.as_dict()))
        read, write = os.pipe()  # the shard's reports (nexus.runtime.shard_reports)
        try:
            with open(self.folder / "stderr.log", "wb") as err:
                # A session of its own: a Ctrl-C at the terminal reaches the parent, which stops the shards itself.
                self.process = subprocess.Popen(
                    [sys.executable, "-m", "nexus.runtime.shard_child", str(config), str(self.folder / "out"),
                     str(os.getpid()), str(write)],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                    pass_fds=(write,))
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        self.launched = time.monotonic()
        self.reports = ShardReports(read)

    @property
    def record(self) -> Path:
        return self.folder / "out" / RECORD

    logged_end = False

    def log_end(self) -> None:
        """run.log's line on how this shard ended (once)."""
        self.logged_end = True
        info = self.info() or {}
        if self.reports is not None and info.get("sim_time_s") is not None:
            self.reports.sim_s = float(info["sim_time_s"])  # where it ended (its last report may be older)
        _note("%s (%s) ended after %.1f s: exit status %s, %s, %s ticks", self.name, self.worlds_text,
              time.monotonic() - self.launched, self.code, info.get("exit_reason", "no run.json"), info.get("ticks", 0))

    def poll(self) -> int | None:
        if self.code is None and self.process is not None:
            self.code = self.process.poll()
        return self.code

    def info(self) -> dict | None:
        try:
            value = json.loads((self.folder / "out" / "run.json").read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            return None
        return value if isinstance(value, dict) else None

    def why(self) -> str:
        """How the process ended, in a few words."""
        if self.code is not None and self.code < 0:
            return f"was killed by {signal.Signals(-self.code).name}"
        try:
            lines = [line for line in (self.folder / "stderr.log").read_text(errors="replace").splitlines() if line]
        except OSError:
            lines = []
        said = f": {lines[-1].strip()}" if lines else ""
        return f"exited with status {self.code}{said}"


def fly_shards(options: RunConfig, out: Path, *, versions: dict, duration: float, signals: StopSignals,
               progress: bool = True) -> dict:
    """Fly ``options`` (``sharded``) in its shards and join them into ``out`` (prepared: empty of any run);
    ``signals`` (entered) turns SIGINT and SIGTERM into KeyboardInterrupt until the flight ends; ``progress``
    prints the run's progress line on stderr.

    Returns what :class:`nexus.runtime.run.RunSummary` holds; raises :class:`ShardError` when a shard failed,
    and KeyboardInterrupt (after writing the folder) when the run was stopped by SIGINT or SIGTERM.
    """
    device = resolve_device(options.device)
    # Every shard's model shares this machine's memory: the whole run must fit, checked before any shard starts
    # (else each shard would build and fail on its own share, the run ending only after them).
    check_fits(options.slots, device)
    handler = logging.FileHandler(out / "run.log", mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    options = replace(options, device=device, duration=duration)
    root = out / SHARDS_DIR
    shutil.rmtree(root, ignore_errors=True)
    ranges = shard_ranges(options.worlds, options.shards, ticks=run_ticks(options), vehicles=options.vehicles)
    shards = [_Shard(i, start, count, root) for i, (start, count) in enumerate(ranges)]
    run_file = RunFile(out, {
        "status": RUNNING, "pid": os.getpid(), "options": options.as_dict(), "device": device, "versions": versions,
        "duration_requested_s": duration, "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "record_columns": [], "ticks": 0, "record_rows": 0, "sim_time_s": 0.0,
        "worlds": options.worlds, "first_world": options.first_world,
        **({"vehicles": options.vehicles} if options.vehicles > 1 else {}),
    })
    join = None
    if options.record_mode == "full":
        join = RecordJoin(out / RECORD, [(shard.record, shard.start) for shard in shards],
                          part_rows=options.record_capacity * options.slots, shield=signals.held_back)
    started = time.perf_counter()
    failed: _Shard | None = None
    stopped: BaseException | None = None
    bar: Progress | None = None
    try:
        for shard in shards:
            shard.start_process(replace(options, shards=1, first_world=options.first_world + shard.start,
                                        worlds=shard.count))
        run_file.write(shards=_shard_rows(shards))  # each shard's pid: `nexus runs` and a watcher see them
        _note("flying %d worlds in %d shards: %s", options.worlds, len(shards),
              ", ".join(f"{s.name} {s.worlds_text} (pid {s.process.pid})" for s in shards))
        while True:
            codes = [shard.poll() for shard in shards]  # before the parts are read: an ended shard's are all there
            for shard in shards:
                if shard.reports.read():
                    _note("%s (%s) flying, %.1f s after its start (its build)", shard.name, shard.worlds_text,
                          shard.reports.started - shard.launched)
                    if all(s.reports.started is not None for s in shards):
                        _planned(options, run_file, shards)  # shard 0's plan: run.json says what flies
                        run_file.write()
                        bar = Progress(duration, enabled=progress)  # the clock starts when every shard flies
            for shard, code in zip(shards, codes):
                if code is not None and not shard.logged_end:
                    shard.log_end()
            if bar is not None:
                bar.update(run_sim_time([s.reports for s in shards], [s.count for s in shards]))
            if join is not None:
                with signals.held_back():  # a signal waits for the part being read or written
                    wrote = join.pull([code is not None for code in codes])
                if wrote:
                    run_file.write(**_joined(join, options))
            failed = next((s for s, code in zip(shards, codes) if code not in (None, 0)), None)
            if failed is not None or all(code is not None for code in codes):
                break
            time.sleep(0.05)
    except KeyboardInterrupt as stop:
        stopped = stop
    finally:
        signals.close()  # from here on a signal waits: the shards are stopped and joined
        _stop(shards)
    wall = time.perf_counter() - started
    for shard in shards:
        if not shard.logged_end:
            shard.log_end()
        if shard.reports is not None:
            shard.reports.read()
            shard.reports.close()
    if bar is not None:
        bar.update(run_sim_time([s.reports for s in shards], [s.count for s in shards]), force=True)
        bar.close()
    message = None
    if failed is not None:
        message = f"{failed.name} ({failed.worlds_text} of {options.worlds}) {failed.why()}; the run stopped there"
        log.error("%s", message)
    try:
        return _join(options, out, shards, run_file, join, wall, message, stopped)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        log.removeHandler(handler)
        handler.close()


def _joined(join: RecordJoin, options: RunConfig) -> dict:
    """run.json's count of what the joined record holds so far."""
    ticks = round(join.written_time / options.dt) if join.written_time is not None else 0
    return {"ticks": ticks, "sim_time_s": ticks * options.dt, "record_rows": join.rows, "record_parts": join.parts}


def _planned(options: RunConfig, run_file: RunFile, shards: list[_Shard]) -> list:
    """What shard 0 planned and every world's drawn values into ``run_file.info``; the shards' run.json files."""
    infos = [shard.info() for shard in shards]
    first = next((info for info in infos if info is not None), {})
    run_file.info.update({key: first[key] for key in PLANNED if key in first})
    values, origins, slots = [], [], []
    for shard, info in zip(shards, infos):
        info = info or {}
        values += info.get("world_values") or [None] * shard.count
        origins += info.get("ned_origins_enu_m") or [None] * (shard.count * options.vehicles)
        slots += info.get("vehicle_values") or [None] * (shard.count * options.vehicles)
    run_file.info.update(world_values=values, ned_origins_enu_m=origins)
    if options.vehicles > 1:  # each vehicle's own values, slot after slot
        run_file.info["vehicle_values"] = slots
    plan, own = run_file.info.get("stage_plan"), slots_text(shards[0].count * options.vehicles, options.vehicles)
    if isinstance(plan, str) and own and plan.endswith(own):  # the plan of every shard; the run flies all of them
        run_file.info["stage_plan"] = plan[:-len(own)] + slots_text(options.slots, options.vehicles)
    return infos


def _stop(shards: list[_Shard]) -> None:
    """SIGTERM to every shard still flying (each writes its files), then wait; SIGKILL past the grace."""
    for shard in shards:
        if shard.process is not None and shard.poll() is None:
            shard.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for shard in shards:
        if shard.process is None:
            continue
        try:
            shard.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            shard.process.kill()
            shard.process.wait()
        shard.poll()


def _shard_rows(shards: list[_Shard], infos: list | None = None) -> list[dict]:
    rows = []
    for at, shard in enumerate(shards):
        row = {"name": shard.name, "first_world": shard.start, "worlds": shard.count,
               "pid": shard.process.pid if shard.process is not None else None}
        if infos is not None:
            info = infos[at] or {}
            row.update(exit_code=shard.code, exit_reason=info.get("exit_reason"), ticks=info.get("ticks"),
                       error=info.get("error"))
            if "crash" in info:
                row["crash"] = info["crash"]
        rows.append(row)
    return rows


def _join(options: RunConfig, out: Path, shards: list[_Shard], run_file: RunFile, join: RecordJoin | None,
          wall: float, message: str | None, stopped: BaseException | None) -> dict:
    """Join the rest of the shards' files into ``out`` and write its run.json; raise the run's failure, if any."""
    infos = _planned(options, run_file, shards)
    run_file.info["shards"] = _shard_rows(shards, infos)
    warnings = [line for info in infos for line in (info or {}).get("warnings") or []]
    run_file.info["warnings"] = list(dict.fromkeys(warnings))
    crashes = [(info or {}).get("crash") for info in infos]
    if all(crashes):  # world 0's from shard 0, every world's from its shard
        run_file.info["crash"] = {**crashes[0], "worlds": options.slots,
                                  "crashed_worlds": [c for crash in crashes for c in crash.get("crashed_worlds", [])],
                                  "hardest_touchdowns_m_s": [v for crash in crashes
                                                             for v in crash.get("hardest_touchdowns_m_s", [])]}
    collisions = [(info or {}).get("collisions") for info in infos]
    if all(collisions):  # the vehicles' collisions (nexus.plant.vehicle_collision): every shard's, in one log
        events = sorted((e for c in collisions for e in c["events"]),
                        key=lambda e: (e["tick"], e["world"], e["vehicles"]))
        run_file.info["collisions"] = {"count": sum(c["count"] for c in collisions),
                                       "kept": sum(c["kept"] for c in collisions),
                                       "end_on_collision": collisions[0]["end_on_collision"], "events": events}
    rows, parts = 0, 0
    if join is not None:
        join.finish()
        rows, parts = join.rows, join.parts
    counts, distribution = _join_summary(out, shards)
    _join_frames(out, shards)
    ticks = max((int(info.get("ticks") or 0) for info in infos if info), default=0)
    # The flight's wall time: the slowest shard's, which flew while the others did (as one process's, it leaves
    # out the build); ``wall_time_with_builds_s`` is the parent's, from the first shard's start to the last's end.
    flying = max((float(info.get("wall_time_s") or 0.0) for info in infos if info), default=0.0)
    sim_time = max((float(info.get("sim_time_s") or 0.0) for info in infos if info), default=0.0)
    reasons = [info.get("exit_reason") if info else None for info in infos]
    if message is not None:
        reason = ShardError.reason
    elif stopped is not None:
        reason = stop_reason(stopped)
        message = "terminated (SIGTERM)" if reason == "terminated" else "interrupted by the user (SIGINT)"
    elif len(set(reasons)) == 1:
        reason = reasons[0]
    elif "duration" in reasons:
        reason = "duration"  # some shard flew to the end: so did the run
    else:
        reason = "done"
    if message is None and final_status(reason) == "failed":
        failing = next(s for s, info in zip(shards, infos) if (info or {}).get("exit_reason") == reason)
        message = f"{failing.name} ({failing.worlds_text}): {(infos[failing.index] or {}).get('error')}"
    rtf = sim_time / flying if flying > 0 else None
    run_file.write(status=final_status(reason), exit_reason=reason, error=message, ticks=ticks, sim_time_s=sim_time,
                   wall_time_s=flying, wall_time_with_builds_s=wall, real_time_factor=rtf, real_time_factor_flying=rtf,
                   record_rows=rows, record_parts=parts, **counts)
    if stopped is not None:
        raise stopped
    if message is not None:
        raise ShardError(message)
    return {"ticks": ticks, "sim_time": sim_time, "wall_time": flying, "exit_reason": reason,
            "worlds": options.slots, "worlds_failed": counts.get("worlds_failed", 0), "distribution": distribution}


def _join_frames(out: Path, shards: list[_Shard]) -> None:
    """``OUT/frames/``: each sensor's frame dataset of every shard (``world`` counted from the run's world 0), the
    shards one after the other; any other file a shard left there (a preview) is kept as ``shard-I-NAME``."""
    target = out / FRAMES
    parts: dict[str, int] = {}
    for shard in shards:
        folder = shard.folder / "out" / FRAMES
        if not folder.is_dir():
            continue
        target.mkdir(exist_ok=True)
        for item in sorted(folder.iterdir()):
            if item.is_dir() and item.name.endswith(".parquet"):
                (target / item.name).mkdir(exist_ok=True)
                for path in part_paths(item):
                    table = pq.read_table(path)
                    if "world" in table.column_names:
                        at = table.column_names.index("world")
                        world = pc.add(table.column("world"), pa.scalar(shard.start, table.schema.field("world").type))
                        table = table.set_column(at, "world", world)
                    index = parts.get(item.name, 0)
                    write_atomic(target / item.name / part_name(index), encode(table))
                    parts[item.name] = index + 1
            else:
                shutil.move(str(item), str(target / f"shard-{shard.index}-{item.name}"))


def _join_summary(out: Path, shards: list[_Shard]) -> tuple[dict, list[str]]:
    """summary.parquet of the shards' summaries, one after the other; run.json's counts and the distribution."""
    tables = []
    for shard in shards:
        path = shard.folder / "out" / SUMMARY
        if path.is_file():
            tables.append(pq.read_table(path))
    if not tables:
        return {}, []
    table = pa.concat_tables(tables, promote_options="default")
    write_atomic(out / SUMMARY, encode(table))
    counts = summary_counts({name: table.column(name).to_numpy(zero_copy_only=False) for name in table.column_names})
    return counts, counts.pop("distribution")
