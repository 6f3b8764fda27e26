"""``nexus px4 compare RUN_A RUN_B [--ulog A.ulg B.ulg]``: where two PX4 flights first part.

Two flights of the same mission against real PX4 are bit-identical only as far
as PX4's threads interleave the same way. This says where they part: the
first tick at which any column of the two records differs (every bit, NaN
included), and, given PX4's logs of the two flights, for each logged topic
the first PX4 time, among the times both logs hold a sample of it, at which
the samples' fields differ (every bit), with the sim tick that time belongs
to (the logger starts at its own moment in each run and logs some topics at
an interval, so samples are matched by their timestamps). Topics are listed by
that time, so the first line names where PX4 itself first diverged.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click
import numpy as np
from pyulog import ULog

from nexus.core.errors import NexusError
from nexus.runtime.replay import ReplayError, load_run


class CompareError(NexusError):
    """An input of ``nexus px4 compare`` cannot be read."""

    reason = "compare-error"


@dataclass
class TopicDifference:
    """One topic of two ULogs: samples compared and the first that differs (None: identical)."""

    topic: str
    samples: int
    #: Index (in log A) of the first differing sample among the times both logs hold, its PX4 time [µs],
    #: and the first field that differs there; ``samples``: how many times both logs hold.
    index: int | None = None
    time_usec: int | None = None
    field: str | None = None
    only_in: str | None = None


def _bits(values: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(values).view(np.uint8).reshape(len(values), -1)


def compare_records(run_a: Path, run_b: Path) -> dict:
    """The two records' rows, and the first tick (1-based) at which any column differs, with those columns."""

    try:
        (info_a, a), (info_b, b) = load_run(run_a), load_run(run_b)
    except ReplayError as error:
        raise CompareError(str(error)) from None
    rows_a = len(next(iter(a.values()))) if a else 0
    rows_b = len(next(iter(b.values()))) if b else 0
    common = [name for name in a if name in b]
    rows = min(rows_a, rows_b)
    first, columns = None, []
    for name in common:
        x, y = a[name][:rows], b[name][:rows]
        if x.dtype != y.dtype:
            index = 0
        else:
            differing = np.flatnonzero(np.any(_bits(x) != _bits(y), axis=1)) if rows else np.array([], dtype=int)
            if differing.size == 0:
                continue
            index = int(differing[0])
        if first is None or index < first:
            first, columns = index, [name]
        elif index == first:
            columns.append(name)
    if first is None and rows_a != rows_b:
        first = rows
    return {
        "rows": (rows_a, rows_b), "columns_compared": len(common),
        "only_in_a": [n for n in a if n not in b], "only_in_b": [n for n in b if n not in a],
        "first_tick": None if first is None else first + 1, "columns": columns,
        "tick_ns": int(info_a.get("tick_ns") or info_b.get("tick_ns") or 4_000_000),
    }


def _topics(path: Path) -> dict[str, dict[str, np.ndarray]]:
    try:
        log = ULog(str(path))
    except Exception as error:  # pyulog raises bare Exceptions and struct errors on a bad file
        raise CompareError(f"{path} cannot be read as a PX4 ULog ({type(error).__name__}: {error}); give the .ulg "
                           "files PX4 wrote for the two flights (its rootfs/log/<date>/ folder)") from None
    return {f"{d.name}[{d.multi_id}]": d.data for d in log.data_list}


def _first_difference(x: dict, y: dict) -> tuple[int | None, int | None, str | None, int]:
    """(index in A, PX4 time [µs], field) of the first sample whose fields differ among the times both
    logs hold, and how many times they share. The logger starts at its own moment and logs some topics
    at an interval, so samples are matched by their timestamps, not by their place in the log."""
    stamps_x, stamps_y = x["timestamp"], y["timestamp"]
    common, in_x, in_y = np.intersect1d(stamps_x, stamps_y, assume_unique=False, return_indices=True)
    first = None
    for field in sorted(set(x) | set(y)):
        if field not in x or field not in y or x[field].dtype != y[field].dtype:
            return (int(in_x[0]) if len(common) else 0), (int(common[0]) if len(common) else None), field, len(common)
        differing = np.flatnonzero(np.any(_bits(x[field][in_x]) != _bits(y[field][in_y]), axis=1)) if len(common) else []
        if len(differing) and (first is None or differing[0] < first[0]):
            first = (int(differing[0]), field)
    if first is None:
        return None, None, None, len(common)
    return int(in_x[first[0]]), int(common[first[0]]), first[1], len(common)


def compare_ulogs(path_a: Path, path_b: Path) -> list[TopicDifference]:
    """Every topic of either log, the differing ones first, by the PX4 time they part at."""
    a, b = _topics(path_a), _topics(path_b)
    out = []
    for topic in sorted(set(a) | set(b)):
        if topic not in b or topic not in a:
            data = a[topic] if topic in a else b[topic]
            stamps = data.get("timestamp", np.zeros(0, dtype=np.uint64))
            out.append(TopicDifference(topic, 0, 0, int(stamps[0]) if len(stamps) else None, None,
                                       "A" if topic in a else "B"))
            continue
        index, time_usec, field, shared = _first_difference(a[topic], b[topic])
        out.append(TopicDifference(topic, shared, index, time_usec, field))
    return sorted(out, key=lambda r: (r.index is None, r.time_usec if r.time_usec is not None else 0, r.topic))


@click.command("compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--ulog", "ulogs", nargs=2, type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="PX4's logs of the two flights (A.ulg B.ulg): also the first differing sample of each topic.")
@click.option("--all", "show_all", is_flag=True, help="With --ulog: also list the topics that are identical.")
def px4_compare(run_a, run_b, ulogs, show_all):
    """Where two PX4 flights first differ: the record's first differing tick and, with --ulog, each PX4 topic's."""
    try:
        records = compare_records(run_a, run_b)
    except CompareError as error:
        raise click.ClickException(str(error)) from None
    rows_a, rows_b = records["rows"]
    if records["first_tick"] is None:
        click.echo(f"records identical: {rows_a} ticks, {records['columns_compared']} columns, every bit")
    else:
        shown = ", ".join(records["columns"][:6]) + (" ..." if len(records["columns"]) > 6 else "")
        click.echo(f"records differ: first at tick {records['first_tick']} "
                   f"({records['first_tick'] * records['tick_ns'] * 1e-9:.3f} s sim), in {len(records['columns'])} "
                   f"columns: {shown or 'none (one record is shorter)'}; rows {rows_a} and {rows_b}")
    for side, names in (("A", records["only_in_a"]), ("B", records["only_in_b"])):
        if names:
            click.echo(f"columns only in {side}: {', '.join(names)}")
    if ulogs is None:
        return
    try:
        topics = compare_ulogs(*ulogs)
    except CompareError as error:
        raise click.ClickException(str(error)) from None
    tick_us = records["tick_ns"] / 1000.0
    differing = [t for t in topics if t.index is not None]
    click.echo(f"PX4 logs: {len(topics)} topics, {len(topics) - len(differing)} identical, {len(differing)} differ")
    for t in topics if show_all else differing:
        if t.index is None:
            click.echo(f"  {t.topic}: identical at the {t.samples} times both logs hold")
        elif t.only_in is not None:
            click.echo(f"  {t.topic}: only in log {t.only_in}")
        else:
            tick = int(np.ceil(t.time_usec / tick_us)) if t.time_usec is not None else None
            click.echo(f"  {t.topic}: first differs at PX4 time {t.time_usec * 1e-6:.6f} s (tick {tick}), field "
                       f"{t.field} (sample {t.index} of log A; {t.samples} times in both logs)")
