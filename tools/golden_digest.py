"""The golden digest: per-column SHA-256 of the first rows of one short seeded record.

A CPU run is bit-exact, so the bits of a seeded flight are a fixed point of the
code. The digest pins them across processes, machines and commits: a renamed
noise stream, a reordered draw or a changed kernel changes a column's hash, and
an older record would then no longer replay. ``tests/test_determinism_gate.py``
compares a fresh flight against ``tests/golden/short_seed7.json``.

When the bits change on purpose (new physics, a new stage, a new column), rewrite
the digest and say in the commit message why the bits changed::

    .venv/bin/python tools/golden_digest.py --write    # fly, hash, rewrite the JSON
    .venv/bin/python tools/golden_digest.py            # fly, hash, compare (exit 1 on a difference)
    .venv/bin/python tools/golden_digest.py --record runs/x/record.parquet   # compare a record you have

The flight is ``nexus run`` in a child process (``python -m nexus.cli``), with the
arguments stored in the JSON, so the digest never depends on this process's state.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from nexus.record.parts import read_record  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden" / "short_seed7.json"
#: How to regenerate the digest; quoted in every failure message.
WRITE_COMMAND = "python tools/golden_digest.py --write"
#: The flight whose bits are pinned: the short mission (under 10 s of sim time), seed 7, on the CPU.
FLIGHT_ARGS = ["run", "--device", "cpu", "--controller", "pid", "--mission", "short", "--seed", "7",
               "--duration", "10", "--quiet"]
#: Rows hashed: 300 ticks at 250 Hz = 1.2 s (start-up, spin-up and the first climb; every sensor has sampled).
ROWS = 300


def fly(out: Path, args: list[str] | None = None) -> Path:
    """Run ``nexus run <args> --out out`` in a child process; the path of its record."""
    command = [sys.executable, "-m", "nexus.cli", *(args or FLIGHT_ARGS), "--out", str(out)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the golden flight failed (exit {done.returncode}): {' '.join(command)}\n"
                           f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}")
    return Path(out) / "record.parquet"


def _value(x) -> float | int:
    return x.item() if hasattr(x, "item") else x


def digest(record: Path, rows: int = ROWS) -> dict:
    """Per column of ``record``: dtype, SHA-256 of its first ``rows`` values' bytes, first and last value."""
    table = read_record(record)
    if table.num_rows < rows:
        raise ValueError(f"{record} has {table.num_rows} rows; the golden digest hashes the first {rows}")
    columns = {}
    for name in table.column_names:
        values = np.ascontiguousarray(table.column(name).to_numpy()[:rows])
        columns[name] = {
            "dtype": str(values.dtype),
            "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
            "first": _value(values[0]),
            "last": _value(values[-1]),
        }
    return {"rows": rows, "columns": columns}


def differences(golden: dict, actual: dict) -> list[str]:
    """One line per column that is missing, new, or whose bits differ; empty when all match."""
    lines = []
    if golden["rows"] != actual["rows"]:
        lines.append(f"rows hashed: golden {golden['rows']}, now {actual['rows']}")
    want, have = golden["columns"], actual["columns"]
    lines += [f"{name}: in the golden record, missing now" for name in want if name not in have]
    lines += [f"{name}: new column, not in the golden record" for name in have if name not in want]
    for name in want:
        w, h = want[name], have.get(name)
        if h is not None and (w["sha256"], w["dtype"]) != (h["sha256"], h["dtype"]):
            detail = f"dtype {w['dtype']} -> {h['dtype']}" if w["dtype"] != h["dtype"] else \
                f"row 0 {w['first']!r} -> {h['first']!r}, row {golden['rows'] - 1} {w['last']!r} -> {h['last']!r}"
            lines.append(f"{name}: bits differ ({detail})")
    return lines


def report(lines: list[str], limit: int = 40) -> str:
    """A failure message: which columns differ, and what to do if the change is deliberate."""
    shown = lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])
    return (f"the flight's first rows differ from {GOLDEN.relative_to(ROOT)} in {len(lines)} place(s):\n  "
            + "\n  ".join(shown)
            + f"\nIf the change is deliberate (new physics, noise, stage or column), run `{WRITE_COMMAND}` "
              "and say in the commit message why the bits changed. If it is not, a run is no longer "
              "reproducible: older records will not replay.")


def load_golden(path: Path = GOLDEN) -> dict:
    return json.loads(Path(path).read_text())


def write_golden(actual: dict, path: Path = GOLDEN) -> None:
    about = {
        "about": "Per-column SHA-256 of the first rows of a seeded CPU flight; compared by "
                 "tests/test_determinism_gate.py. Do not edit by hand.",
        "regenerate": WRITE_COMMAND,
        "flight": ["python", "-m", "nexus.cli", *FLIGHT_ARGS],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**about, **actual}, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite the golden digest from a fresh flight")
    parser.add_argument("--record", type=Path, help="digest this record.parquet instead of flying")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="nexus-golden-") as tmp:
        record = args.record or fly(Path(tmp) / "flight")
        actual = digest(record)
    if args.write:
        write_golden(actual)
        print(f"wrote {GOLDEN.relative_to(ROOT)}: {len(actual['columns'])} columns, first {actual['rows']} rows; "
              "say in the commit message why the bits changed")
        return 0
    lines = differences(load_golden(), actual)
    if lines:
        print(report(lines))
        return 1
    print(f"golden digest matches: {len(actual['columns'])} columns, first {actual['rows']} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
