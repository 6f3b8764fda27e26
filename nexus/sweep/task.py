"""One point of a sweep, flown in whatever process runs it (a Ray worker, or this one).

It calls the same :func:`nexus.runtime.run.run_flight` that ``nexus run`` calls, into
the point's folder, so the folder is an ordinary run folder; this module
knows nothing of Ray. A failed run is a result, not an exception: its row
carries the exit reason and the error. Only a stop (Ctrl-C, SIGTERM, Ray's
cancel) propagates, after PX4 and everything else the point started have
been stopped.

With ``ship`` (a cluster whose workers do not share the driver's disk), the
run is written to a scratch folder on the worker and its files come back in
the result as a tar archive, which the driver unpacks into ``DIR``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from nexus.control.registry import DEFAULT_CONTROLLER
from nexus.core.warp_setup import init_warp
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from nexus.sweep.figures import run_figures
from nexus.sweep.overrides import write_overrides
from nexus.sweep.px4_fleet import Px4Flight

#: The file in a point's folder that says which point it is (written before the run starts).
POINT_FILE = "point.json"

_warp_ready = False


def _ready_warp() -> None:
    """Warp initialised once per process (a worker flies many points in turn)."""
    global _warp_ready
    if not _warp_ready:
        init_warp(False)
        logging.getLogger("nexus").setLevel(logging.INFO)  # run.log gets what `nexus run` logs
        _warp_ready = True


def warm(config: dict | None = None, gate=None, workers: int = 1) -> int:
    """Ready this worker before its first point; returns its pid.

    With ``gate`` (a :class:`~nexus.sweep.gate.Gate` actor), it waits until ``workers`` warm-ups arrived, so Ray starts that
    many workers rather than warming one worker twice.

    Imports the flight code, initialises Warp and, given a point's configuration, builds that flight once
    (with the default controller, one world, nothing flown) so the Warp modules are loaded: a sweep starts its
    workers together and their first points do not each pay for it. A build that fails here is left to
    the point to report.
    """
    _ready_warp()
    if config is not None:
        try:
            options = replace(RunConfig.from_dict(config), controller=DEFAULT_CONTROLLER, controller_options={},
                              worlds=1, vary=None)
            flight = build_flight(options, start_render=False)
            flight.loop.close()
        except Exception as error:  # noqa: BLE001
            logging.getLogger("nexus").debug("warm-up build failed: %s", error)
    if gate is not None:  # hold this worker until every warm-up has one of its own
        import ray  # noqa: PLC0415  (reason: ray is optional and heavy; only a sweep's workers need it)

        ray.get(gate.arrive.remote())
        deadline = time.monotonic() + 600.0
        while ray.get(gate.count.remote()) < workers and time.monotonic() < deadline:
            time.sleep(0.1)
    return os.getpid()


def clear_folder(folder: Path) -> None:
    """Empty a point's folder: a half-written run from an earlier try never mixes with this one."""
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder)
    elif folder.exists() or folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True)


def pack(folder: Path) -> bytes:
    """The folder's files as one gzip'd tar (paths relative to the folder)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and not path.name.startswith(".nexus-reserve"):
                archive.add(path, arcname=str(path.relative_to(folder)), recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Undo :func:`pack` into ``folder`` (emptied first); refuses members that would land outside it."""
    clear_folder(folder)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        archive.extractall(folder, filter="data")


def fly_point(point: dict, folder: str, ship: bool = False, allow_commands: bool = False) -> dict:
    """Fly one point into ``folder``; return its row (figures, exit reason, wall time) and, with ``ship``, its files."""
    started = time.perf_counter()
    final = Path(folder)
    out = Path(tempfile.mkdtemp(prefix=f"nexus-sweep-{point['id']}-")) / "run" if ship else final
    row = {"point": point["id"], "host": os.uname().nodename, "pid": os.getpid()}
    try:
        clear_folder(out)
        (out / POINT_FILE).write_text(json.dumps(point, indent=2, sort_keys=True, default=str) + "\n")
        _ready_warp()
        config = RunConfig.from_dict(point["config"], source=f"point {point['id']}")
        error = None
        try:
            vehicle, scene = write_overrides(out, config.vehicle, config.scene, point.get("attributes") or {})
            config = replace(config, vehicle=vehicle, scene=scene)
        except Exception as failure:  # noqa: BLE001 (recorded as the point's error)
            error = f"{type(failure).__name__}: {failure}"
        if error is None:
            fleet = None
            if point.get("px4"):
                fleet = Px4Flight(point["px4"], out, allow_commands)
            try:
                if fleet is not None:
                    try:
                        config = fleet.start(config)
                    except Exception as failure:  # noqa: BLE001 (recorded as the point's error)
                        error = f"PX4 did not start: {type(failure).__name__}: {failure}"
                if error is None:
                    run_flight(config, out, progress=False)
            except KeyboardInterrupt:
                raise
            except Exception:  # noqa: BLE001 (run.json and run.log hold the exit reason and error)
                pass
            finally:
                if fleet is not None:
                    row.update(fleet.stop())
        row.update(run_figures(out))
        if error is not None:
            reason = "px4-start-failed" if error.startswith("PX4 did not start") else "bad-override"
            row.update(status="failed", exit_reason=reason, error=error)
        if row.get("mission_error") and row.get("status") == "finished":
            row.update(status="failed", exit_reason="mission-failed", error=row["mission_error"])
        row["wall_s"] = time.perf_counter() - started
        if ship:
            row["files"] = pack(out)
        return row
    finally:
        if ship:
            shutil.rmtree(out.parent, ignore_errors=True)
