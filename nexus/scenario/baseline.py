"""Baselines: each check's worst value per matrix point, stored once and compared on later runs.

``--save-baseline DIR`` writes ``DIR/<scenario name>.json``; ``--baseline DIR`` reads it back before any run
(a missing file, a file of another scenario or a matrix point it lacks is refused) and, after the flights,
fails a check whose worst value got worse than the stored one by more than the scenario's
``[baseline] tolerance`` for it (checks without a tolerance are not compared).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from nexus.scenario.checks import CheckResult
from nexus.scenario.spec import ScenarioError

#: The format of a baseline file.
FORMAT = 1


def _file(folder: Path, name: str) -> Path:
    return Path(folder) / f"{name}.json"


def check_baselines(folder: Path, cases) -> None:
    """Refuse, before any run, baselines that are missing, of another scenario, or lack a matrix point."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ScenarioError(f"--baseline {folder}: no such folder; make one with --save-baseline {folder}")
    for case in cases:
        if case.point_id is None:
            continue
        path = _file(folder, case.scenario.name)
        try:
            data = json.loads(path.read_text())
        except OSError:
            raise ScenarioError(f"--baseline {folder}: no baseline of scenario {case.scenario.name!r} ({path.name}); "
                                f"make one with --save-baseline {folder}") from None
        except ValueError as error:
            raise ScenarioError(f"{path}: not a baseline file ({error}); make it again with --save-baseline") from None
        if data.get("scenario") != case.scenario.name:
            raise ScenarioError(f"{path}: a baseline of another scenario ({data.get('scenario')!r}), not of "
                                f"{case.scenario.name!r} ({case.scenario.path}); give the folder of this "
                                "scenario's baseline, or make one with --save-baseline")
        if case.key not in data.get("points", {}):
            raise ScenarioError(f"{path}: no baseline of matrix point {case.key} of {case.scenario.name!r}; "
                                "make the baseline again with --save-baseline")


def save(folder: Path, cases) -> list[Path]:
    """Write each scenario's worst values per matrix point (cases that flew and were judged)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    by_name: dict[str, dict] = {}
    for case in cases:
        if not case.results:
            continue
        entry = by_name.setdefault(case.scenario.name, {"format": FORMAT, "scenario": case.scenario.name,
                                                        "file": str(case.scenario.path), "points": {}})
        entry["points"][case.key] = {r.check.name: (r.worst if math.isfinite(r.worst) else None) for r in case.results}
    written = []
    for name, entry in by_name.items():
        path = _file(folder, name)
        path.write_text(json.dumps(entry, indent=2, sort_keys=True) + "\n")
        written.append(path)
    return written


def compare(folder: Path, cases) -> None:
    """Add a ``baseline:<check>`` result to each case for every check with a tolerance (failed: a regression)."""
    for case in cases:
        if not case.results:
            continue
        stored = json.loads(_file(folder, case.scenario.name).read_text())["points"][case.key]
        extra = []
        for result in case.results:
            tolerance = case.scenario.tolerance.get(result.check.name)
            before = stored.get(result.check.name)
            if tolerance is None or before is None:
                continue
            bound = before + tolerance if result.check.side == "max" else before - tolerance
            check = replace(result.check, name=f"baseline:{result.check.name}", bound=bound)
            extra.append(_against(check, result))
        case.results += extra
        if any(not r.passed for r in extra):
            case.verdict = "failed"


def _against(check, result: CheckResult) -> CheckResult:
    """``result``'s series judged against ``check``'s bound (the stored worst value plus the tolerance)."""
    times, values = (np.asarray(a, dtype=np.float64) for a in result.series)
    worst = result.worst
    if check.side == "max":
        bad = ~(values <= check.bound)
        excess = worst - check.bound
    else:
        bad = ~(values >= check.bound)
        excess = check.bound - worst
    if not bad.any() or not excess > 0:
        return CheckResult(check, True, worst, series=result.series)
    first = float(times[int(np.flatnonzero(bad)[0])])
    return CheckResult(check, False, worst, first, int(round(first / result.tick_s)), float(excess), result.series,
                       result.tick_s)
