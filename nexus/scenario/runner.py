"""``nexus test``'s work: scenarios into sweep points, flown by the sweep machinery, checked, compared.

Every scenario × matrix point is one sweep point (:class:`nexus.sweep.points.Point`): its RunConfig holds the
scenario's flight (``RunConfig.scenario``), so it flies through :func:`nexus.sweep.runner.fly_points` like
any sweep point (Ray, the local pool of workers, ``--resume``), into ``OUT/runs/<point id>/``, an ordinary run
folder. After the flights the checks read each folder's record (:mod:`nexus.scenario.checks`): nothing of the
verdict is computed while flying, so the verdict is a function of the record alone.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path

from nexus.control import registry
from nexus.control.registry import DEFAULT_CONTROLLER, scalable_gains
from nexus.core.errors import BuildError
from nexus.plant.crash import crash_line
from nexus.runtime.config import RunConfig
from nexus.runtime.run_folder import RunFolder
from nexus.scenario.baseline import check_baselines, compare
from nexus.scenario.checks import BROKEN, CheckResult, evaluate_run, run_tick_s
from nexus.scenario.fault_trigger import fired_faults
from nexus.scenario.px4_messages import px4_messages
from nexus.scenario.spec import MAX_POINTS_WITHOUT_YES, Scenario, ScenarioError, load
from nexus.sweep.points import Point, point_id
from nexus.sweep.runner import RUNS, SWEEP_FILE, SweepOptions, fly_points
from nexus.sweep.spec import Axis, SweepSpec

#: Verdicts of one scenario × matrix point.
PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"


@dataclass
class Case:
    """One scenario at one matrix point, and what came of it."""

    scenario: Scenario
    values: dict
    point_id: str | None = None
    verdict: str = SKIPPED
    results: list[CheckResult] = field(default_factory=list)
    #: Why it is an error or skipped.
    reason: str = ""
    folder: Path | None = None
    sim_time_s: float = math.nan
    wall_s: float = math.nan
    #: For a PX4 scenario: whether it flew in the reproducible setup (settle and PX4 pinned to a core).
    reproducible: bool | None = None
    #: Time the checks took to read the record and judge it [s wall].
    check_s: float = 0.0
    #: Each ``when`` fault's firing tick and time, read from the record
    #: (:func:`nexus.scenario.fault_trigger.fired_faults`).
    faults: list[dict] = field(default_factory=list)

    @property
    def key(self) -> str:
        """The matrix point as text: ``seed=0`` or ``seed=1,vehicle=hexa_f550``."""
        return ",".join(f"{k}={Path(str(v)).stem if k in ('vehicle', 'vary') else v}" for k, v in self.values.items())

    @property
    def label(self) -> str:
        """``scenarios/hover.toml::hover[seed=0]``."""
        return f"{self.scenario.path}::{self.scenario.name}[{self.key}]"

    def failed_results(self) -> list[CheckResult]:
        return [r for r in self.results if not r.passed]


@dataclass
class ScenarioOptions:
    out: Path
    parallel: int | None = None
    address: str | None = None
    resume: bool = False
    yes: bool = False
    progress: bool = True
    px4_binary: str | None = None
    #: PID gain factors over every scenario's (``--scale-gain rate_p=0.1``): a broken controller on purpose.
    gain_scale: dict = field(default_factory=dict)
    baseline: Path | None = None
    cpus_per_run: float = 1.0
    #: Seeds in place of every scenario's ``[matrix] seeds`` (None: the files' own).
    seeds: list[int] | None = None


def scenario_files(paths) -> list[Path]:
    """The scenario files of ``paths`` (files, or folders searched for ``*.toml``), in a stable order."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(path.rglob("*.toml"))
        elif path.is_file():
            found.append(path)
        else:
            raise ScenarioError(f"{path}: no such scenario file or folder; give a .toml file or a folder of them")
    if not found:
        raise ScenarioError(f"no scenario files (*.toml) in {', '.join(map(str, paths))}")
    return found


def prepare(paths, options: ScenarioOptions) -> tuple[list[Case], list]:
    """Everything checked before any run starts: the files, the gain factors, the matrix size, the baselines.

    Returns every case (skipped ones included) and the sweep points of those that fly.
    """
    gains = scalable_gains()  # the registered controllers' (nexus.control.registry)
    for name, factor in options.gain_scale.items():
        if name not in gains:
            raise ScenarioError(f"--scale-gain {name}={factor}: unknown gain; scale one of {', '.join(gains)}")
    scenarios = [load(path, options.px4_binary) for path in scenario_files(paths)]
    names = [s.name for s in scenarios]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise ScenarioError(f"two scenarios are named {twice[0]!r}; give each file a name of its own (name = ...)")
    cases, points = [], []
    if options.seeds is not None:
        for scenario in scenarios:
            scenario.matrix["seeds"] = list(options.seeds)
    total = sum(len(s.points()) for s in scenarios if s.skip is None)
    if total > MAX_POINTS_WITHOUT_YES and not options.yes:
        raise ScenarioError(f"{total} scenario runs is more than {MAX_POINTS_WITHOUT_YES}; pass --yes to fly them "
                            "all, or make the [matrix] smaller")
    for scenario in scenarios:
        for values in scenario.points():
            case = Case(scenario, values)
            cases.append(case)
            if scenario.skip is not None:
                case.reason = scenario.skip
                continue
            ring = dict(scenario.ring)
            if options.gain_scale:
                if not registry.get(scenario.run.get("controller", DEFAULT_CONTROLLER)).gains:
                    raise ScenarioError(f"{scenario.path}: --scale-gain scales the PID's gains, but the scenario "
                                        f"flies controller {scenario.run['controller']!r}")
                ring["gain_scale"] = {**ring.get("gain_scale", {}), **options.gain_scale}
            config = RunConfig(**{**scenario.run, **values}, scenario=ring)
            px4 = _px4_settings(scenario)
            pid = point_id(config.as_dict(), {}, px4)
            case.point_id = pid
            if not any(p.id == pid for p in points):
                points.append(Point(pid, {"scenario": scenario.name, **values}, config, {}, px4))
    if options.baseline is not None:
        check_baselines(options.baseline, cases)
    return cases, points


def _px4_settings(scenario: Scenario) -> dict | None:
    """The sweep's ``[px4]`` settings of a PX4 scenario (its fleet starts PX4 for the point), or None."""
    if scenario.px4 is None:
        return None
    settings = {"binary": scenario.px4["binary"], "model": scenario.px4["model"], "rootfs": None,
                "params": scenario.px4["params"], "env": {}, "mission": scenario.px4["mission"], "command": None,
                "boot_timeout": 60.0}
    if scenario.px4["pinned"]:
        settings["pin_cpu"] = 0
    if "link_loss" in scenario.px4:  # the in-loop mission's ground station falls silent over [start, end) [s]
        settings["link_loss"] = list(scenario.px4["link_loss"])
    if scenario.px4.get("steps"):  # flown as an uploaded PX4 mission (nexus.px4.step_mission)
        settings["steps"] = [dict(s) for s in scenario.px4["steps"]]
    return settings


def run_tests(paths, options: ScenarioOptions, say=print) -> list[Case]:
    """Check, fly every case not skipped through the sweep machinery, then judge each from its run folder."""
    cases, points = prepare(paths, options)
    out = Path(options.out)
    if out.exists() and not out.is_dir():
        raise ScenarioError(f"--out {out} is a file; give a folder")
    held = (out / SWEEP_FILE).exists() or (out / RUNS).is_dir() and any((out / RUNS).iterdir())
    if held and not options.resume:
        raise ScenarioError(f"--out {out} already holds runs; pass --resume to finish them, or choose another folder")
    if points:
        spec = SweepSpec(Path(str(cases[0].scenario.path)), {}, [Axis(k) for k in ("scenario", "seed", "vehicle",
                                                                                   "vary")], "scenarios")
        sweep = SweepOptions(out=out, parallel=options.parallel, address=options.address, resume=options.resume,
                             progress=options.progress, cpus_per_run=options.cpus_per_run, yes=True)
        fly_points(spec, points, sweep, say)
    for case in cases:
        if case.point_id is not None:
            judge(case, out / RUNS / case.point_id)
    if options.baseline is not None:
        compare(options.baseline, cases)
    return cases


def judge(case: Case, folder: Path) -> None:
    """The case's verdict from its run folder: an error when the run broke, else its checks' results."""
    case.folder = folder
    info = RunFolder(folder).peek_info()
    if info is None:
        case.verdict, case.reason = ERROR, f"no readable run.json in {folder}"
        return
    case.sim_time_s = float(info.get("sim_time_s") or math.nan)
    case.wall_s = float(info.get("wall_time_s") or math.nan)
    if case.scenario.px4 is not None:  # settle as flown (its waits counted), and PX4 started pinned
        stats = info.get("controller_stats") or {}
        each = stats.get("instances") or [stats]  # several PX4 instances: every one settled
        settled = all("settle_waits" in e for e in each)
        case.reproducible = bool(settled and case.scenario.px4["pinned"])
        mission = RunFolder(folder).json_object("mission.json")  # the fleet's mission thread writes it
        if mission is not None:
            info = {**info, "mission_file": mission}
        info = {**info, "px4_messages": px4_messages(folder, info)}
    if info.get("status") != "finished" or info.get("exit_reason") in BROKEN:
        case.verdict = ERROR
        case.reason = f"the run ended by {info.get('exit_reason')}: {info.get('error')} (run folder {folder})"
        return
    try:
        table = RunFolder(folder).record()
    except BuildError as error:
        case.verdict, case.reason = ERROR, f"the record does not read: {error} (run folder {folder})"
        return
    triggers = case.scenario.ring.get("triggers") or []
    if triggers:
        case.faults = fired_faults(triggers, table, run_tick_s(info))
    started = time.perf_counter()
    case.results = evaluate_run(case.scenario.checks, table, info)
    case.check_s = time.perf_counter() - started
    case.verdict = FAILED if case.failed_results() else PASSED
    if info.get("exit_reason") == "crashed":  # a crash fails the scenario, whatever its checks saw before it

        case.verdict = FAILED
        case.reason = f"{crash_line(info.get('crash') or {}) or 'crashed'} (run folder {folder})"


def summary_counts(cases: list[Case]) -> dict:
    return {v: sum(1 for c in cases if c.verdict == v) for v in (PASSED, FAILED, ERROR, SKIPPED)}


def results_json(cases: list[Case]) -> str:
    """Every case's verdict and checks as JSON (what OUT/results.json holds)."""
    rows = [{"scenario": c.scenario.name, "file": str(c.scenario.path), "values": c.values, "point": c.point_id,
             "verdict": c.verdict, "reason": c.reason, "reproducible": c.reproducible,
             "checks": [r.as_dict() for r in c.results], "faults": c.faults} for c in cases]
    return json.dumps(rows, indent=2, default=str) + "\n"
