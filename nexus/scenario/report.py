"""``nexus test --report DIR``: an HTML page of the verdicts, with a figure per failed check.

Each figure draws the measured quantity over the check's window against its bound, and marks the first
time it broke it. The page (``DIR/index.html``) embeds the figures as PNG, so it is one file to keep as a CI
artefact.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

from nexus.scenario.fault_trigger import fault_line
from nexus.scenario.runner import ERROR, FAILED, PASSED, SKIPPED, summary_counts


def _figure(result) -> str:
    """The PNG (base64) of ``result``'s measure against its bound over its window."""
    import matplotlib  # noqa: PLC0415  (reason: heavy optional plotting, only for a report with figures)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (reason: after matplotlib.use("Agg"))

    check = result.check
    times, values = result.series
    fig, ax = plt.subplots(figsize=(6.4, 2.8), dpi=90)
    ax.plot(times, values, lw=1.2, label=check.measure)
    ax.axhline(check.bound, color="tab:red", ls="--", lw=1.0, label=f"bound ({check.side}) {check.bound:g}")
    if result.first_time is not None:
        ax.axvline(result.first_time, color="tab:orange", lw=0.8, label=f"first failed {result.first_time:.3f} s")
    ax.set_xlabel("sim time [s]")
    ax.set_ylabel(f"{check.measure} [{check.unit}]")
    ax.set_title(check.describe(), fontsize=9)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


def report_html(cases, wall_s: float) -> str:
    counts = summary_counts(cases)
    rows, details = [], []
    for case in cases:
        failed = ", ".join(r.check.name for r in case.failed_results())
        faults = "<br>".join(html.escape(fault_line(fault)) for fault in case.faults)
        rows.append(f"<tr class='{case.verdict}'><td>{html.escape(case.label)}</td><td>{case.verdict}</td>"
                    f"<td>{html.escape(failed or case.reason)}</td><td>{faults}</td></tr>")
        if case.verdict != FAILED:
            continue
        details.append(f"<h2>{html.escape(case.label)}</h2>")
        if case.folder is not None:
            details.append(f"<p>run folder: <code>{html.escape(str(case.folder))}</code></p>")
        for result in case.failed_results():
            details.append(f"<h3>{html.escape(result.check.name)}</h3><p>{html.escape(result.message())}</p>"
                           f"<img alt='{html.escape(result.check.name)}' src='data:image/png;base64,"
                           f"{_figure(result)}'>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>nexus test</title><style>"
            "body{font-family:sans-serif;margin:1.5em} td{padding:2px 8px} .failed{background:#fdd}"
            " .error{background:#fec} .passed{background:#dfd} .skipped{color:#888}</style></head><body>"
            f"<h1>nexus test</h1><p>{counts[PASSED]} passed, {counts[FAILED]} failed, {counts[ERROR]} errors, "
            f"{counts[SKIPPED]} skipped in {wall_s:.1f} s</p><table><tr><th>case</th><th>verdict</th>"
            f"<th>failed checks / reason</th><th>faults fired by a condition</th></tr>{''.join(rows)}</table>{''.join(details)}</body></html>\n")


def write_report(folder: Path, cases, wall_s: float) -> Path:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.html"
    path.write_text(report_html(cases, wall_s))
    return path
