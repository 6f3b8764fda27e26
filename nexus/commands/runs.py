"""``nexus runs``: the runs under a folder, with status, ticks, exit reason and size."""

from __future__ import annotations

import json
from pathlib import Path

import click

from nexus.runtime.runs import find_runs


def _size_text(size: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size} B"


@click.command()
@click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("runs"))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run instead of a table.")
def runs(folder: Path, as_json: bool) -> None:
    """List the runs at or under FOLDER (default runs/): status, ticks, exit reason, size.

    Status is finished, failed, interrupted, terminated, running (its process
    still flies) or killed (its run.json still says running, but its process
    is gone: the ticks are those its record holds).
    """

    rows = find_runs(folder)
    if as_json:
        for row in rows:
            click.echo(json.dumps({"folder": str(row.folder), "status": row.status, "ticks": row.ticks,
                                   "sim_time_s": row.sim_time_s, "exit_reason": row.exit_reason,
                                   "bytes": row.size, "error": row.error}))
        return
    if not rows:
        click.echo(f"no runs under {folder} (a run folder holds run.json)", err=True)
        return
    table = [("run", "status", "ticks", "sim [s]", "exit reason", "size")]
    for row in rows:
        table.append((
            str(row.folder), row.status, "-" if row.ticks is None else str(row.ticks),
            "-" if row.sim_time_s is None else f"{row.sim_time_s:.2f}", row.exit_reason or "-", _size_text(row.size),
        ))
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for r in table:
        click.echo("  ".join(cell.ljust(w) if i in (0, 1, 4) else cell.rjust(w) for i, (cell, w) in enumerate(zip(r, widths))).rstrip())
