"""Flying a run to its end and leaving its record, whatever happens.

``OUT/record.parquet`` holds one row per tick; ``OUT/run.json`` says what
ran (seed, versions, device, vehicle, scene, plan, tick rate, duration) and
how it ended; ``OUT/run.log`` holds the log. All three are written even when
the run fails or is interrupted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import platform
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from nexus.core.errors import NexusError
from nexus.flight import Flight, FlightOptions, build_flight
from nexus.record.writer import RecordWriter
from nexus.startup import start

log = logging.getLogger("nexus")

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


@dataclass
class RunSummary:
    out: Path
    ticks: int
    sim_time: float
    wall_time: float
    exit_reason: str

    @property
    def rtf(self) -> float:
        return self.sim_time / self.wall_time if self.wall_time > 0 else float("inf")


class Progress:
    """A one-line progress report on stderr: sim time, share done and real-time factor."""

    def __init__(self, total_s: float, enabled: bool = True, every_s: float = 0.5):
        self.total_s, self.enabled, self.every_s = total_s, enabled, every_s
        self.started = time.perf_counter()
        self.last = 0.0
        self.tty = sys.stderr.isatty()

    def update(self, sim_s: float, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.every_s:
            return
        self.last = now
        wall = max(now - self.started, 1e-9)
        share = min(sim_s / self.total_s, 1.0) if self.total_s else 1.0
        bar = "#" * int(share * 30)
        line = f"[{bar:<30}] sim {sim_s:7.2f} s / {self.total_s:.2f} s   RTF {sim_s / wall:6.1f}x"
        sys.stderr.write(("\r" + line) if self.tty else (line + "\n"))
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")


def _log_to(out: Path) -> logging.Handler:
    handler = logging.FileHandler(out / "run.log", mode="w")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logging.getLogger("nexus").addHandler(handler)
    return handler


def run_flight(
    options: FlightOptions,
    device: str,
    out: Path,
    duration: float,
    *,
    progress: bool = True,
    flight: Flight | None = None,
    controller=None,
    extra_components=(),
) -> RunSummary:
    """Build (unless ``flight`` is given), start, fly up to ``duration`` [s], and write OUT."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    handler = _log_to(out)
    info: dict = {
        "options": options.as_dict(),
        "device": device,
        "versions": versions(),
        "duration_requested_s": duration,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    writer = None
    ticks, sim_time, wall, reason = 0, 0.0, 0.0, "not started"
    started = time.perf_counter()
    try:
        flight = flight or build_flight(options, device, replace_controller=controller, extra_components=extra_components)
        plant = flight.vehicle.plant
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
            "record_columns": [layout.signal for layout in flight.recorder.layouts],
        })
        writer = RecordWriter(out / "record.parquet", flight.recorder)
        origin = start(flight.loop, plant)
        info["ned_origin_enu_m"] = [float(x) for x in origin]
        total_ticks = int(round(duration * 1e9 / flight.loop.dt_ns))
        bar = Progress(duration, enabled=progress)
        started = time.perf_counter()
        reason = "duration"
        loop = flight.loop
        for _ in range(total_ticks):
            finished = loop.tick()
            writer.after_tick()
            if loop.ticks % 250 == 0:
                bar.update(loop.sim_time)
            if finished:
                reason = "done"
                break
        bar.update(loop.sim_time, force=True)
        bar.close()
    except KeyboardInterrupt:
        reason = "interrupted"
        raise
    except NexusError as error:
        reason = f"error: {error}"
        log.error("%s", error)
        raise
    except Exception as error:
        reason = f"error: {type(error).__name__}: {error}"
        log.exception("the run failed")
        raise
    finally:
        wall = time.perf_counter() - started
        if flight is not None:
            flight.loop.close()
            ticks, sim_time = flight.loop.ticks, flight.loop.sim_time
            stats = getattr(flight.vehicle.controller, "stats", None)
            if callable(stats):
                info["controller_stats"] = stats()
        if writer is not None:
            try:
                writer.close()
            except Exception:  # never hide the run's own failure behind a flush failure
                log.exception("could not flush the record")
        info.update({
            "exit_reason": reason,
            "ticks": ticks,
            "sim_time_s": sim_time,
            "wall_time_s": wall,
            "real_time_factor": sim_time / wall if wall > 0 else None,
            "record_rows": writer.rows_written if writer else 0,
        })
        (out / "run.json").write_text(json.dumps(info, indent=2, sort_keys=True, default=str) + "\n")
        logging.getLogger("nexus").removeHandler(handler)
        handler.close()
    return RunSummary(out, ticks, sim_time, wall, reason)
