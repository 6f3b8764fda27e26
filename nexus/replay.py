"""``nexus replay``: rerun a recorded flight open loop and compare it bit for bit.

The recorded ``controls`` rows drive the same vehicle, scene, seed and tick
on the CPU; every column the replay produces must equal the record's bits.
The setpoint is a controller input and is not produced open loop, so it is
listed as not compared.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from nexus.control.replay import ReplayControls
from nexus.core.errors import NexusError
from nexus.flight import FlightOptions
from nexus.run import run_flight


class ReplayError(NexusError):
    """The record cannot be replayed (missing files, columns or fields)."""


@dataclass
class ReplayResult:
    ticks: int
    compared: list[str]
    not_compared: list[str]
    #: (tick, column) of the first difference, or None when every bit matched.
    first_difference: tuple[int, str] | None = None
    details: dict = field(default_factory=dict)

    @property
    def identical(self) -> bool:
        return self.first_difference is None


def load_run(out: Path) -> tuple[dict, dict[str, np.ndarray]]:
    out = Path(out)
    if not (out / "run.json").is_file() or not (out / "record.parquet").is_file():
        raise ReplayError(f"{out} is not a run folder: it needs run.json and record.parquet (the OUT of `nexus run`)")
    info = json.loads((out / "run.json").read_text())
    table = pq.read_table(out / "record.parquet")
    return info, {name: table.column(name).to_numpy() for name in table.column_names}


def recorded_controls(columns: dict[str, np.ndarray], out: Path) -> np.ndarray:
    names = sorted((n for n in columns if n.startswith("controls[")), key=lambda n: int(n[9:-1]))
    if not names:
        raise ReplayError(f"{out}/record.parquet has no controls columns to replay")
    return np.stack([columns[n] for n in names], axis=1).astype(np.float32)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)


def compare(original: dict[str, np.ndarray], replayed: dict[str, np.ndarray]) -> ReplayResult:
    compared = [n for n in original if n in replayed]
    not_compared = [n for n in original if n not in replayed]
    ticks = len(next(iter(original.values()))) if original else 0
    result = ReplayResult(ticks, compared, not_compared)
    first: tuple[int, str] | None = None
    for name in compared:
        a, b = original[name], replayed[name]
        if len(a) != len(b) or a.dtype != b.dtype:
            candidate = (min(len(a), len(b)), name)
        else:
            rows = np.flatnonzero(np.any(_bits(a) != _bits(b), axis=1))
            if rows.size == 0:
                continue
            candidate = (int(rows[0]), name)
        if first is None or candidate[0] < first[0]:
            first = candidate
    if first is not None:
        tick_index, name = first
        result.first_difference = (tick_index + 1, name)
        if tick_index < len(original[name]) and tick_index < len(replayed[name]):
            result.details = {"recorded": original[name][tick_index].item(), "replayed": replayed[name][tick_index].item()}
    return result


def replay(out: Path, *, eager: bool = False, keep: Path | None = None, progress: bool = False) -> ReplayResult:
    """Replay ``out`` on the CPU and compare; the replay's own record goes to ``keep`` (or a temp folder)."""
    out = Path(out)
    info, columns = load_run(out)
    controls = recorded_controls(columns, out)
    saved = info.get("options", {})
    options = FlightOptions(
        vehicle=info.get("vehicle", {}).get("path", saved.get("vehicle")),
        scene=info.get("scene", {}).get("path", saved.get("scene")),
        controller="hold",
        seed=int(saved.get("seed", 0)),
        tick_hz=float(saved.get("tick_hz", 250.0)),
        substeps=int(saved.get("substeps", 1)),
        decimal_year=info.get("decimal_year", saved.get("decimal_year")),
        record_capacity=int(saved.get("record_capacity", 2500)),
        eager=eager,
    )
    ticks = len(controls)
    target = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="nexus-replay-"))
    dt = 1.0 / options.tick_hz
    run_flight(options, "cpu", target, duration=ticks * dt, progress=progress, controller=ReplayControls(controls))
    _, replayed = load_run(target)
    result = compare(columns, replayed)
    result.details["replay_out"] = str(target)
    return result
