"""``nexus plot DIR`` on a sweep folder: each varied parameter against each run figure, failed points marked.

A sweep folder holds ``sweep.parquet`` (:mod:`nexus.sweep.table`). For each
figure (altitude and yaw errors, landing error, time to done, real-time
factor) the page draws one scatter per varied parameter (text parameters on
a categorical axis); with exactly two parameters it adds a heat map of the
figure over both (the mean where several points share a cell). A failed
point has no figure worth drawing: it is a red cross on the parameter's axis
at the bottom of the scatter, and a crossed cell in the heat map.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from nexus.runtime.run_folder import RunFolder
from nexus.sweep.table import RESULT_COLUMNS
from nexus.viz import report_page as one

#: Figures drawn, with their labels and units.
FIGURES = (("max_altitude_error", "max altitude error", "m"), ("max_yaw_error", "max yaw error", "deg"),
           ("landing_error", "landing error", "m"), ("done_time", "time to done", "s"), ("rtf", "real-time factor", "-"))


def px4_ulog(folder: Path) -> Path | None:
    """PX4's ULog of a sweep point's flight (``px4/px4.json`` names it), for ``nexus plot`` to overlay; else None."""
    name = RunFolder(folder).px4_info().get("ulog")
    return Path(folder) / name if name and (Path(folder) / name).is_file() else None


def is_sweep(folder: Path) -> bool:
    return (Path(folder) / "sweep.parquet").is_file()


def _parameters(folder: Path, columns: list[str]) -> list[str]:
    try:
        listed = json.loads((Path(folder) / "sweep.json").read_text())["parameters"]
    except (OSError, ValueError, KeyError):
        listed = [c for c in columns if c not in ("point", *RESULT_COLUMNS)]
    return [p for p in listed if p in columns]


def _axis_values(values: list) -> tuple[np.ndarray, list[str] | None]:
    """Positions on an axis: the numbers themselves, or indices of the distinct texts (with their labels)."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values if v is not None):
        return np.array([math.nan if v is None else float(v) for v in values]), None
    labels = sorted({str(v) for v in values})
    return np.array([labels.index(str(v)) for v in values], dtype=float), labels


def _short(name: str) -> str:
    return name.rsplit(" ", 1)[-1] if name.startswith("/") else name


def _scatter(parameter: str, x: np.ndarray, labels, y: np.ndarray, failed: np.ndarray, label: str, unit: str):
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    figure = Figure(figsize=(5.5, 3.6), layout="constrained")
    axes = figure.add_subplot()
    ok = ~failed & np.isfinite(y)
    axes.scatter(x[ok], y[ok], s=22, color="tab:blue", label="finished")
    if failed.any():
        finite = y[ok]
        bottom = float(finite.min()) if finite.size else 0.0
        axes.scatter(x[failed], np.full(failed.sum(), bottom), marker="x", s=50, color="red",
                     label=f"failed ({int(failed.sum())})")
    if labels is not None:
        axes.set_xticks(range(len(labels)), labels)
    axes.set_xlabel(_short(parameter))
    axes.set_ylabel(f"{label} [{unit}]")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return figure


def _heat_map(names: list[str], xs, ys, z: np.ndarray, failed: np.ndarray, label: str, unit: str):
    from matplotlib.figure import Figure  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    (x, x_labels), (y, y_labels) = xs, ys
    cols, rows = np.unique(x[np.isfinite(x)]), np.unique(y[np.isfinite(y)])
    grid = np.full((len(rows), len(cols)), np.nan)
    crossed = np.zeros_like(grid, dtype=bool)
    for j, row in enumerate(rows):
        for i, col in enumerate(cols):
            here = (x == col) & (y == row)
            good = here & ~failed & np.isfinite(z)
            if good.any():
                grid[j, i] = float(np.mean(z[good]))
            crossed[j, i] = bool((here & failed).any())
    figure = Figure(figsize=(5.5, 4.0), layout="constrained")
    axes = figure.add_subplot()
    image = axes.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    figure.colorbar(image, ax=axes, label=f"{label} [{unit}] (mean)")
    for j, i in zip(*np.nonzero(crossed)):
        axes.scatter([i], [j], marker="x", s=80, color="red")
    axes.set_xticks(range(len(cols)), x_labels if x_labels else [f"{v:g}" for v in cols], rotation=45)
    axes.set_yticks(range(len(rows)), y_labels if y_labels else [f"{v:g}" for v in rows])
    axes.set_xlabel(_short(names[0]))
    axes.set_ylabel(_short(names[1]))
    return figure


def write_sweep_report(folder: Path, out: Path | None = None) -> one.Report:
    """Draw the sweep's figures into ``out/plots/`` (default DIR) and write ``out/report.html``."""

    folder = Path(folder)
    rows = pq.read_table(folder / "sweep.parquet").to_pylist()
    columns = list(rows[0]) if rows else []
    parameters = _parameters(folder, columns)
    failed = np.array([r.get("status") != "finished" for r in rows], dtype=bool)
    axes = {p: _axis_values([r.get(p) for r in rows]) for p in parameters}
    drawn: dict[str, tuple[str, object]] = {}
    for name, label, unit in FIGURES:
        y = np.array([math.nan if r.get(name) is None else float(r[name]) for r in rows])
        if not np.isfinite(y).any() and not failed.any():
            continue
        for k, parameter in enumerate(parameters):
            x, labels = axes[parameter]
            drawn[f"sweep_{name}_vs_{k}"] = (f"{label} against {_short(parameter)}",
                                             _scatter(parameter, x, labels, y, failed, label, unit))
        if len(parameters) == 2:
            drawn[f"sweep_{name}_map"] = (f"{label} over {_short(parameters[0])} and {_short(parameters[1])}",
                                          _heat_map(parameters, axes[parameters[0]], axes[parameters[1]], y, failed,
                                                    label, unit))
    out = Path(out) if out is not None else folder
    _, paths, images = one.save_figures(out, drawn)
    notes = [] if rows else ["sweep.parquet holds no points yet"]
    failures = "".join(f"<tr><td>{html.escape(str(r.get('folder')))}</td><td>{html.escape(str(r.get('exit_reason')))}"
                       f"</td><td>{html.escape(str(r.get('error')))}</td></tr>" for r in rows if r.get("status") != "finished")
    summary = (f"<p>{len(rows)} points, {int(failed.sum())} failed; varied: "
               f"{html.escape(', '.join(parameters) or 'nothing')}.</p>")
    if failures:
        summary += f"<table><tr><th>run</th><th>exit reason</th><th>error</th></tr>{failures}</table>"
    page = out / "report.html"
    page.write_text(one.page(f"Sweep {folder.name}", summary + one.notes_html(notes, []) + one.figures_html(drawn, images)))
    return one.Report(page, paths, [], notes)
