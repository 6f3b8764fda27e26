"""The Python side of ``tools/gpu_check.sh``: probe the GPU, run one bench suite, compare two flights, summarise.

Run by the shell script, one subcommand per step (see ``tools/gpu_check.sh --help``):

* ``probe``: prints the CUDA device Warp sees and exits 0; exits 3 when there is none, 1 when Warp cannot load;
* ``bench SUITE DEVICE --json-out FILE [--quick]``: ``nexus bench --suite SUITE --device DEVICE --json``, the
  result also written to FILE as soon as the suite ends; a suite whose optional packages are missing is skipped
  (exit 75, the reason in FILE); ``--quick`` shrinks the suite to a few ticks and rounds (a dry run's sizes:
  its figures are not measurements);
* ``compare FIRST SECOND --json-out FILE``: whether two run folders' records are bit-identical;
* ``summary RESULTS``: writes RESULTS/summary.txt and summary.json from the steps' status files, prints the text.

Only ``bench`` and ``compare`` import Nexus; ``summary`` reads JSON files and nothing else, so it runs in a
fraction of a second after every step.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import re
import sys
from pathlib import Path

#: Exit status of a step skipped because an optional package is missing.
SKIPPED = 75
#: Exit status of ``probe`` when Warp loads but sees no CUDA device.
NO_GPU = 3

#: The GPU targets the summary checks the figures against: (step, figure, comparison, value, where it is stated).
#: The figures are read from the step's JSON; ``rtf_captured`` >= 19 is the one-drone target on one H200
#: (issue 11), the worlds target is 10 M drone-steps/s at 16,384 worlds (issue 19), the render target is the
#: camera costing the one-world flight at most 30 % of its speed (docs/sensors.md).
GPU_TARGETS = {
    "flight": [("rtf_captured", ">=", 19.0), ("loop_vs_bare", "<=", 1.25), ("view_cost", "<=", 0.10)],
    "engine": [("engine_vs_hand", "<=", 1.2), ("captured_vs_eager", ">=", 20.0)],
    "plant": [("engine_vs_bare", "<=", 1.1)],
    "sensors": [("sensors_over_plant", "<=", 1.2)],
    "render": [("rtf_camera_over_plain", ">=", 0.7)],
    "diff": [("backward_over_forward", "<=", 4.0), ("captured_gradients_equal", "==", True),
             ("checkpointed_gradients_equal", "==", True)],
    "worlds": [("drone_steps_per_s@16384", ">=", 10_000_000.0)],
}
#: On a CPU dry run the suites' own CPU targets stand in (their sizes are shrunk, so nothing is measured).
CPU_TARGETS = {**GPU_TARGETS, "flight": [("rtf_captured", ">=", 20.0), ("loop_vs_bare", "<=", 1.25)],
               "render": [("wall_over_bound", "<=", 1.0)],
               "worlds": [("worlds_vs_bare@16", "<=", 1.3), ("drone_steps_per_s@16", ">=", 40_000.0)]}
#: Further figures the summary shows, without a target.
SHOWN = {
    "flight": ["rtf_eager", "rtf_bare_physics", "kernels_per_tick", "rtf_featherstone"],
    "engine": ["captured_tps"],
    "plant": ["plant_tick_us", "bare_step_us"],
    "sensors": ["sensor_tick_us"],
    "render": ["rtf_plain", "rtf_camera", "wall_over_bound", "render_s"],
    "diff": ["captured_speedup", "captured_forward_backward_us_per_tick", "forward_backward_us_per_tick"],
    "worlds": ["bytes_per_world"],
}


# -- probe ------------------------------------------------------------------------------------------


def probe() -> int:
    try:
        import warp as wp  # noqa: PLC0415

        wp.config.quiet = True
        wp.config.log_level = getattr(wp, "LOG_ERROR", 40)
        wp.init()
        count = wp.get_cuda_device_count()
    except Exception as error:  # noqa: BLE001 (any failure to load Warp is the answer)
        print(f"gpu-check: Warp does not load with {sys.executable}: {type(error).__name__}: {error}")
        return 1
    if not count:
        print("none")
        return NO_GPU
    device = wp.get_device("cuda:0")
    print(f"cuda:0 {device.name} (Warp {wp.config.version}, {count} CUDA device{'s' if count > 1 else ''})")
    return 0


# -- bench ------------------------------------------------------------------------------------------


def _write_json(path: Path, data: dict) -> None:
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, sort_keys=True) + "\n")
    partial.replace(path)


def shrink(name: str, module) -> None:
    """Make suite ``name`` (its loaded module) run a few ticks and rounds: a dry run's sizes."""
    from nexus.bench import flight  # noqa: PLC0415  (loop_against_bare lives there; worlds uses it too)
    from nexus.bench import timing  # noqa: PLC0415

    few_rounds = functools.partial(lambda best, rounds_of, rounds=2: best(rounds_of, min(rounds, 2)),
                                   timing.alternating_best)
    flight.alternating_best = few_rounds
    flight.ROUND_TICKS, flight.AIRBORNE_S, flight.CAP_S, flight.EAGER_S = 16, 0.6, 1.0, 0.1
    if name == "flight":
        view = flight._with_and_without_view
        flight._with_and_without_view = lambda device, folder, rounds=1: view(device, folder, 1)
    elif name == "worlds":
        module.ROUNDS = 2
        per_world = module.bytes_per_world
        module.bytes_per_world = lambda device, worlds: per_world(device, 4)
        module.run = functools.partial(module.run, worlds=(1, 4))
    elif name == "render":
        module.SECONDS, module.ROUNDS, module.RENDER_TRIES = 0.5, 1, 1
    elif name == "diff":
        module.run = functools.partial(module.run, ticks=16)
    elif name == "engine":
        module.run = functools.partial(module.run, ticks=40)
    elif name in ("plant", "sensors"):
        module.run = functools.partial(module.run, ticks=40, rounds=2)


def bench(name: str, device: str, json_out: Path, quick: bool) -> int:
    from nexus.bench.suites import SUITES, load, missing  # noqa: PLC0415

    if name not in SUITES:
        print(f"gpu-check: unknown suite {name!r}; choose from {', '.join(SUITES)}", file=sys.stderr)
        return 2
    absent = missing(name)
    if absent:
        note = (f"suite {name} skipped: it needs {', '.join(absent)}, which this Python cannot import "
                f"(pip install {' '.join(absent)})")
        print(f"gpu-check: {note}")
        _write_json(json_out, {"suite": name, "skipped": note})
        return SKIPPED
    import logging  # noqa: PLC0415

    from nexus.core.device import resolve_device  # noqa: PLC0415
    from nexus.core.warp_setup import init_warp  # noqa: PLC0415

    init_warp(False)
    warp_device = resolve_device(device)
    logging.getLogger("nexus").setLevel(logging.WARNING)  # as nexus bench: the suites' plans are not news
    module = load(name)
    if quick:
        shrink(name, module)
    print(f"gpu-check: nexus bench --suite {name} --device {device} --json"
          + (" (quick: a dry run's sizes, not a measurement)" if quick else ""), file=sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):  # Warp's module messages must not mix into the JSON
        result = module.run(warp_device)
    if quick:
        result["quick"] = True
    _write_json(json_out, result)
    print(json.dumps(result, sort_keys=True))
    return 0


# -- compare ----------------------------------------------------------------------------------------


def compare_runs(first: Path, second: Path, json_out: Path) -> int:
    from nexus.runtime.replay import ReplayError, compare, load_run  # noqa: PLC0415

    try:
        first_info, first_cols = load_run(first)
        second_info, second_cols = load_run(second)
    except ReplayError as error:
        print(f"gpu-check: nothing to compare: {error}")
        return 1
    result = compare(first_cols, second_cols)
    missing = sorted(set(first_cols) ^ set(second_cols))
    same_ticks = first_info["ticks"] == second_info["ticks"]
    out = {"ticks": [first_info["ticks"], second_info["ticks"]],
           "rtf": [first_info["real_time_factor"], second_info["real_time_factor"]],
           "columns": len(result.compared), "rows": result.ticks, "not_in_both": missing,
           "identical": bool(result.identical and not missing and same_ticks), "first_difference": None}
    print(f"gpu-check: two flights of the default mission: {out['ticks'][0]} and {out['ticks'][1]} ticks, "
          f"RTF {out['rtf'][0]:.1f}x and {out['rtf'][1]:.1f}x")
    if out["identical"]:
        print(f"gpu-check: the records are bit-identical ({out['columns']} columns, {out['rows']} rows)")
    elif result.first_difference is None:
        print(f"gpu-check: the records differ in length or columns (not in both: {missing})")
    else:
        tick, column = result.first_difference
        out["first_difference"] = {"tick": int(tick), "column": column,
                                   "first": str(result.details.get("recorded")),
                                   "second": str(result.details.get("replayed"))}
        print(f"gpu-check: the records differ; first at tick {tick}, column {column} "
              f"(first {out['first_difference']['first']}, second {out['first_difference']['second']})")
    _write_json(json_out, out)
    return 0


# -- summary ----------------------------------------------------------------------------------------


def _figure(name: str, data: dict):
    """A figure of a suite's JSON; ``key@N`` reads the worlds suite's row of N worlds."""
    if "@" in name:
        key, worlds = name.split("@")
        row = next((r for r in data.get("rows", []) if r.get("worlds") == int(worlds)), None)
        return None if row is None else row.get(key)
    if name == "rtf_camera_over_plain":
        plain, camera = data.get("rtf_plain"), data.get("rtf_camera")
        return camera / plain if plain and camera is not None else None
    return data.get(name)


def _show(value) -> str:
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "-"}[value]
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    return str(value)


def _met(value, op: str, target) -> bool | None:
    if value is None:
        return None
    return {">=": value >= target, "<=": value <= target, "==": value == target}[op]


def _pytest_counts(log: Path) -> str | None:
    if not log.is_file():
        return None
    counts = re.compile(r"\b(passed|failed|skipped|error|no tests ran)\b")
    lines = [line for line in log.read_text(errors="replace").splitlines() if counts.search(line)]
    return lines[-1].strip("= ") if lines else None


def figures(step: dict, folder: Path, cpu: bool) -> list[dict]:
    """The figures of one finished step: dicts of ``figure``, ``value``, and for a target ``target`` and ``met``."""
    name, stem = step["step"], step["id"]
    data_path = folder / f"{stem}.json"
    data = json.loads(data_path.read_text()) if data_path.is_file() else {}
    rows: list[dict] = []
    if name in ("flight1", "flight2"):
        run = folder / "runs" / name / "run.json"
        if run.is_file():
            info = json.loads(run.read_text())
            rows.append({"figure": "real_time_factor", "value": info.get("real_time_factor")})
            rows.append({"figure": "ticks", "value": info.get("ticks")})
        rows.append({"figure": "command wall time [s]", "value": step.get("seconds")})
        return rows
    if name == "compare":
        if data:
            rows.append({"figure": "bit-identical (a report: CUDA is promised tolerance, not bits)",
                         "value": data.get("identical")})
            if data.get("first_difference"):
                diff = data["first_difference"]
                rows.append({"figure": "first difference", "value": f"tick {diff['tick']}, {diff['column']}"})
        return rows
    if name == "pytest":
        rows.append({"figure": "tests", "value": _pytest_counts(folder / f"{stem}.log")})
        return rows
    if "skipped" in data:
        rows.append({"figure": "skipped", "value": data["skipped"]})
        return rows
    if not data:
        return rows
    for figure, op, target in (CPU_TARGETS if cpu else GPU_TARGETS).get(name, []):
        value = _figure(figure, data)
        rows.append({"figure": figure, "value": value, "target": f"{op} {_show(target)}",
                     "met": _met(value, op, target)})
    for figure in SHOWN.get(name, []):
        if all(row["figure"] != figure for row in rows):
            rows.append({"figure": figure, "value": _figure(figure, data)})
    if name == "worlds":
        shown = {row["figure"] for row in rows}
        for row in data.get("rows", []):
            for key in ("drone_steps_per_s", "worlds_vs_bare"):
                if f"{key}@{row['worlds']}" not in shown:
                    rows.append({"figure": f"{key}@{row['worlds']}", "value": row.get(key)})
    return rows


def summary(folder: Path) -> int:
    folder = Path(folder)
    plan_path = folder / "plan.json"
    plan = json.loads(plan_path.read_text()) if plan_path.is_file() else {"steps": []}
    cpu = plan.get("device", "cuda") == "cpu"
    steps = []
    for planned in plan["steps"]:
        status_path = folder / f"{planned['id']}.status.json"
        step = {**planned, **json.loads(status_path.read_text())} if status_path.is_file() else \
            {**planned, "status": "not run yet"}
        ran = step["status"] in ("ok", "failed", "timed out", "skipped")
        step["figures"] = figures(step, folder, cpu) if ran else []
        steps.append(step)
    result = {**{k: v for k, v in plan.items() if k != "steps"}, "steps": steps}
    lines = [f"gpu-check summary: {plan.get('started_utc', '?')}, code {plan.get('code', '?')}, "
             f"device {plan.get('device_name', plan.get('device', '?'))}"]
    if plan.get("quick"):
        lines.append("  a dry run at a few ticks and rounds per suite: the figures are not measurements")
    if plan.get("without"):
        lines.append(f"  run without: {plan['without']} (imports of them fail, as on a machine that lacks them)")
    for step in steps:
        took = f"{step['seconds']:.0f} s of {step['limit_s']} s" if "seconds" in step else ""
        note = f"; {step['note']}" if step.get("note") else ""
        lines.append(f"{step['id']:<12} {step['status']:<11} {took:<16} {step['title']}{note}")
        for row in step["figures"]:
            if "target" in row:
                verdict = {True: "met", False: "NOT MET", None: "no figure"}[row["met"]]
                lines.append(f"    {row['figure']:<40} {_show(row['value']):>14}   target {row['target']}: {verdict}")
            else:
                lines.append(f"    {row['figure']:<40} {_show(row['value']):>14}")
    order = ["ok", "skipped", "failed", "timed out", "not run", "not run yet", "not selected"]
    counts = {status: sum(step["status"] == status for step in steps) for status in order}
    lines.append("steps: " + ", ".join(f"{n} {status}" for status, n in counts.items() if n))
    text = "\n".join(lines) + "\n"
    _write_json(folder / "summary.json", result)
    partial = folder / "summary.txt.partial"
    partial.write_text(text)
    partial.replace(folder / "summary.txt")
    print(text, end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tools/gpu_check.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("probe")
    p = sub.add_parser("bench")
    p.add_argument("suite")
    p.add_argument("device")
    p.add_argument("--json-out", type=Path, required=True)
    p.add_argument("--quick", action="store_true")
    p = sub.add_parser("compare")
    p.add_argument("first", type=Path)
    p.add_argument("second", type=Path)
    p.add_argument("--json-out", type=Path, required=True)
    p = sub.add_parser("summary")
    p.add_argument("results", type=Path)
    args = parser.parse_args(argv)
    if args.command == "probe":
        return probe()
    if args.command == "bench":
        return bench(args.suite, args.device, args.json_out, args.quick)
    if args.command == "compare":
        return compare_runs(args.first, args.second, args.json_out)
    return summary(args.results)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
