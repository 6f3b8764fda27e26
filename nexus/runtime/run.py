"""Flying a run to its end and leaving its record, whatever happens.

``OUT/record.parquet/`` holds one row per tick, in whole part files
(:mod:`nexus.record.parts`); ``OUT/run.json`` says what ran (the run's whole
:class:`~nexus.runtime.config.RunConfig` under ``options``, the versions, the
device, the vehicle and scene files with their digests, the plan, the
record's columns), how far it got and how it ended (:mod:`nexus.runtime.run_file`);
``OUT/run.log`` holds the log. All three exist from the run's start and stay
readable whatever happens: a failure, SIGINT or SIGTERM (:mod:`nexus.runtime.stopping`),
SIGKILL, a full disk. Only a run refused before it starts (a folder that
already holds a run, an unusable ``OUT``, a duration under one tick) writes
nothing.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import platform
import shutil
import sys
import time
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path

import pyarrow as pa

from nexus.core.device import resolve_device
from nexus.core.errors import BuildError, NexusError
from nexus.core.loop import tick_ns
from nexus.runtime.flight import Flight
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession
from nexus.runtime.progress_line import Progress
from nexus.record.durable import Reserve, WriteFailed, failure, write_atomic
from nexus.record.parts import RECORD, part_name
from nexus.record.writer import columns_table, encode
from nexus.runtime.run_folder import RunFolder
from nexus.runtime.runs import RUN_FILES
from nexus.runtime.shards import fly_shards, sharded
from nexus.runtime.run_file import RUNNING, RunFile, final_status
from nexus.runtime.stopping import StopSignals, stop_reason
from nexus.worlds.summary import run_end_reason, summary_columns, summary_counts
from nexus.plant.crash import crash_line
from nexus.plant.vehicle_collision import collision_line

log = logging.getLogger("nexus")

#: What a run killed mid-write can leave besides its files (hidden: no reader sees them; ``.shards``: the
#: folders of a sharded run's shards, :mod:`nexus.runtime.shards`);
#: ``--overwrite`` deletes these and the run's files (RUN_FILES), nothing else.
LEFTOVERS = (".run.json.tmp", ".nexus-reserve", ".shards")
#: Any of these in OUT means the folder already holds a run.
RUN_MARKERS = ("run.json", "record.parquet", "run.log")
#: The folder of the ray-traced sensors' frame files (one dataset per sensor, :mod:`nexus.render.frames`).
FRAMES = "frames"

PACKAGES = ("nexus", "newton", "warp-lang", "mujoco", "mujoco-warp", "usd-core", "numpy", "pymavlink")


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "not installed"
    return found


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class OutputError(BuildError):
    """``--out`` cannot take this run: it holds another run, or it cannot be written."""

    reason = "bad-out"


class DurationError(BuildError):
    """The duration asked for is shorter than one tick: the run would fly nothing."""

    reason = "zero-ticks"


def check_out(out: Path, overwrite: bool = False, option: str = "--out",
              overwrite_option: str | None = "--overwrite") -> None:
    """Refuse an OUT that is a file, sits under a file, or holds a run (unless ``overwrite``).

    A folder that holds only a build that failed (:meth:`RunFolder.is_failed_build`: bad input, no tick flown)
    holds no run: it is taken as if ``overwrite`` were given, so the corrected command needs no ``--overwrite``.
    Writes nothing, so the command line can call it before it starts anything. ``option`` and
    ``overwrite_option`` are the command's own names for the folder and for replacing a run in it
    (None: the command never replaces one), so each error names options the user can pass.
    """
    out = Path(out)
    for folder in (out, *out.parents):
        if folder.exists():
            if not folder.is_dir():
                raise OutputError(f"{option} {out}: {folder} is a file, not a folder; choose another {option}")
            break
    held = [name for name in RUN_MARKERS if (out / name).exists()]
    if held and not overwrite and not RunFolder(out).is_failed_build():
        replace_it = f", or pass {overwrite_option} to delete that run's files first" if overwrite_option else ""
        raise OutputError(f"{option} {out} already holds a run ({', '.join(held)}); choose another folder{replace_it}")


def prepare_out(out: Path, overwrite: bool = False, option: str = "--out",
                overwrite_option: str | None = "--overwrite") -> Path:
    """Check OUT, create it, and with ``overwrite`` delete the earlier run's files (only those)."""
    out = Path(out)
    check_out(out, overwrite, option, overwrite_option)
    overwrite = overwrite or RunFolder(out).is_failed_build()  # a failed build's files make way for the run
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot create the output folder {out} ({error.strerror}); give {option} a folder you can "
                          "write to") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into the output folder {out}; give {option} a folder you can write to")
    if overwrite:
        for name in RUN_FILES + LEFTOVERS:
            path = out / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
    return out


def remove_failed_build(out: Path) -> bool:
    """Delete OUT when it holds only a build that failed (its run files and nothing else); True if it did.

    For a folder the command chose itself (``runs/<UTC time>/``): bad input then leaves no folder behind."""
    out = Path(out)
    if not RunFolder(out).is_failed_build() or any(p.name not in RUN_FILES + LEFTOVERS for p in out.iterdir()):
        return False
    for name in RUN_FILES + LEFTOVERS:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    out.rmdir()
    return True


def ticks_in(duration: float, dt_ns: int) -> int:
    """Whole ticks of ``dt_ns`` [ns] in ``duration`` [s]; a duration of no tick is an error."""
    ticks = int(round(duration * 1e9 / dt_ns))
    if ticks < 1:
        raise DurationError(
            f"--duration {duration:g} s is 0 ticks of {dt_ns * 1e-6:g} ms (the tick at {1e9 / dt_ns:g} Hz): "
            f"nothing would fly; give at least one tick, {dt_ns * 1e-9:g} s"
        )
    return ticks


class WarningsSeen(logging.Handler):
    """Keeps every WARNING-or-worse message of the ``nexus`` logger, for run.json."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@dataclass
class RunSummary:
    out: Path
    ticks: int
    sim_time: float
    wall_time: float
    exit_reason: str
    worlds: int = 1
    #: Worlds whose state stopped being finite (see ``summary.parquet``).
    worlds_failed: int = 0
    #: With many worlds: one line per key figure, its distribution over the worlds.
    distribution: list[str] = field(default_factory=list)
    #: With ``--realtime``: one line on the pacing (kept up or not, time slept); None when not paced.
    paced: str | None = None

    @property
    def rtf(self) -> float:
        return self.sim_time / self.wall_time if self.wall_time > 0 else float("inf")

    @property
    def drone_steps_per_s(self) -> float:
        """World-ticks flown per second of wall time (every world counts until it ended)."""
        return self.ticks * self.worlds / self.wall_time if self.wall_time > 0 else float("inf")


#: The summary's file: one row per world.
SUMMARY = "summary.parquet"


def json_values(variation: list[dict]) -> list[dict]:
    """Drawn values as JSON allows them: a fault time that never comes (inf) becomes null."""
    return [{k: (None if isinstance(v, float) and math.isinf(v) else v) for k, v in values.items()}
            for values in variation]


def values_from_json(values: list[dict]) -> list[dict]:
    """:func:`json_values` undone: null fault times are inf again."""
    return [{k: (math.inf if v is None and k.endswith("_time") else v) for k, v in world.items()} for world in values]


def _write_summary(out: Path, flight: Flight) -> dict:
    """summary.parquet (one row per world, written whole), and the counts run.json keeps."""
    columns = summary_columns(flight)
    arrays = {name: (pa.array(list(values), type=pa.string()) if values.dtype == object else pa.array(values))
              for name, values in columns.items()}
    data = encode(pa.Table.from_arrays(list(arrays.values()), names=list(arrays)))
    try:
        write_atomic(out / SUMMARY, data)
    except OSError as error:
        raise failure(error, out, SUMMARY, data.size) from None
    return summary_counts(columns)


class RunLog(logging.FileHandler):
    """run.log: a failed write (a full disk) is dropped without a word, since the run reports that itself."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _log_to(out: Path) -> logging.Handler:
    try:
        handler = RunLog(out / "run.log", mode="w")
    except OSError as error:
        raise OutputError(f"cannot write {out / 'run.log'} ({error.strerror}); choose an --out you can write to") from None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logging.getLogger("nexus").addHandler(handler)
    return handler


def _log_only_to(handler: logging.Handler, level: int, message: str, exc_info=None) -> None:
    """Log to run.log alone: the caller reports the error on the console, once."""
    handler.handle(log.makeRecord(log.name, level, __file__, 0, "%s", (message,), exc_info))


def _flying_rtf(sim_time: float, wall: float, stats: dict) -> float | None:
    """Real-time factor of the flight itself: wall time less ``waiting_s`` from the controller's stats."""
    flying = wall - float(stats.get("waiting_s", 0.0) or 0.0)
    return sim_time / flying if flying > 0 else None


def _empty_record(record: Path) -> None:
    """A record of one part with no rows and no columns, for a build that failed before its recorder existed."""
    record.mkdir(exist_ok=True)
    write_atomic(record / part_name(0), encode(columns_table({})))


def run_flight(
    options: RunConfig,
    out: Path,
    *,
    progress: bool = True,
    flight: Flight | None = None,
    controller=None,
    extra_components=(),
    overwrite: bool = False,
    watch=None,
    variation: list[dict] | None = None,
) -> RunSummary:
    """Build (unless ``flight`` is given), start, fly the configuration's duration, and write OUT.

    The configuration is the one source of what flies: its ``device`` (resolved: ``auto``
    takes the GPU when one is present) and its ``duration_s`` [s]. run.json's ``options``
    holds it as flown: the resolved device, the duration. A ``flight`` given must have been
    built on that device. The flight flies through a
    :class:`~nexus.runtime.flight_session.FlightSession`, as the benchmarks' do.

    ``watch`` (e.g. :class:`nexus.viz.live.LiveWatch`), if given, is called with the started
    flight and returns an object whose ``update(sim_time)`` runs at each progress update.

    Raises :class:`OutputError` or :class:`DurationError` before writing anything; any
    later failure is re-raised after OUT holds run.json (``exit_reason``, ``error``),
    run.log and record.parquet.
    """
    duration = options.duration_s
    dt_ns = flight.loop.dt_ns if flight is not None else tick_ns(options.tick_hz)
    total_ticks = ticks_in(duration, dt_ns)
    out = prepare_out(out, overwrite)
    if sharded(options) and flight is None and controller is None and not extra_components and watch is None:
        with StopSignals() as signals:  # worlds in several processes (--shards), joined into OUT: nexus.runtime.shards
            flown = fly_shards(options, out, versions=versions(), duration=duration, signals=signals,
                               progress=progress)
        return RunSummary(out, flown["ticks"], flown["sim_time"], flown["wall_time"], flown["exit_reason"],
                          flown["worlds"], flown["worlds_failed"], flown["distribution"])
    with StopSignals() as signals:
        return _fly_and_write(options, out, duration, total_ticks, dt_ns, signals, progress=progress,
                              flight=flight, controller=controller, extra_components=extra_components, watch=watch,
                              variation=variation)


def _fly_and_write(options, out, duration, total_ticks, dt_ns, signals, *, progress, flight, controller,
                   extra_components, watch, variation=None) -> RunSummary:
    handler = _log_to(out)
    reserve = Reserve(out)
    seen = WarningsSeen()
    log.addHandler(seen)
    run_file = RunFile(out, {
        "status": RUNNING,
        "pid": os.getpid(),
        "options": options.as_dict(),
        "device": None,
        "versions": versions(),
        "duration_requested_s": duration,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "record_columns": [],
        "ticks": 0,
        "record_rows": 0,
        "sim_time_s": 0.0,
    })
    info = run_file.info
    counts: dict = {}
    ticks, sim_time, wall, reason, message = 0, 0.0, 0.0, "error", None
    started = time.perf_counter()
    record = out / RECORD

    def drained(ticks: int, rows: int) -> None:  # after each part: run.json says how many ticks are on disk
        writer = session.writer
        run_file.write(ticks=ticks, record_rows=rows, sim_time_s=ticks * dt_ns * 1e-9,
                       wall_time_s=time.perf_counter() - started, record_parts=writer.parts if writer else 0)

    def planned(flight: Flight) -> None:  # after the build: what will fly
        plant = flight.vehicle.plant
        info.update({
            "worlds": options.worlds, "first_world": options.first_world, "record_every": options.record_every,
            **({"vehicles": options.vehicles, "vehicle_values": json_values(flight.slot_values)}
               if options.vehicles > 1 else {}),
            "record_mode": options.record_mode, "world_values": json_values(flight.variation),
        })
        info.update({
            "vehicle": {"name": options.vehicle, "path": str(plant.vehicle_path), "sha256": file_digest(plant.vehicle_path)},
            "scene": {"name": options.scene, "path": str(plant.scene_path), "sha256": file_digest(plant.scene_path)},
            "mode": flight.loop.mode,
            "tick_hz": options.tick_hz,
            "tick_ns": flight.loop.dt_ns,
            "stage_plan": flight.loop.plan.text(),
            "segments": flight.loop.plan.describe(),
            "geodetic_origin": plant.origin.__dict__,
            "decimal_year": plant.decimal_year,
            "record_columns": flight.recorder.columns if flight.recorder is not None else [],
        })

    def before_start(flight: Flight) -> None:  # every frame and sweep kept next to the record; run.json with the plan
        if flight.render is not None:
            info["render"] = {"mode": flight.render.mode, "sensors": list(flight.render.specs),
                              "labels": flight.render.labels}
        drained(0, 0)  # before the first tick

    # Builds nothing yet: a given flight is closed by it whatever happens from here.
    session = FlightSession(options, record, flight=flight, replace_controller=controller,
                            extra_components=extra_components, variation=variation, frames=out / FRAMES, previews=True,
                            on_drain=drained, shield=signals.held_back, on_built=planned, before_start=before_start)
    try:
        run_file.write()
        device = resolve_device(options.device)
        options = replace(options, device=device, duration=duration)
        info.update({"options": options.as_dict(), "device": device})
        session.options = options  # the session flies the configuration run.json holds
        session.open()
        flight = session.flight
        info["ned_origin_enu_m"] = [float(x) for x in session.origin]
        if flight.loop.worlds > 1:  # each world's own: where its base settled
            info["ned_origins_enu_m"] = [[float(x) for x in row] for row in flight.vehicle.plant.ned_origin.numpy()]
        view = watch(flight) if watch is not None else None  # started before the clock: not part of the run's time
        bar = Progress(duration, enabled=progress)
        started = time.perf_counter()
        reason = "duration"
        loop = flight.loop
        on_progress = bar.update if view is None else lambda now: (bar.update(now), view.update(now))
        if session.fly(total_ticks, on_progress=on_progress):  # K ticks per replay, then one by one
            reason = run_end_reason(loop.world_done())
        bar.update(loop.sim_time, force=True)
        bar.close()
        loop.check_end()
    except KeyboardInterrupt as stop:
        reason = stop_reason(stop)
        message = "terminated (SIGTERM)" if reason == "terminated" else "interrupted by the user (SIGINT)"
        _log_only_to(handler, logging.ERROR, message)
        raise
    except NexusError as error:
        reason, message = error.reason, str(error)
        _log_only_to(handler, logging.ERROR, message)
        raise
    except Exception as error:
        reason, message = "error", f"{type(error).__name__}: {error}"
        _log_only_to(handler, logging.ERROR, f"the run failed: {message}", exc_info=sys.exc_info())
        raise
    finally:
        signals.close()  # a second signal from here on waits: the last files are being written
        wall = time.perf_counter() - started
        flight, writer = session.flight, session.writer
        closing = None
        try:
            session.close()  # the loop, the render peer (its frames, the previews), the record's last drain
        except Exception as error:  # reported below, after what the flight did is read
            closing = error
        if flight is not None:
            if flight.render is not None and "render" in info:
                if session.preview_files is not None:
                    info["render"]["previews"] = [p.name for p in session.preview_files]
                info["render"]["frames"] = flight.render.frames
                info["render"]["wait_s"] = round(flight.render.wait_s, 3)
            ticks, sim_time = flight.loop.ticks, flight.loop.sim_time
            stats = getattr(flight.vehicle.controller, "stats", None)
            if callable(stats):
                info["controller_stats"] = stats()
            if session.pacer is not None:  # --realtime: what the pacing did (nexus.runtime.pacing)
                info["pacing"] = session.pacer.stats()
            if flight.crash is not None:  # the crash's tick and speed, and the hardest touchdown (nexus.plant.crash)
                info["crash"] = flight.crash.report(dt_ns * 1e-9)
                if (line := crash_line(info["crash"])) is not None:
                    log.warning("%s", line)
            if flight.collisions is not None:  # the collisions between vehicles (nexus.plant.vehicle_collision)
                info["collisions"] = flight.collisions.report(dt_ns * 1e-9)
                if (line := collision_line(info["collisions"])) is not None:
                    log.warning("%s", line)
            for component in flight.vehicle.components:  # a component's own end-of-run lines (a diverged EKF's)
                end_lines = getattr(component, "end_lines", None)
                for line in (end_lines(dt_ns * 1e-9) if callable(end_lines) else ()):
                    log.warning("%s", line)
        try:
            if closing is not None:
                raise closing
            if writer is None and not record.exists() and (flight is None or flight.recorder is not None):
                _empty_record(record)
            if flight is not None and flight.summary is not None and "ned_origin_enu_m" in info:
                counts = _write_summary(out, flight)
        except WriteFailed as error:
            if final_status(reason) == "finished":  # the record is short of the ticks flown: so this run failed
                reason, message = error.reason, str(error)
            log.error("%s", error)
        except Exception as error:  # never hide the run's own failure behind a flush failure
            _log_only_to(handler, logging.ERROR, "could not flush the record", exc_info=sys.exc_info())
            log.warning("could not flush the record to %s: %s", record, error)
        log.removeHandler(seen)
        reserve.release()  # the room kept back for this last run.json
        try:
            run_file.write(
                status=final_status(reason),
                exit_reason=reason,
                error=message,
                warnings=seen.messages,
                ticks=ticks,
                sim_time_s=sim_time,
                wall_time_s=wall,
                real_time_factor=sim_time / wall if wall > 0 else None,
                # Without the wall time a controller spent waiting for its peer (PX4 connecting), which
                # depends on how the peer was started, not on the flight.
                real_time_factor_flying=_flying_rtf(sim_time, wall, info.get("controller_stats", {})),
                record_rows=writer.rows_written if writer else 0,
                record_parts=writer.parts if writer else 0,
                **{k: v for k, v in counts.items() if k != "distribution"},
            )
        except WriteFailed as error:  # the run.json of the last drain stays
            log.error("%s", error)
        log.removeHandler(handler)
        handler.close()
    worlds = flight.loop.worlds if flight is not None else 1
    return RunSummary(out, ticks, sim_time, wall, reason, worlds, counts.get("worlds_failed", 0),
                      counts.get("distribution", []) if worlds > 1 else [],
                      session.pacer.summary() if session.pacer is not None else None)
