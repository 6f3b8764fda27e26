"""Flying many-world runs for the tests: ``nexus run`` in this process, read back as tables."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from click.testing import CliRunner

from nexus.cli import main


@dataclass
class Flown:
    out: Path
    info: dict
    record: pd.DataFrame | None
    #: None for a one-world run (it writes no summary).
    summary: pd.DataFrame | None
    exit_code: int
    output: str

    def world(self, index: int) -> pd.DataFrame:
        """World ``index``'s rows without the ``world`` column (a one-world record has none)."""
        rows = self.record if "world" not in self.record else self.record[self.record.world == index]
        return rows.drop(columns=[c for c in ("world",) if c in rows]).reset_index(drop=True)


def fly(out: Path, *args: str, expect: int = 0) -> Flown:
    """``nexus run ARGS --out OUT --quiet`` on the CPU; the run's files read back."""
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(out), *args])
    assert result.exit_code == expect, result.output
    info = json.loads((out / "run.json").read_text())
    record = pd.read_parquet(out / "record.parquet") if (out / "record.parquet").exists() else None
    summary = pd.read_parquet(out / "summary.parquet") if (out / "summary.parquet").exists() else None
    return Flown(out, info, record, summary, result.exit_code, result.output)


def bits_differ(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    """Columns whose bits differ (shapes and names must match)."""
    assert list(a.columns) == list(b.columns)
    assert len(a) == len(b), (len(a), len(b))
    return [c for c in a.columns
            if not np.array_equal(np.ascontiguousarray(a[c].to_numpy()).view(np.uint8),
                                  np.ascontiguousarray(b[c].to_numpy()).view(np.uint8))]
