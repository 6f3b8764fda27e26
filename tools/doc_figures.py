"""The figures the docs quote from commands: each declared once, with the command that prints it, and checked or
rewritten by running that command again.

    python tools/doc_figures.py                      # list every figure: its doc and line, its command, the cost
    python tools/doc_figures.py --check              # run the commands; exit 1 naming each stale figure
    python tools/doc_figures.py --write              # run the commands; rewrite the stale figures in the docs
    python tools/doc_figures.py --check --cost cheap # only the commands that take seconds (the test suite's)
    python tools/doc_figures.py --check --only rotor_failure_astro_told   # a figure, or a command's name

Run it from anywhere with Nexus's Python (.venv/bin/python); the commands run from the repository's root, or from
a fresh folder when they write paths the figure prints. A figure is the text a regular expression's group 1
matches in its doc; the expression must match exactly once, so a figure that lost its place in the doc is an
error, not a silent pass. The figure's value is the text the doc should hold, taken from the command's output or
its run folders; figures compare with their whitespace collapsed (a doc wraps lines), and --write puts the new
text in the old one's place. Wall-clock times and speeds are not declared: they change with the machine's load.

Costs: ``cheap`` commands take seconds (tests/test_doc_figures.py runs them), ``flight`` ones under a minute or
two each on a 2-core CPU, ``long`` ones minutes (a training run, a scenario suite on Ray). Exit status: 0 when
every figure checked matches (or was rewritten), 1 when --check found a stale figure, 2 when a figure's pattern
does not match its doc once or a command failed.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
COSTS = ("cheap", "flight", "long")


@dataclass(frozen=True)
class Command:
    """Shell lines run in order (``{nexus}``, ``{python}``, ``{root}`` and ``{out}``, a fresh folder, filled in),
    from the repository's root, or from ``{out}`` when ``in_out``; ``prepare(out)`` writes input files first.
    ``exits``: the exit statuses that are not a failure (``nexus test`` exits 1 when a check fails, which is what
    the broken runs are for)."""

    name: str
    lines: tuple[str, ...]
    cost: str
    in_out: bool = False
    prepare: Callable[[Path], None] | None = None
    exits: tuple[int, ...] = (0,)


@dataclass
class Output:
    """What a command left: its stdout and stderr together, and its folder."""

    text: str
    out: Path


@dataclass(frozen=True)
class Figure:
    name: str
    doc: str
    pattern: str
    command: str
    value: Callable[[Output], str]


@dataclass
class Found:
    """A figure located in its doc: its text, line and span; or why it could not be."""

    figure: Figure
    text: str = ""
    line: int = 0
    span: tuple[int, int] = (0, 0)
    problem: str = ""


@dataclass
class Report:
    stale: list[tuple[Found, str]] = field(default_factory=list)
    current: list[Found] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def printed(pattern: str, group: int = 1) -> Callable[[Output], str]:
    """The value is group ``group`` of the last match of ``pattern`` in the command's output."""

    def value(output: Output) -> str:
        found = list(re.finditer(pattern, output.text, flags=re.M))
        if not found:
            raise ValueError(f"the command's output has no match for {pattern!r}")
        return found[-1].group(group)

    return value


def normal(text: str) -> str:
    return " ".join(text.split())


def span(low: float, high: float, digits: int, unit: str = "") -> str:
    """A range as the docs write it: ``0.08 – 0.30 m`` (one value when both round alike)."""
    a, b = f"{low:.{digits}f}", f"{high:.{digits}f}"
    return (a if a == b else f"{a} – {b}") + unit


# --- Commands -------------------------------------------------------------------------------------------------


def _broken_hover(out: Path) -> None:
    """scenarios/ and broken_hover.toml: takeoff_hover_land.toml renamed, with the velocity gain at a tenth."""
    folder = out / "scenarios"
    shutil.copytree(ROOT / "scenarios", folder)
    text = (folder / "takeoff_hover_land.toml").read_text()
    assert 'name = "takeoff_hover_land"' in text and "[controller]" not in text
    text = text.replace('name = "takeoff_hover_land"', 'name = "broken_hover"')
    (folder / "broken_hover.toml").write_text(text + "\n[controller]\ngain_scale = {velocity_p = 0.1}\n")


def _early(out: Path) -> None:
    """early.toml as docs/testing.md gives it (the ```toml block that names it), flown as written there."""
    found = re.search(r'```toml\n(name = "early"\n.*?)```', (ROOT / "docs" / "testing.md").read_text(), flags=re.S)
    if not found:
        raise RuntimeError("docs/testing.md has no ```toml block starting name = \"early\"")
    (out / "early.toml").write_text(found.group(1))


COMMANDS = {c.name: c for c in (
    Command("battery_run", ("{nexus} run --vehicle tests/data/astro_max_battery.usda --duration 20 --out {out}/run",),
            "cheap"),
    Command("short_export", ("{nexus} run --mission short --out runs/short --quiet", "{nexus} export runs/short"),
            "cheap", in_out=True),
    Command("short_seed7", ("{nexus} run --device cpu --mission short --seed 7 --duration 10 --estimator truth "
                            "--out {out}/run",),
            "cheap"),
    Command("figure_eight_astro", ("{nexus} run --device cpu --scene figure_eight --duration 30 --out {out}/run",),
            "flight"),
    Command("windy_hover_astro", ("{nexus} run --scene tests/data/windy_hover.usda --duration 30 --out {out}/run",),
            "flight"),
    Command("power_ground", ("{python} tools/power_ground_figures.py",), "flight"),
    Command("air_hover", ("{python} tools/air_checks.py hover",), "flight"),
    Command("export_w16", ("{nexus} run --mission short --worlds 16 --duration 5 --out runs/w16 --quiet",
                           "{nexus} export runs/w16 --format mcap --quiet",
                           "{nexus} export runs/w16 --format csv --quiet"),
            "flight", in_out=True),
    Command("rotor_failure_hexa_told",
            ("{nexus} run --vehicle hexa_f550 --mission short --worlds 6 --seed 58 --vary "
             "examples/rotor_failure_hexa.toml --knows-failures --duration 15 --out {out}/run",), "flight"),
    Command("rotor_failure_hexa_not_told",
            ("{nexus} run --vehicle hexa_f550 --mission short --worlds 6 --seed 58 --vary "
             "examples/rotor_failure_hexa.toml --duration 15 --out {out}/run",), "flight"),
    Command("rotor_failure_astro_told",
            ("{nexus} run --mission short --worlds 4 --seed 20 --vary examples/rotor_failure_quad.toml "
             "--knows-failures --duration 20 --out {out}/run",), "flight"),
    Command("rotor_failure_astro_not_told",
            ("{nexus} run --mission short --worlds 4 --seed 20 --vary examples/rotor_failure_quad.toml "
             "--duration 20 --out {out}/run",), "flight"),
    Command("contact_early", ("{nexus} test early.toml --parallel 1",), "flight", in_out=True, prepare=_early,
            exits=(0, 1)),
    Command("scale_gain", ("{nexus} test scenarios/ --scale-gain velocity_p=0.1",), "long", exits=(0, 1)),
    Command("broken_hover", ("{nexus} test scenarios --out out --junit junit.xml --report report --parallel 2",),
            "long", in_out=True, prepare=_broken_hover, exits=(0, 1)),
    Command("train_export", ("{nexus} train --task hover --worlds 4 --steps 2000 --no-evaluate --out {out}/train",),
            "long"),
)}


# --- Values read from run folders -----------------------------------------------------------------------------


def _record(output: Output, name: str = "run"):
    import pandas as pd  # noqa: PLC0415

    return pd.read_parquet(output.out / name / "record.parquet")


def _drag_column(output: Output) -> dict[str, str]:
    """The short mission's figures in docs/vehicles.md's drag table, from the record."""
    import numpy as np  # noqa: PLC0415

    record = _record(output)
    height, climb = record["body/base.pose[2]"].to_numpy(), record["body/base.velocity[2]"].to_numpy()
    error = np.stack([record[f"estimate.position[{i}]"] - record[f"setpoint.position[{i}]"] for i in range(3)])
    distance = np.linalg.norm(error, axis=0)
    hold = record[(record.time > 4.0) & (record.time < 5.0)]["controls[0]"].mean()
    start = record[["body/base.pose[0]", "body/base.pose[1]"]].to_numpy()
    landed = float(np.hypot(*(start[-1] - start[0])))
    return {"ends": f"tick {len(record)}, {record.time.iloc[-1]:.3f} s", "height": f"{height.max():.4f} m",
            "speeds": f"{climb.max():.3f} / {-climb.min():.3f} m/s",
            "setpoint": f"{distance.max():.4f} / {math.sqrt(float((distance ** 2).mean())):.4f} m",
            "hold": f"{hold:.5f}", "landing": f"{landed * 1e6:.1f} µm"}


def _windy_hover(output: Output) -> str:
    """The base's tilt [deg] at 10, 20 and 30 s, and its speed at 30 s, from the record."""
    import numpy as np  # noqa: PLC0415

    record = _record(output)
    tilts = []
    for seconds in (10, 20, 30):
        row = record.iloc[int((record.time - seconds).abs().argmin())]
        x, y = float(row["body/base.pose[3]"]), float(row["body/base.pose[4]"])
        tilts.append(f"{math.degrees(math.acos(1.0 - 2.0 * (x * x + y * y))):.4f}° at {seconds} s")
    speed = float(np.linalg.norm([row[f"body/base.velocity[{i}]"] for i in range(3)]))
    return ", ".join(tilts) + f", the base still to {speed * 1e3:.1f} mm/s"


def _tracking(output: Output) -> tuple[float, float]:
    """The largest and RMS distance [m] of the estimate from the setpoint over the whole run."""
    import numpy as np  # noqa: PLC0415

    record = _record(output)
    error = np.stack([record[f"estimate.position[{i}]"] - record[f"setpoint.position[{i}]"] for i in range(3)])
    distance = np.linalg.norm(error, axis=0)
    return float(distance.max()), math.sqrt(float((distance ** 2).mean()))


FAIL_TIME = 3.0  # [s] examples/rotor_failure_*.toml's rotor_fail_time


def _failures(output: Output) -> list[dict]:
    """Each world of a rotor-failure run: how it ended, its landing error (summary.parquet), its largest tilt,
    yaw rate and horizontal distance from its start after the failure, and its crash (run.json)."""
    import numpy as np  # noqa: PLC0415
    import pandas as pd  # noqa: PLC0415

    run = output.out / "run"
    record, summary = _record(output), pd.read_parquet(run / "summary.parquet")
    crash = json.loads((run / "run.json").read_text()).get("crash", {})
    crashes = {c["world"]: c for c in crash.get("crashed_worlds", [])}
    worlds = []
    for world, rows in record.groupby("world"):
        after = rows[rows.time >= FAIL_TIME]
        x, y = after["body/base.pose[3]"].to_numpy(), after["body/base.pose[4]"].to_numpy()
        tilt = np.degrees(np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)))
        start = rows[["body/base.pose[0]", "body/base.pose[1]"]].to_numpy()[0]
        moved = np.hypot(after["body/base.pose[0]"].to_numpy() - start[0],
                         after["body/base.pose[1]"].to_numpy() - start[1])
        row = summary[summary.world == world].iloc[0]
        worlds.append({"reason": row.exit_reason, "landing": float(row.landing_error), "tilt": float(tilt.max()),
                       "yaw_rate": float(np.abs(after["body/base.angular_velocity[2]"].to_numpy()).max()),
                       "strayed": float(moved.max()), "crash": crashes.get(int(world))})
    return worlds


def _failure_row(output: Output) -> str:
    """A row of docs/vehicles.md's rotor-failure table: lands | landing error | max tilt | max yaw rate."""
    worlds = _failures(output)
    n = len(worlds)
    if all(w["reason"] == "done" for w in worlds):
        lands = f"all {n}, mission done"
    elif all(w["crash"] for w in worlds):
        after = [w["crash"]["time_s"] - FAIL_TIME for w in worlds]
        speeds = [w["crash"]["speed_m_s"] for w in worlds]
        lands = (f"no: crashes (`crashed`) {span(min(after), max(after), 1)} s after the failure, "
                 f"at {span(min(speeds), max(speeds), 1)} m/s")
    else:
        lands = ", ".join(f"world {i}: {w['reason']}" for i, w in enumerate(worlds))

    def cell(key: str, digits: int, unit: str) -> str:
        return span(min(w[key] for w in worlds), max(w[key] for w in worlds), digits, unit)

    return " | ".join((lands, cell("landing", 2, " m"), cell("tilt", 0, "°"), cell("yaw_rate", 1, " rad/s")))


def _strayed(output: Output) -> str:
    return f"{max(w['strayed'] for w in _failures(output)):.2f} m"


def _scale_gain_checks(output: Output, verdict: str) -> str:
    """The scenarios with a check of ``verdict`` (FAILED) and those checks, or the scenarios that passed whole."""
    lines = re.findall(r"^scenarios/(\w+)\.toml::\w+\[seed=0\]::(\w+) (PASSED|FAILED)$", output.text, flags=re.M)
    checks: dict[str, list[str]] = {}
    failed = {name for name, _, result in lines if result == "FAILED"}
    for name, check, result in lines:
        checks.setdefault(name, [])
        if result == "FAILED":
            checks[name].append(check)
    if verdict == "FAILED":
        return ", ".join(f"`{name}` ({', '.join(checks[name])})" for name in checks if name in failed)
    return ", ".join(f"`{name}`" for name in checks if name not in failed)


def _block(prefix: str) -> Callable[[Output], str]:
    """The lines of the output that start with ``prefix`` (one scenario's check lines), one per line."""

    def value(output: Output) -> str:
        lines = [line for line in output.text.splitlines() if line.startswith(prefix)]
        if not lines:
            raise ValueError(f"the command printed no line starting {prefix!r}")
        return "\n".join(lines)

    return value


def _onnx_metadata(key: str) -> Callable[[Output], str]:
    def value(output: Output) -> str:
        import onnx  # noqa: PLC0415

        props = {p.key: p.value for p in onnx.load(str(output.out / "train" / "policy.onnx")).metadata_props}
        return f"{float(props[key]):.4f}"

    return value


def _export_size(fmt: str) -> Callable[[Output], str]:
    def value(output: Output) -> str:
        line = printed(rf"^exported runs/w16/record\.{fmt}: (.*)$")(output)
        size = int(re.search(r"([\d,]+) bytes", line).group(1).replace(",", "")) / 1e6
        if fmt == "mcap":
            channels, messages = re.match(r"(\d+ channels)(?: of \d+ worlds)?, ([\d,]+ messages)", line).groups()
            return f"{channels}, {messages}, {size:.1f} MB"
        rows = re.match(r"([\d,]+ rows)", line).group(1)
        return f"{rows}, {size:.1f} MB"

    return value


def _parquet_size(output: Output) -> str:
    folder = output.out / "runs" / "w16" / "record.parquet"
    files = [folder] if folder.is_file() else list(folder.rglob("*"))
    return f"{sum(f.stat().st_size for f in files if f.is_file()) / 1e6:.1f} MB"


def _ground(output: Output) -> dict[str, float]:
    """The numbers tools/power_ground_figures.py prints for the ground effect."""
    number = r"([\d.]+)"
    heights = re.search(rf"rotor heights {number} m and {number} m", output.text)
    speeds = re.search(rf"rms rotor speed {number} and {number} rad/s \(no ground effect at 5 m: {number};",
                       output.text)
    ratio = re.search(rf"measured {number}; Cheeseman-Bennett at the flown heights {number}, "
                      rf"at 0.7 m and 5.4 m {number}", output.text)
    command = re.search(rf"mean hover command {number} and {number}", output.text)
    found = [heights, speeds, ratio, command]
    if not all(found):
        raise ValueError("tools/power_ground_figures.py printed no ground-effect lines")
    values = [float(v) for match in found for v in match.groups()]
    return dict(zip(("low", "high", "speed_low", "speed_high", "speed_plain", "measured", "flown", "nominal",
                     "command_low", "command_high"), values))


def _short_of(output: Output, key: str) -> str:
    """How much smaller [%] the measured ground effect (speed ratio - 1) is than Cheeseman-Bennett's ``key``."""
    ground = _ground(output)
    return f"{(1 - (ground['measured'] - 1) / (ground[key] - 1)) * 100:.1f}"


def _battery_hover(output: Output) -> dict[str, str]:
    match = re.search(r"battery: hover from state of charge ([\d.]+) \(([\d.]+) J left\) lasted ([\d.]+) s; energy / "
                      r"[\d.]+ W = ([\d.]+) s \(([-+][\d.]+) %\); mean terminal power ([\d.]+) W; "
                      r"voltage ([\d.]+ V) to ([\d.]+ V)", output.text)
    if not match:
        raise ValueError("tools/power_ground_figures.py printed no battery line")
    s0, energy, lasted, by_hand, share, power, first, last = match.groups()
    share_f = float(share)
    return {"s0": s0, "energy": energy, "lasted": lasted, "by_hand": by_hand,
            "share": f"{abs(share_f):.2f} % {'short' if share_f < 0 else 'long'}", "power": power,
            "voltage": f"{first} to {last}"}


def _tilt_at(output: Output, seconds: int) -> str:
    """tools/air_checks.py hover's tilt [deg] at ``seconds``."""
    return printed(rf"^t = {seconds:2d} s: tilt ([\d.]+) deg")(output)


def _field(function: Callable[[Output], dict], key: str) -> Callable[[Output], str]:
    return lambda output: str(function(output)[key])


# --- Figures ----------------------------------------------------------------------------------------------------

FIGURES = [
    # docs/battery.md
    Figure("battery_empty_time", "docs/battery.md", r"The run ends `battery-empty` after ([\d.]+) s of the default",
           "battery_run", printed(r"^done: \d+ ticks, ([\d.]+) s sim")),
    *(Figure(f"battery_hover_{key}", "docs/battery.md", pattern, "power_ground", _field(_battery_hover, key))
      for key, pattern in (("s0", r"the hover began at state\s+of\s+charge ([\d.]+)"),
                           ("energy", r"\(([\d.]+) J left\) and lasted"),
                           ("lasted", r"J left\) and lasted ([\d.]+) s"),
                           ("by_hand", r"against ([\d.]+) s by hand"),
                           ("share", r"by hand\s+\(([\d.]+ % \w+): the losses"),
                           ("power", r"mean terminal\s+power was ([\d.]+) W"),
                           ("voltage", r"the voltage fell from ([\d.]+ V to [\d.]+ V)"))),
    # docs/ground_effect.md: the same command's first lines
    Figure("ground_heights", "docs/ground_effect.md", r"\| rotor heights flown \| ([\d.]+ m and [\d.]+ m) \|",
           "power_ground", lambda o: f"{_ground(o)['low']:.4f} m and {_ground(o)['high']:.4f} m"),
    Figure("ground_speeds", "docs/ground_effect.md", r"\| rms rotor speed at 0.3 m / 5 m \| ([\d.]+ / [\d.]+) rad/s \|",
           "power_ground", lambda o: f"{_ground(o)['speed_low']:.3f} / {_ground(o)['speed_high']:.3f}"),
    Figure("ground_plain_speed", "docs/ground_effect.md", r"\| same at 5 m without ground effect \| ([\d.]+) rad/s",
           "power_ground", lambda o: f"{_ground(o)['speed_plain']:.3f}"),
    Figure("ground_ratio", "docs/ground_effect.md", r"\| speed ratio, measured \| ([\d.]+) \|",
           "power_ground", lambda o: f"{_ground(o)['measured']:.7f}"),
    Figure("ground_ratio_flown", "docs/ground_effect.md",
           r"\| Cheeseman-Bennett at the heights flown \| ([\d.]+ \(the measured effect is [\d.]+ % smaller)\) \|",
           "power_ground",
           lambda o: f"{_ground(o)['flown']:.7f} (the measured effect is {_short_of(o, 'flown')} % smaller"),
    Figure("ground_ratio_nominal", "docs/ground_effect.md",
           r"\| Cheeseman-Bennett at 0.7 m and 5.4 m \| "
           r"([\d.]+ \([\d.]+ % larger; the low hover flies [\d.]+ cm high)\) \|",
           "power_ground", lambda o: (f"{_ground(o)['nominal']:.7f} ({_short_of(o, 'nominal')} % larger; "
                                      f"the low hover flies {(_ground(o)['low'] - 0.7) * 100:.1f} cm high")),
    Figure("ground_commands", "docs/ground_effect.md", r"\| mean hover command at 0.3 m / 5 m \| ([\d.]+ / [\d.]+) \|",
           "power_ground", lambda o: f"{_ground(o)['command_low']:.5f} / {_ground(o)['command_high']:.5f}"),
    # docs/exporting.md
    # the byte count that follows depends on the length of the run folder's absolute path (in the metadata)
    Figure("mcap_short", "docs/exporting.md", r"^exported runs/short/record\.mcap: (.*? of sim time), [\d,]+ bytes$",
           "short_export", printed(r"^exported runs/short/record\.mcap: (.*? of sim time), [\d,]+ bytes$")),
    Figure("mcap_w16", "docs/exporting.md", r"^\| `nexus export runs/w16 --format mcap --quiet` \| (.*?) \|",
           "export_w16", _export_size("mcap")),
    Figure("csv_w16", "docs/exporting.md", r"^\| `nexus export runs/w16 --format csv --quiet` \| (.*?) \|",
           "export_w16", _export_size("csv")),
    Figure("parquet_w16", "docs/exporting.md", r"a\s+([\d.]+ MB) Parquet record of 20,000 rows", "export_w16",
           _parquet_size),
    # docs/vehicles.md: the drag table's column with drag, the figure eight, the rotor failures
    *(Figure(f"drag_short_{key}", "docs/vehicles.md", rf"^\| {row} \| [^|]* \| ([^|]*?) \|$", "short_seed7",
             _field(_drag_column, key))
      for key, row in (("ends", r"ends \(`done`\) at"), ("height", "highest base height"),
                       ("speeds", "fastest climb / descent"), ("setpoint", "largest / RMS distance from the setpoint"),
                       ("hold", r"mean command on rotor 1, 4–5 s \(hold\)"),
                       ("landing", "landing, horizontal distance from take-off"))),
    Figure("windy_hover_astro", "docs/vehicles.md",
           r"record's base pose\):\s+"
           r"(\d[\d.]+° at 10 s, [\d.]+° at 20 s, [\d.]+° at 30 s, the base still to [\d.]+ mm/s)",
           "windy_hover_astro", _windy_hover),
    Figure("figure_eight_astro", "docs/vehicles.md",
           r"The Astro Max, which alone of them carries\s+drag, tracks it within ([\d.]+ m \(RMS [\d.]+ m\))",
           "figure_eight_astro",
           lambda o: f"{_tracking(o)[0]:.3f} m (RMS {_tracking(o)[1]:.3f} m)"),
    *(Figure(f"rotor_failure_{name}", "docs/vehicles.md", rf"^\| {row} \| `[^`]*` \| (.*) \|$", f"rotor_failure_{name}",
             _failure_row)
      for name, row in (("hexa_told", "hexacopter, told"), ("hexa_not_told", "hexacopter, not told"),
                        ("astro_told", "Astro Max, told"), ("astro_not_told", "Astro Max, not told"))),
    Figure("rotor_failure_hexa_strays_told", "docs/vehicles.md",
           r"strays less than a third as far \(([\d.]+ m) at most", "rotor_failure_hexa_told", _strayed),
    Figure("rotor_failure_hexa_strays_not_told", "docs/vehicles.md", r"at most\s+against ([\d.]+ m) from its start",
           "rotor_failure_hexa_not_told", _strayed),
    Figure("rotor_failure_astro_spin", "docs/vehicles.md", r"not designed for a\s+vehicle spinning at\s+([\d.]+) rad/s",
           "rotor_failure_astro_told", lambda o: f"{max(w['yaw_rate'] for w in _failures(o)):.0f}"),
    # docs/air.md
    Figure("air_hover_tilt", "docs/air.md",
           r"Flown with the PID\s+controller: ([\d.]+° at 10 s, [\d.]+° at 20 s, [\d.]+° at 30 s)", "air_hover",
           lambda o: ", ".join(f"{_tilt_at(o, t)}° at {t} s" for t in (10, 20, 30))),
    # docs/testing.md
    Figure("contact_early", "docs/testing.md", r"^(FAILED early\.toml::early\[seed=0\]::airborne_till_5 - .*)$",
           "contact_early", printed(r"^(FAILED early\.toml::early\[seed=0\]::airborne_till_5 - .*)$")),
    Figure("scale_gain_summary", "docs/testing.md",
           r"--scale-gain velocity_p=0.1`\s+\([^)]*\)\s+printed\s+`([^`]*)`", "scale_gain",
           printed(r"=+ (\d+ passed, \d+ failed, \d+ errors, \d+ skipped) in [\d.]+ s =+$")),
    Figure("scale_gain_failed", "docs/testing.md",
           r"These checks fail:\s+([\s\S]*?);\s+these\s+scenarios\s+still\s+pass", "scale_gain",
           lambda o: _scale_gain_checks(o, "FAILED")),
    Figure("scale_gain_passed", "docs/testing.md", r"these\s+scenarios\s+still\s+pass:\s+([\s\S]*?) \(", "scale_gain",
           lambda o: _scale_gain_checks(o, "PASSED")),
    Figure("broken_hover_lines", "docs/testing.md",
           r"```\n((?:scenarios/broken_hover\.toml::.*\n)+)\.\.\.\n", "broken_hover",
           lambda o: _block("scenarios/broken_hover.toml::")(o) + "\n"),
    Figure("broken_hover_skipped_lines", "docs/testing.md",
           r"^((?:scenarios/px4_\w+\.toml::px4_\w+\[seed=0\] SKIPPED .*\n)+)", "broken_hover",
           lambda o: "".join(f"{line}\n" for line in _block("scenarios/px4_")(o).splitlines() if " SKIPPED " in line)),
    Figure("broken_hover_passing_lines", "docs/testing.md",
           r"^((?:scenarios/takeoff_hover_land\.toml::takeoff_hover_land\[seed=0\]::.*\n)+)", "broken_hover",
           lambda o: _block("scenarios/takeoff_hover_land.toml::")(o) + "\n"),
    Figure("broken_hover_failures", "docs/testing.md",
           r"=+ failures =+\n((?:FAILED scenarios/broken_hover.*\n)+)", "broken_hover",
           lambda o: _block("FAILED scenarios/broken_hover.toml::")(o) + "\n"),
    Figure("broken_hover_summary", "docs/testing.md",
           r"^=+ (\d+ passed, \d+ failed, \d+ errors, \d+ skipped) in [\d.]+ s =+$", "broken_hover",
           printed(r"^=+ (\d+ passed, \d+ failed, \d+ errors, \d+ skipped) in [\d.]+ s =+$")),
    # docs/learning.md
    Figure("ctbr_hover_thrust", "docs/learning.md", r"nexus:ctbr_hover_thrust = (\d\.\d{4})\.\.\.", "train_export",
           _onnx_metadata("nexus:ctbr_hover_thrust")),
    Figure("ctbr_hover_thrust_astro", "docs/learning.md", r"(\d\.\d{4}) for the Astro Max", "train_export",
           _onnx_metadata("nexus:ctbr_hover_thrust")),
]


# --- Running ----------------------------------------------------------------------------------------------------


def locate(figure: Figure, text: str | None = None) -> Found:
    """Where ``figure`` is in its doc (``text``: the doc's text, read when not given)."""
    if text is None:
        path = ROOT / figure.doc
        if not path.exists():
            return Found(figure, problem=f"{figure.doc} does not exist")
        text = path.read_text()
    matches = list(re.finditer(figure.pattern, text, flags=re.M))
    if len(matches) != 1:
        return Found(figure, problem=(f"{figure.doc}: the pattern of {figure.name} matches {len(matches)} times, not "
                                      f"once (the text around the figure changed?): {figure.pattern!r}"))
    match = matches[0]
    return Found(figure, match.group(1), text.count("\n", 0, match.start(1)) + 1, match.span(1))


def tool_paths() -> dict[str, str]:
    here = Path(sys.executable).parent
    nexus = here / "nexus"
    return {"nexus": shlex.quote(str(nexus)) if nexus.exists() else "nexus", "python": shlex.quote(sys.executable),
            "root": shlex.quote(str(ROOT))}


def command_lines(command: Command, out: Path) -> list[str]:
    return [line.format(out=shlex.quote(str(out)), **tool_paths()) for line in command.lines]


def run_command(command: Command, out: Path, echo: bool = False) -> Output:
    """Run ``command``'s lines with ``out`` as its folder (emptied first); raises RuntimeError naming the line that
    failed."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if command.prepare is not None:
        command.prepare(out)
    texts = []
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for line in command_lines(command, out):
        if echo:
            print(f"  $ {line}", file=sys.stderr, flush=True)
        done = subprocess.run(line, shell=True, cwd=out if command.in_out else ROOT, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        texts.append(done.stdout)
        if done.returncode not in command.exits:
            tail = "\n".join(done.stdout.splitlines()[-15:])
            raise RuntimeError(f"`{line}` exited {done.returncode}:\n{tail}")
    (out / "output.txt").write_text("".join(texts))  # what the figures were read from, for --keep
    return Output("".join(texts), out)


def selected(only: list[str] | None, cost: str, docs: list[str] | None) -> list[Figure]:
    allowed = COSTS[: COSTS.index(cost) + 1]
    names = set(only or [])
    unknown = names - {f.name for f in FIGURES} - set(COMMANDS)
    if unknown:
        raise SystemExit(f"doc_figures: no figure or command named {', '.join(sorted(unknown))}")
    return [f for f in FIGURES
            if COMMANDS[f.command].cost in allowed and (not names or f.name in names or f.command in names)
            and (not docs or f.doc in docs)]


def measure(figures: list[Figure], keep: Path | None = None, echo: bool = False) -> Report:
    """Run each command the figures need once and compare every figure with what its command gives now."""
    report = Report()
    located = {f.name: locate(f) for f in figures}
    for found in located.values():
        if found.problem:
            report.problems.append(found.problem)
    commands = list(dict.fromkeys(f.command for f in figures if not located[f.name].problem))
    with tempfile.TemporaryDirectory(prefix="doc_figures_") as scratch:
        base = keep or Path(scratch)
        for name in commands:
            command = COMMANDS[name]
            if echo:
                print(f"{name} ({command.cost}):", file=sys.stderr, flush=True)
            try:
                output = run_command(command, base / name, echo)
            except (RuntimeError, OSError) as error:
                report.problems.append(f"command {name} failed: {error}")
                continue
            for figure in figures:
                found = located[figure.name]
                if figure.command != name or found.problem:
                    continue
                try:
                    value = figure.value(output)
                except (ValueError, KeyError, OSError, AttributeError) as error:
                    report.problems.append(f"{figure.name}: could not read the value from {name}'s output: {error}")
                    continue
                if normal(value) == normal(found.text):
                    report.current.append(found)
                else:
                    report.stale.append((found, value))
    return report


def write(stale: list[tuple[Found, str]]) -> list[str]:
    """Put each new value in its doc, where the figure's pattern finds it now (the doc read afresh)."""
    problems = []
    for doc in dict.fromkeys(found.figure.doc for found, _ in stale):
        path = ROOT / doc
        text = path.read_text()
        edits = []
        for found, value in stale:
            if found.figure.doc != doc:
                continue
            now = locate(found.figure, text)
            if now.problem:
                problems.append(now.problem)
                continue
            edits.append((now.span, value))
        for (start, end), value in sorted(edits, reverse=True):
            text = text[:start] + value + text[end:]
        path.write_text(text)
    return problems


def describe(found: Found, value: str, command: Command) -> str:
    lines = "; ".join(command_lines(command, Path("OUT")))
    return (f"{found.figure.doc}:{found.line}: {found.figure.name}: the doc says {normal(found.text)!r}, the command "
            f"gives {normal(value)!r}\n    ({command.name}: {lines})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="run the commands; exit 1 naming each stale figure")
    mode.add_argument("--write", action="store_true", help="run the commands; rewrite the stale figures in place")
    parser.add_argument("--only", action="append", metavar="NAME", help="a figure or a command (repeatable)")
    parser.add_argument("--doc", action="append", metavar="PATH",
                        help="only the figures of this doc, e.g. docs/battery.md")
    parser.add_argument("--cost", choices=COSTS, default="long",
                        help="run commands of this cost and cheaper (default: all)")
    parser.add_argument("--keep", type=Path, help="keep the commands' folders here (DIR/<command>, replaced)")
    args = parser.parse_args(argv)
    figures = selected(args.only, args.cost, args.doc)
    if not (args.check or args.write):
        for figure in figures:
            found = locate(figure)
            command = COMMANDS[figure.command]
            where = f"{figure.doc}:{found.line}" if not found.problem else f"{figure.doc}: NOT FOUND"
            print(f"{figure.name:38} {where:26} {command.cost:6} {normal(found.text)!r}  <- {command.name}")
        return 2 if any(locate(f).problem for f in figures) else 0
    report = measure(figures, args.keep, echo=True)
    for found, value in report.stale:
        print(describe(found, value, COMMANDS[found.figure.command]))
    if args.write and report.stale:
        report.problems += write(report.stale)
        print(f"rewrote {len(report.stale)} figure(s)")
    for problem in report.problems:
        print(f"problem: {problem}")
    print(f"{len(report.current)} figure(s) current, {len(report.stale)} stale, {len(report.problems)} problem(s)")
    if report.problems:
        return 2
    return 1 if report.stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
