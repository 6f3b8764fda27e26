"""Run folders of many worlds, made from a real one-world run, as ``nexus run --worlds N`` lays them out.

Every world replays the real flight's record (thinned to every ``every``-th
tick) with its base moved: world w starts ``start_apart·(w % 3)`` m east of
world 0 (as a drawn ``start_x`` puts it), drifts east at ``0.02·w/N`` m/s and
north along ``0.3·(sin(t + w) − sin(t₀ + w))`` m, and climbs ``1 + 0.1·w/N`` times as high.
A failed world holds its position from its failed tick on. The summary's
figures are those of the moved paths, so the report's numbers can be checked
against them by hand.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

#: Rows per record part (``nexus run`` drains its device table in parts of this order).
PART_ROWS = 20_000


def failed_worlds(worlds: int) -> list[int]:
    """The worlds that fail: every 100th from world 7 (7, 107, ...), and world 1 when there are few."""
    chosen = list(range(7, worlds, 100))
    return chosen if chosen else [1] if worlds > 1 else []


def write_worlds_run(source: Path, out: Path, worlds: int, every: int = 8, mode: str = "full",
                     start_apart: float = 5.0) -> Path:
    """A run folder of ``worlds`` worlds at ``out``, made from the one-world run ``source``."""
    out.mkdir(parents=True)
    info = json.loads((source / "run.json").read_text())
    tick_s = info["tick_ns"] * 1e-9
    base = pq.read_table(source / "record.parquet")
    base = base.take(np.arange(0, base.num_rows, every))
    ticks = base.num_rows
    time = base.column("time").to_numpy()
    failed = failed_worlds(worlds)
    fail_at = {w: time[int(ticks * (0.3 + 0.4 * k / max(len(failed), 1)))] for k, w in enumerate(failed)}
    x, y, z = (base.column(f"body/base.pose[{i}]").to_numpy().astype(np.float64) for i in range(3))
    ground = z[0]
    positions = np.empty((ticks, worlds, 3))
    for w in range(worlds):
        positions[:, w, 0] = x + start_apart * (w % 3) + 0.02 * w / worlds * time
        positions[:, w, 1] = y + 0.3 * (np.sin(time + w) - np.sin(time[0] + w))
        positions[:, w, 2] = ground + (z - ground) * (1.0 + 0.1 * w / worlds)
        if w in fail_at:
            frozen = time >= fail_at[w]
            positions[frozen, w] = positions[np.argmax(frozen), w]
    if mode == "full":
        table = base.take(np.repeat(np.arange(ticks), worlds))  # sorted by tick, then world
        columns = {name: table.column(name) for name in table.column_names}
        for i in range(3):
            columns[f"body/base.pose[{i}]"] = pa.array(positions[:, :, i].ravel().astype(np.float32))
        names = ["time", "world", *table.column_names[1:]]
        columns["world"] = pa.array(np.tile(np.arange(worlds, dtype=np.int32), ticks))
        table = pa.table([columns[name] for name in names], names=names)
        record = out / "record.parquet"
        record.mkdir()
        pq.write_table(table.slice(0, 0), record / "part-000000.parquet")
        for k, begin in enumerate(range(0, table.num_rows, PART_ROWS)):
            pq.write_table(table.slice(begin, PART_ROWS), record / f"part-{k + 1:06d}.parquet")
    shutil.copy(source / "run.log", out / "run.log")
    values = [{"mass_scale": 1.0 + 0.2 * w / worlds, "thrust_scale[0]": 1.0 - 0.05 * w / worlds,
               "motor_model": "fast" if w % 2 else "slow"} for w in range(worlds)]
    info.update(worlds=worlds, world_values=values, record_every=every, record_mode=mode,
                record_rows=ticks * worlds if mode == "full" else 0)
    (out / "run.json").write_text(json.dumps(info, indent=1))
    pq.write_table(summary_table(positions, time, tick_s, ground, fail_at, values), out / "summary.parquet")
    return out


def summary_table(positions, time, tick_s, ground, fail_at, values) -> pa.Table:
    worlds = positions.shape[1]
    climb = positions[:, :, 2] - ground
    done = np.array([w not in fail_at for w in range(worlds)])
    reason = np.where(done, "done", "failed").astype(object)
    reason[(np.arange(worlds) % 50 == 49) & done] = "duration"
    done = reason == "done"
    return pa.table({
        "world": pa.array(np.arange(worlds, dtype=np.int32)),
        "seed": pa.array(np.arange(worlds, dtype=np.int64) + 100),
        "exit_reason": pa.array(reason.tolist()),
        "done_time": pa.array(np.where(done, time[-1], np.nan)),
        "failed_tick": pa.array(np.array([round(fail_at[w] / tick_s) if w in fail_at else -1 for w in range(worlds)],
                                         dtype=np.int64)),
        "max_altitude_error": pa.array(np.abs(climb - climb[:, :1]).max(axis=0)),  # against world 0's climb
        "max_yaw_error": pa.array(np.linspace(0.5, 3.0, worlds)),
        "landing_error": pa.array(np.hypot(positions[-1, :, 0] - positions[0, :, 0],
                                           positions[-1, :, 1] - positions[0, :, 1])),
        "final_x": pa.array(positions[-1, :, 0]), "final_y": pa.array(positions[-1, :, 1]),
        "final_z": pa.array(positions[-1, :, 2]),
        "vary.mass_scale": pa.array([v["mass_scale"] for v in values]),
        "vary.thrust_scale[0]": pa.array([v["thrust_scale[0]"] for v in values]),
        "vary.motor_model": pa.array([v["motor_model"] for v in values]),
    })
