"""The scenario file (TOML): one flight test, read and checked key by key before anything flies.

A scenario is data (parsed with :mod:`tomllib`, nothing evaluated): the vehicle and scene, the controller,
the start, the air over time, the faults, the mission as steps, the checks over time windows, a matrix of
seeds, vehicles and variation files to fly it over, and the tolerances a baseline comparison allows.
``docs/testing.md`` lists every key; :data:`KEYS`, :data:`STEP_KEYS`, :data:`CHECK_KEYS` and
:data:`FAULT_KEYS` below are what this module accepts.

Every error is a :class:`ScenarioError` of one line: the file, the key at fault, and how to fix it.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nexus.core.errors import BuildError

#: Top-level keys and tables of a scenario file.
KEYS = ("name", "description", "duration", "tick_hz", "vehicle", "scene", "seed", "controller", "start",
        "environment", "fault", "step", "check", "matrix", "baseline", "px4")
#: Keys of ``[controller]``.
CONTROLLER_KEYS = ("name", "gain_scale", "knows_failures")
#: Keys of ``[start]``: the vehicle's start in the scene [m, east and north] and its heading [deg].
START_KEYS = {"x": "start_x", "y": "start_y", "yaw": "start_yaw"}
#: Keys of ``[environment]`` and of each ``[[environment.gust]]``.
ENVIRONMENT_KEYS = ("wind", "turbulence", "gust", "drag_area", "rotor_drag")
GUST_KEYS = ("start", "duration", "amplitude", "direction")
#: Each ``[[fault]]``: its ``kind`` and the keys it takes (``at`` [s] or a ``when`` condition, one of them).
FAULT_KEYS = {
    "rotor": ("kind", "at", "when", "rotor", "fraction"),
    "sensor": ("kind", "at", "when", "sensor", "mode"),
    "gps_denied": ("kind", "at", "when"),
}
#: ``[[fault]] kind = "link_loss"`` (PX4 only): the ground station's link is down over [at, end) [s].
LINK_LOSS_KEYS = ("kind", "at", "end")
#: Each ``[[step]]``: what it ``do``es and the keys it takes.
STEP_KEYS = {
    "takeoff": ("do", "height", "speed", "tolerance", "time_limit"),
    "goto": ("do", "to", "speed", "tolerance", "time_limit"),
    "hold": ("do", "time"),
    "turn": ("do", "heading", "rate", "tolerance", "time_limit"),
    "land": ("do", "speed", "time_limit"),
    "wait": ("do", "until_time", "until_speed_below", "time_limit"),
}
#: Each ``[[check]]``: the quantity it ``measure``s, with its unit, its bound key and what it means.
MEASURES = {
    "position_error": ("m", "max", "distance between the vehicle and the setpoint"),
    "altitude_error": ("m", "max", "vertical distance between the vehicle and the setpoint"),
    "tilt": ("deg", "max", "angle between the body's up axis and the vertical"),
    "speed": ("m/s", "max", "the vehicle's speed over the ground"),
    "height": ("m", "min", "height of the base above where it started (a rough stand-in for contact)"),
    "contact": ("-", "max", "the vehicle's touching contact points (ground or obstacle), 0 allowed: no contact but the "
                            "rest before the take-off and, without a window, the landing (from the last land step)"),
    "reach": ("s", "max", "sim time at which the mission step `step` ended within its tolerance"),
    "landing": ("m", "max", "horizontal distance from `point` [north, east] (default: the start) to where the vehicle "
                            "is at the end"),
    "battery": ("-", "min", "the battery's state of charge (a vehicle with a NexusBatteryAPI prim)"),
    "ended": ("-", "max", "1 unless the mission ended the run (landed and disarmed) by the window's end"),
    "px4_mission": ("-", "max", "PX4's refusals: mission commands it did not accept (an arming refusal), plus 1 "
                                "unless it landed and disarmed (run.json's controller_stats.mission, or mission.json)"),
    "px4_failsafe": ("-", "max", "PX4's messages (STATUSTEXT and ULog) in the window that say failsafe or arming "
                                 "refused: how many different texts (none, or with min = N at least N)"),
}
#: Measures whose bound is fixed at 0 (a count of things that must not happen).
FIXED_BOUND = ("ended", "px4_mission", "contact", "px4_failsafe")
CHECK_KEYS = ("measure", "name", "max", "min", "window", "step", "point")
MATRIX_KEYS = ("seeds", "vehicles", "vary")
BASELINE_KEYS = ("tolerance",)
PX4_KEYS = ("binary", "model", "params", "mission", "settle", "pinned")
#: A matrix of more points than this needs ``--yes``.
MAX_POINTS_WITHOUT_YES = 64
#: A step's defaults: speed [m/s], turn rate [deg/s], position tolerance [m], heading tolerance [deg].
DEFAULT_SPEED, DEFAULT_RATE, DEFAULT_TOLERANCE, DEFAULT_HEADING_TOLERANCE = 1.0, 45.0, 0.3, 5.0
LAND_SPEED = 0.7


class ScenarioError(BuildError):
    """A scenario file, or a ``nexus test`` option, that cannot run: found before any run starts."""

    reason = "bad-scenario"


@dataclass(frozen=True)
class Check:
    """One pass/fail rule: ``measure`` stays at or under ``bound`` (``min``: at or over it) in ``window`` [s]."""

    name: str
    measure: str
    bound: float
    #: ``max`` or ``min``.
    side: str
    window: tuple[float, float]
    step: int | None = None
    #: ``landing``: [north, east] from the NED origin [m]; None: where the vehicle started.
    point: tuple[float, float] | None = None
    #: ``reach`` of a PX4 step: the (north, east, height, tolerance) [m] of each takeoff and goto up to it.
    goals: tuple | None = None

    @property
    def unit(self) -> str:
        return MEASURES[self.measure][0]

    def describe(self) -> str:
        """``altitude_error <= 0.3 m over [2, 6] s``."""
        op = "<=" if self.side == "max" else ">="
        unit = f" {self.unit}" if self.unit != "-" else ""
        if self.measure == "contact" and self.step is not None:
            return f"{self.measure} {op} {self.bound:g} over [{self.window[0]:g} s, start of step {self.step}]"
        what = f"{self.measure}(step {self.step})" if self.step is not None else self.measure
        return f"{what} {op} {self.bound:g}{unit} over [{self.window[0]:g}, {self.window[1]:g}] s"

    def as_dict(self) -> dict:
        return {"name": self.name, "measure": self.measure, "bound": self.bound, "side": self.side,
                "window": list(self.window), "step": self.step, "point": list(self.point) if self.point else None}


@dataclass
class Scenario:
    path: Path
    name: str
    description: str
    duration: float
    #: RunConfig fields every point shares (vehicle, scene, controller, seed, tick_hz, wind, turbulence, ...).
    run: dict
    #: What the ring needs beyond RunConfig's own fields (``RunConfig.scenario``): steps, gusts, gain scale.
    ring: dict
    #: Fixed variation values (faults, start): every world of every point draws these.
    values: dict
    checks: list[Check]
    matrix: dict
    tolerance: dict
    px4: dict | None = None
    #: Why this scenario is not flown (a PX4 scenario without a binary), or None.
    skip: str | None = None
    steps: list[dict] = field(default_factory=list)

    def points(self) -> list[dict]:
        """Each matrix point's varied values (seed, vehicle, vary), in order (the last key fastest)."""
        seeds = self.matrix.get("seeds") or [self.run.get("seed", 0)]
        vehicles = self.matrix.get("vehicles") or [None]
        varies = self.matrix.get("vary") or [None]
        out = []
        for vehicle in vehicles:
            for vary in varies:
                for seed in seeds:
                    values = {"seed": seed}
                    if vehicle is not None:
                        values["vehicle"] = vehicle
                    if vary is not None:
                        values["vary"] = vary
                    out.append(values)
        return out


def _fail(path: Path, key: str, text: str) -> ScenarioError:
    return ScenarioError(f"{path}: {key}: {text}")


def _number(path: Path, key: str, value: Any, *, low: float | None = None, open_low: bool = False,
            high: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(path, key, f"{value!r} is not a number; give one, e.g. {key.rsplit('.', 1)[-1]} = 1.0")
    if low is not None and (value < low or (open_low and value == low)):
        raise _fail(path, key, f"{value!r} is out of bounds; give {'more than' if open_low else 'at least'} {low:g}")
    if high is not None and value > high:
        raise _fail(path, key, f"{value!r} is out of bounds; give at most {high:g}")
    return float(value)


def _table(path: Path, key: str, value: Any, allowed) -> dict:
    if not isinstance(value, dict):
        raise _fail(path, key, f"must be a table ([{key}])")
    unknown = [k for k in value if k not in allowed]
    if unknown:
        raise _fail(path, f"{key}.{unknown[0]}", f"unknown key; {key} takes {', '.join(allowed)}")
    return value


def _tables(path: Path, key: str, value: Any) -> list[dict]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise _fail(path, key, f"must be an array of tables ([[{key}]])")
    return value


def _resolve(path: Path, value: str, may_be_name: bool = True) -> str:
    from nexus.sweep.spec import resolve_path  # noqa: PLC0415

    return resolve_path(path, value, may_be_name)


def load(path: str | Path, px4_binary: str | None = None) -> Scenario:
    """Read and check a scenario file; :class:`ScenarioError` (one line) on anything wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_bytes().decode())
    except OSError as error:
        raise ScenarioError(f"cannot read the scenario file {path} ({error.strerror})") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ScenarioError(f"{path}: not valid TOML ({error}); a scenario file is TOML") from None
    unknown = [k for k in data if k not in KEYS]
    if unknown:
        raise _fail(path, unknown[0], f"unknown key; a scenario holds {', '.join(KEYS)} (docs/testing.md)")
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not name or any(c in name for c in "/\\ \t"):
        raise _fail(path, "name", f"{name!r}: give a short name without spaces or slashes")
    description = data.get("description", "")
    if "duration" not in data:
        raise _fail(path, "duration", "missing; give the longest sim time the flight lasts [s], e.g. duration = 8.0")
    duration = _number(path, "duration", data["duration"], low=0.0, open_low=True)
    run: dict = {"duration": duration, "device": "cpu"}
    if "tick_hz" in data:
        run["tick_hz"] = _number(path, "tick_hz", data["tick_hz"], low=1.0, high=10000.0)
    for key in ("vehicle", "scene"):
        if key in data:
            if not isinstance(data[key], str):
                raise _fail(path, key, f"{data[key]!r}: give a name in {key}s/ or a path to a .usda file")
            run[key] = _resolve(path, data[key])
    if "seed" in data:
        if not isinstance(data["seed"], int) or isinstance(data["seed"], bool) or data["seed"] < 0:
            raise _fail(path, "seed", f"{data['seed']!r}: give a whole number, 0 or more")
        run["seed"] = data["seed"]
    ring: dict = {"name": name}
    values: dict = {}
    controller = _table(path, "controller", data.get("controller", {}), CONTROLLER_KEYS)
    _controller(path, controller, run, ring)
    px4 = _px4(path, data, run, px4_binary)
    skip = None
    if px4 is not None and not px4["binary"]:
        skip = "no PX4 binary: give [px4] binary or nexus test --px4-binary PATH"
    start = _table(path, "start", data.get("start", {}), tuple(START_KEYS))
    for key, drawn in START_KEYS.items():
        if key in start:
            values[drawn] = _number(path, f"start.{key}", start[key], low=-1000.0, high=1000.0)
    _environment(path, _table(path, "environment", data.get("environment", {}), ENVIRONMENT_KEYS), duration, run,
                 ring)
    triggers: list[dict] = []
    sensor_faults: list[dict] = []
    for index, fault in enumerate(_tables(path, "fault", data.get("fault", []))):
        if fault.get("kind") == "link_loss":
            _link_loss(path, f"fault[{index}]", fault, duration, px4)
        else:
            _fault(path, index, fault, duration, values, triggers, sensor_faults)
    if len(sensor_faults) > 1:
        ring["sensor_faults"] = sensor_faults[1:]
    steps = [_step(path, f"step[{i}]", s) for i, s in enumerate(_tables(path, "step", data.get("step", [])))]
    goals = None
    if px4 is not None and steps:
        _px4_steps(path, steps, px4)
        goals = _px4_goals(steps)  # reach: where PX4 must fly, measured on the record
        steps = []  # PX4 flies them itself: no Nexus guidance stage
    ring["steps"] = steps
    for trigger in triggers:
        if "step" in trigger["when"] and trigger["when"]["step"] >= len(steps):
            key = f"fault[{trigger['fault']}].when.step"
            raise _fail(path, key, f"{trigger['when']['step']}: give the index of a [[step]] (0 to {len(steps) - 1})"
                        if steps else "the scenario has no [[step]]s (a PX4 scenario flies its own); give at = "
                                      "<time> [s] or add steps")
    if triggers:
        ring["triggers"] = triggers
    if values:
        ring["values"] = dict(values)
    land = max((i for i, s in enumerate(steps) if s["do"] == "land"), default=None)
    checks = [_check(path, f"check[{i}]", c, duration, len(steps), land, goals)
              for i, c in enumerate(_tables(path, "check", data.get("check", [])))]
    if any(c.measure == "contact" for c in checks):
        ring["contact"] = True
    if not checks:
        raise _fail(path, "check", "a scenario without [[check]]s cannot fail; add one, e.g. "
                                   "[[check]] measure = \"ended\"")
    names = [c.name for c in checks]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise _fail(path, "check", f"two checks are named {twice[0]!r}; give each a name of its own (name = ...)")
    matrix = _matrix(path, _table(path, "matrix", data.get("matrix", {}), MATRIX_KEYS))
    baseline = _table(path, "baseline", data.get("baseline", {}), BASELINE_KEYS)
    tolerance = baseline.get("tolerance", {})
    if not isinstance(tolerance, dict):
        raise _fail(path, "baseline.tolerance", "give a table of check name = tolerance, e.g. {landing = 0.05}")
    for key, value in tolerance.items():
        if key not in names:
            raise _fail(path, f"baseline.tolerance.{key}", f"no check is named {key!r}; name one of {', '.join(names)}")
        tolerance[key] = _number(path, f"baseline.tolerance.{key}", value, low=0.0)
    scenario = Scenario(path, name, str(description), duration, run, ring, values, checks, matrix, tolerance, px4,
                        skip, steps)
    if skip is None:
        _check_runs(scenario)
    return scenario


def _controller(path: Path, table: dict, run: dict, ring: dict) -> None:
    name = table.get("name", "pid")
    from nexus.control import registry  # noqa: PLC0415

    if name not in registry.names():
        raise _fail(path, "controller.name", f"{name!r}; choose one of {', '.join(registry.names())}")
    run["controller"] = name
    if "knows_failures" in table:
        if name != "pid" or not isinstance(table["knows_failures"], bool):
            raise _fail(path, "controller.knows_failures", "takes true or false, with controller.name = \"pid\"")
        run["controller_options"] = {"knows_failures": table["knows_failures"]}
    scale = table.get("gain_scale", {})
    if not isinstance(scale, dict):
        raise _fail(path, "controller.gain_scale", "give a table of gain = factor, e.g. {rate_p = 0.1}")
    from nexus.scenario.ring import GAINS  # noqa: PLC0415

    for key, value in scale.items():
        if key not in GAINS:
            raise _fail(path, f"controller.gain_scale.{key}", f"unknown gain; scale one of {', '.join(GAINS)}")
        _number(path, f"controller.gain_scale.{key}", value, low=0.0)
    if scale:
        if name != "pid":
            raise _fail(path, "controller.gain_scale", "scales the PID's gains; set controller.name = \"pid\"")
        ring["gain_scale"] = {k: float(v) for k, v in scale.items()}


def _px4(path: Path, data: dict, run: dict, px4_binary: str | None) -> dict | None:
    if run["controller"] != "px4":
        if "px4" in data:
            raise _fail(path, "px4", "is for controller.name = \"px4\"; set it, or remove [px4]")
        return None
    table = _table(path, "px4", data.get("px4", {}), PX4_KEYS)
    if "binary" not in table:
        raise _fail(path, "px4.binary", "missing; give the path of PX4's bin/px4, or binary = \"\" to take "
                                        "nexus test --px4-binary (the scenario is skipped without one)")
    binary = table["binary"] or px4_binary or ""  # --px4-binary fills an empty one
    if not isinstance(binary, str):
        raise _fail(path, "px4.binary", f"{binary!r}: give a path")
    if binary:
        binary = _resolve(path, binary, may_be_name=False)
        if not Path(binary).is_file():
            raise _fail(path, "px4.binary", f"{binary}: no such file; give the path of PX4's bin/px4")
    settle = table.get("settle", True)
    pinned = table.get("pinned", True)
    for key, value in (("settle", settle), ("pinned", pinned)):
        if not isinstance(value, bool):
            raise _fail(path, f"px4.{key}", "takes true or false")
    mission = table.get("mission", "nexus")
    if mission not in ("nexus", "none"):
        raise _fail(path, "px4.mission", f"{mission!r}; choose nexus (nexus px4 mission) or none")
    run["controller_options"] = {"settle": settle}
    return {"binary": binary, "model": table.get("model", "none_iris"), "params": dict(table.get("params", {})),
            "mission": mission, "settle": settle, "pinned": pinned}


def _environment(path: Path, table: dict, duration: float, run: dict, ring: dict) -> None:
    if "wind" in table:
        from nexus.air.wind_field import parse_wind  # noqa: PLC0415

        if not isinstance(table["wind"], str):
            raise _fail(path, "environment.wind", "give SPEED@FROM, e.g. \"6@270\" (6 m/s from the west)")
        try:
            parse_wind(table["wind"])
        except BuildError as error:
            raise _fail(path, "environment.wind", str(error)) from None
        run["wind"] = table["wind"]
    if "turbulence" in table:
        if table["turbulence"] not in ("light", "moderate", "severe"):
            raise _fail(path, "environment.turbulence", f"{table['turbulence']!r}; choose light, moderate or severe")
        run["turbulence"] = table["turbulence"]
    drag = {}
    if "drag_area" in table:
        area = table["drag_area"]
        if not isinstance(area, list) or len(area) != 3:
            raise _fail(path, "environment.drag_area", "give the base's drag area along its x, y, z axes [m^2], "
                                                       "e.g. [0.03, 0.03, 0.06]")
        drag["body_drag_area"] = [_number(path, "environment.drag_area", v, low=0.0) for v in area]
    if "rotor_drag" in table:
        drag["rotor_drag_coefficient"] = _number(path, "environment.rotor_drag", table["rotor_drag"], low=0.0)
    if drag:
        ring["drag"] = drag
    gusts = []
    for index, gust in enumerate(_tables(path, "environment.gust", table.get("gust", []))):
        key = f"environment.gust[{index}]"
        _table(path, key, gust, GUST_KEYS)
        missing = [k for k in GUST_KEYS if k not in gust]
        if missing:
            raise _fail(path, f"{key}.{missing[0]}", f"missing; a gust gives {', '.join(GUST_KEYS)}")
        start = _number(path, f"{key}.start", gust["start"], low=0.0)
        length = _number(path, f"{key}.duration", gust["duration"], low=0.0, open_low=True)
        if start + length > duration:
            raise _fail(path, f"{key}.start", f"the gust ends at {start + length:g} s, after the run "
                                              f"({duration:g} s); start it earlier or raise duration")
        gusts.append({"start": start, "duration": length,
                      "amplitude": _number(path, f"{key}.amplitude", gust["amplitude"], low=0.0),
                      "direction": _number(path, f"{key}.direction", gust["direction"], low=0.0, high=360.0)})
    if gusts:
        ring["gusts"] = gusts


def _px4_steps(path: Path, steps: list[dict], px4: dict) -> None:
    """A PX4 scenario's steps, flown as a mission uploaded to PX4 (nexus.px4.step_mission)."""
    from nexus.px4.step_mission import PX4_STEPS  # noqa: PLC0415

    if px4["mission"] != "nexus":
        raise _fail(path, "step", "a PX4 scenario's [[step]]s are uploaded by the in-loop mission; set [px4] "
                                  "mission = \"nexus\" or remove the [[step]]s")
    for index, step in enumerate(steps):
        if step["do"] not in PX4_STEPS:
            raise _fail(path, f"step[{index}].do", f"{step['do']!r} has no PX4 mission item; a PX4 scenario's steps "
                                                  f"are {', '.join(PX4_STEPS)}")
    if steps[0]["do"] != "takeoff":
        raise _fail(path, "step[0].do", "a PX4 mission starts with a takeoff; put a takeoff step first")
    px4["steps"] = steps


def _px4_goals(steps: list[dict]) -> list:
    """Per PX4 step, its point and tolerance (north, east, height, tolerance) [m], None for hold and land."""
    goals, north, east = [], 0.0, 0.0
    for step in steps:
        if step["do"] in ("takeoff", "goto"):
            if step["do"] == "goto":
                north, east = step["to"][0], step["to"][1]
            goals.append((north, east, step["to"][2], step["tolerance"]))
        else:
            goals.append(None)
    return goals


def _link_loss(path: Path, key: str, fault: dict, duration: float, px4: dict | None) -> None:
    """A MAVLink link loss: the in-loop mission's ground station falls silent over [at, end) (nexus.px4.commander)."""
    if "when" in fault:
        raise _fail(path, f"{key}.when", "a link_loss starts at a time only (PX4 flies its own mission, so a "
                                         "condition on the flight is not supported); give at and end [s]")
    if px4 is None:
        raise _fail(path, f"{key}.kind", "'link_loss' is a loss of PX4's MAVLink link; fly controller.name = \"px4\" "
                                         "or remove the fault")
    if px4["mission"] != "nexus":
        raise _fail(path, f"{key}.kind", "'link_loss' silences the in-loop mission's ground station; set [px4] "
                                         "mission = \"nexus\" or remove the fault")
    if "link_loss" in px4:
        raise _fail(path, key, "a second link_loss; a scenario loses the link once")
    _table(path, key, fault, LINK_LOSS_KEYS)
    for name in ("at", "end"):
        if name not in fault:
            raise _fail(path, f"{key}.{name}", f"missing; give the sim time the link loss "
                                               f"{'starts' if name == 'at' else 'ends (comes back)'} [s]")
    at = _number(path, f"{key}.at", fault["at"], low=0.0)
    end = _number(path, f"{key}.end", fault["end"], low=0.0)
    if at >= duration:
        raise _fail(path, f"{key}.at", f"{at:g} s is not inside the run ({duration:g} s); start it earlier")
    if end <= at:
        raise _fail(path, f"{key}.end", f"{end:g} s is not after at = {at:g} s; give a later end")
    px4["link_loss"] = [at, end]


def _when(path: Path, key: str, when: Any) -> dict:
    """A fault's condition (``when = {altitude_above = 1.0}``): exactly one key of CONDITIONS, a bound >= 0."""
    from nexus.scenario.fault_trigger import CONDITIONS  # noqa: PLC0415

    example = "e.g. when = {altitude_above = 1.0}"
    if not isinstance(when, dict) or not when:
        raise _fail(path, key, f"give one condition as a table, {example}; one of {', '.join(CONDITIONS)}")
    unknown = [k for k in when if k not in CONDITIONS]
    if unknown:
        raise _fail(path, f"{key}.{unknown[0]}", f"unknown condition; choose one of {', '.join(CONDITIONS)}")
    if len(when) > 1:
        raise _fail(path, key, f"{len(when)} conditions ({', '.join(when)}); give exactly one")
    (name, bound), = when.items()
    if name == "step":
        if not isinstance(bound, int) or isinstance(bound, bool) or bound < 0:
            raise _fail(path, f"{key}.step", f"{bound!r}: give the index of a [[step]] (a whole number, 0 or more)")
        return {"step": bound}
    return {name: _number(path, f"{key}.{name}", bound, low=0.0)}


def _fault(path: Path, index: int, fault: dict, duration: float, values: dict, triggers: list[dict],
           sensors: list[dict]) -> None:
    """A rotor or sensor fault into ``values`` (the first sensor fault) or ``sensors`` (every sensor fault), and
    into ``triggers`` when it waits for a condition."""
    key = f"fault[{index}]"
    kind = fault.get("kind")
    if kind not in FAULT_KEYS:
        raise _fail(path, f"{key}.kind", f"{kind!r}: unknown fault; choose one of {', '.join(FAULT_KEYS)}, "
                                         "link_loss (PX4)")
    _table(path, key, fault, FAULT_KEYS[kind])
    if "at" in fault and "when" in fault:
        raise _fail(path, key, "both at and when; give one: at = <time> [s], or when = {<condition> = <bound>}")
    if "at" not in fault and "when" not in fault:
        raise _fail(path, f"{key}.at", "missing; give the sim time the fault starts [s] (at = 3.0), or a "
                                       "condition (when = {altitude_above = 1.0})")
    if "when" in fault:
        from nexus.scenario.fault_trigger import PENDING_S  # noqa: PLC0415

        when = _when(path, f"{key}.when", fault["when"])
        at = PENDING_S  # the fault is built waiting; the trigger stage writes its time when the condition holds
        target = "rotor" if kind == "rotor" else f"sensor:{'Gps' if kind == 'gps_denied' else fault.get('sensor')}"
        triggers.append({"fault": index, "kind": kind, "target": target, "when": when})
    else:
        at = _number(path, f"{key}.at", fault["at"], low=0.0)
        if at >= duration:
            raise _fail(path, f"{key}.at", f"{at:g} s is not inside the run ({duration:g} s); start it earlier")
    if kind == "rotor":
        if "rotor_fail_time" in values:
            raise _fail(path, key, "a second rotor fault; a scenario fails one rotor")
        rotor = fault.get("rotor", 0)
        if not isinstance(rotor, int) or isinstance(rotor, bool) or rotor < 0:
            raise _fail(path, f"{key}.rotor", f"{rotor!r}: give the rotor's index, 0 or more")
        values.update(rotor_fail_time=at, rotor_fail_index=rotor,
                      rotor_fail_fraction=_number(path, f"{key}.fraction", fault.get("fraction", 0.0), low=0.0,
                                                  high=1.0))
        return
    if kind == "gps_denied":
        sensor, mode = "Gps", "dropout"
    else:
        sensor, mode = fault.get("sensor"), fault.get("mode", "freeze")
        if not isinstance(sensor, str) or not sensor:
            raise _fail(path, f"{key}.sensor", "missing; name the sensor (the last element of its prim path: Imu, "
                                               "Gps)")
        if mode not in ("freeze", "dropout"):
            raise _fail(path, f"{key}.mode", f"{mode!r}; choose freeze or dropout")
    if any(s["sensor"] == sensor for s in sensors):
        raise _fail(path, key, f"a second fault of sensor {sensor!r} (gps_denied faults Gps); fault each sensor "
                               "once")
    if not sensors:  # the first is the variation's sensor fault; the others fly as stages of their own
        values.update(sensor_fault_time=at, sensor_fault_sensor=sensor, sensor_fault_mode=mode)
    sensors.append({"sensor": sensor, "mode": mode, "time": at})


def _step(path: Path, key: str, step: dict) -> dict:
    do = step.get("do")
    if do not in STEP_KEYS:
        raise _fail(path, f"{key}.do", f"{do!r}: unknown step; choose one of {', '.join(STEP_KEYS)}")
    _table(path, key, step, STEP_KEYS[do])
    out = {"do": do}
    if "time_limit" in step:
        out["time_limit"] = _number(path, f"{key}.time_limit", step["time_limit"], low=0.0, open_low=True)
    if do == "takeoff":
        if "height" not in step:
            raise _fail(path, f"{key}.height", "missing; give the height to climb to above the start [m]")
        out["to"] = [0.0, 0.0, _number(path, f"{key}.height", step["height"], low=0.0, open_low=True)]
        out["keep_xy"] = True
    elif do == "goto":
        to = step.get("to")
        if not isinstance(to, list) or len(to) != 3:
            raise _fail(path, f"{key}.to", "give [north, east, height] from the start [m], e.g. [2, 0, 2]")
        out["to"] = [_number(path, f"{key}.to", v) for v in to]
    elif do == "hold":
        if "time" not in step:
            raise _fail(path, f"{key}.time", "missing; give how long to hold [s]")
        out["time"] = _number(path, f"{key}.time", step["time"], low=0.0)
    elif do == "turn":
        if "heading" not in step:
            raise _fail(path, f"{key}.heading", "missing; give the heading to turn to [deg from the start heading]")
        out["heading"] = _number(path, f"{key}.heading", step["heading"], low=-360.0, high=360.0)
        out["rate"] = _number(path, f"{key}.rate", step.get("rate", DEFAULT_RATE), low=0.0, open_low=True)
        out["tolerance"] = _number(path, f"{key}.tolerance", step.get("tolerance", DEFAULT_HEADING_TOLERANCE),
                                   low=0.0, open_low=True)
    elif do == "land":
        out["speed"] = _number(path, f"{key}.speed", step.get("speed", LAND_SPEED), low=0.0, open_low=True)
    elif do == "wait":
        if "until_time" in step:
            out["until_time"] = _number(path, f"{key}.until_time", step["until_time"], low=0.0)
        if "until_speed_below" in step:
            out["until_speed_below"] = _number(path, f"{key}.until_speed_below", step["until_speed_below"], low=0.0,
                                               open_low=True)
        if len(out) == 1:
            raise _fail(path, key, "a wait with no until_time, no until_speed_below and no time_limit never "
                                   "ends; give one of them")
    if do in ("takeoff", "goto"):
        out["speed"] = _number(path, f"{key}.speed", step.get("speed", DEFAULT_SPEED), low=0.0, open_low=True)
        out["tolerance"] = _number(path, f"{key}.tolerance", step.get("tolerance", DEFAULT_TOLERANCE), low=0.0,
                                   open_low=True)
    return out


def _check(path: Path, key: str, check: dict, duration: float, steps: int, land: int | None = None,
           goals: list | None = None) -> Check:
    measure = check.get("measure")
    if measure not in MEASURES:
        raise _fail(path, f"{key}.measure", f"{measure!r}: unknown check; choose one of {', '.join(MEASURES)}")
    _table(path, key, check, CHECK_KEYS)
    unit, side, _ = MEASURES[measure]
    other = "min" if side == "max" else "max"
    if measure == "px4_failsafe" and "min" in check:
        side = other = "min"  # at least `min` different failsafe texts: the failsafe a fault must cause
        minimum = check["min"]
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
            raise _fail(path, f"{key}.min", f"{minimum!r}: give a whole number of failsafe texts, 1 or more, or "
                                            "remove min (then no failsafe may happen)")
    if other in check and other != side:
        raise _fail(path, f"{key}.{other}", f"{measure} takes a {side} bound, not a {other}; write {side} = ...")
    if measure == "px4_failsafe" and side == "min":
        if "max" in check:
            raise _fail(path, f"{key}.max", "px4_failsafe takes min (at least so many failsafes) or no bound; "
                                            "remove max")
        bound = float(check["min"])
    elif measure in FIXED_BOUND:
        if side in check:
            more = " (or min = N: at least N failsafes)" if measure == "px4_failsafe" else ""
            raise _fail(path, f"{key}.{side}", f"{measure} takes no bound (it must stay 0); remove {side}{more}")
        bound = 0.0
    elif side not in check:
        raise _fail(path, f"{key}.{side}", f"missing; give the bound of {measure} [{unit}]")
    else:
        bound = _number(path, f"{key}.{side}", check[side], low=0.0 if measure != "height" else None)
    window = check.get("window", [0.0, duration])
    if (not isinstance(window, list) or len(window) != 2
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in window)):
        raise _fail(path, f"{key}.window", "give [from, to] in seconds of sim time, e.g. [2.0, 6.0]")
    start, end = float(window[0]), float(window[1])
    if not 0.0 <= start < end or end > duration:
        raise _fail(path, f"{key}.window", f"[{start:g}, {end:g}] s is not inside the run [0, {duration:g}] s; "
                                           "give 0 <= from < to <= duration")
    step = reached = None
    if measure == "reach" and goals is not None:  # a PX4 step: when the vehicle came within its tolerance
        step = check.get("step")
        points = [i for i, g in enumerate(goals) if g is not None]
        if isinstance(step, bool) or step not in points:
            raise _fail(path, f"{key}.step", f"{step!r}: give the index of a takeoff or goto [[step]] "
                                             f"({', '.join(map(str, points))}); PX4 flies a hold or land itself")
        reached = tuple(g for g in goals[:step + 1] if g is not None)
    elif measure == "reach":
        step = check.get("step")
        if not isinstance(step, int) or isinstance(step, bool) or not 0 <= step < steps:
            raise _fail(path, f"{key}.step", f"{step!r}: give the index of a [[step]] (0 to {steps - 1})"
                        if steps else "the scenario has no [[step]] to reach; add steps or remove the check")
    elif measure == "contact" and "window" not in check and land is not None:
        step = land  # the window ends where the last land step begins
    elif "step" in check:
        raise _fail(path, f"{key}.step", f"only measure = \"reach\" takes a step; remove it from {measure}")
    point = None
    if "point" in check:
        if measure != "landing":
            raise _fail(path, f"{key}.point", "only measure = \"landing\" takes a point")
        if not isinstance(check["point"], list) or len(check["point"]) != 2:
            raise _fail(path, f"{key}.point", "give [north, east] [m] from the NED origin")
        point = tuple(_number(path, f"{key}.point", v) for v in check["point"])
    name = check.get("name", f"reach_step_{step}" if measure == "reach" else measure)
    if not isinstance(name, str) or not name:
        raise _fail(path, f"{key}.name", "give a short name")
    return Check(name, measure, bound, side, (start, end), step, point, reached)


def _matrix(path: Path, table: dict) -> dict:
    out = {}
    for key in MATRIX_KEYS:
        if key not in table:
            continue
        values = table[key]
        if not isinstance(values, list) or not values:
            raise _fail(path, f"matrix.{key}", "give a non-empty list")
        if key == "seeds" and not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values):
            raise _fail(path, "matrix.seeds", "give whole numbers, 0 or more, e.g. [0, 1, 2, 3]")
        if key in ("vehicles", "vary"):
            if not all(isinstance(v, str) for v in values):
                raise _fail(path, f"matrix.{key}", "give a list of names or paths")
            values = [_resolve(path, v, key == "vehicles") for v in values]
            if key == "vary":
                for v in values:
                    if not Path(v).is_file():
                        raise _fail(path, "matrix.vary", f"{v}: no such variation file")
                    from nexus.worlds.variation import check_distributions  # noqa: PLC0415

                    try:  # its distributions against their bounds, before any run
                        check_distributions(v)
                    except BuildError as error:
                        raise ScenarioError(f"{path}: matrix.vary: {error}") from None
        out[key] = values
    return out


def _check_runs(scenario: Scenario) -> None:
    """Each matrix point's configuration is one RunConfig accepts (a bad vehicle name, a bad option)."""
    from dataclasses import replace  # noqa: PLC0415

    from nexus.runtime.flight import RunConfig  # noqa: PLC0415

    try:
        base = RunConfig(**scenario.run)
    except BuildError as error:
        raise _fail(scenario.path, "controller", str(error)) from None
    battery = next((i for i, c in enumerate(scenario.checks) if c.measure == "battery"), None)
    for values in scenario.points():
        try:
            config = replace(base, **values)
            config.check()
            config.dt_ns  # noqa: B018 (a tick rate that is no whole number of nanoseconds)
        except BuildError as error:
            raise _fail(scenario.path, "matrix", f"the point {values} cannot fly: {error}") from None
        if battery is not None and not _has_battery(config.vehicle):
            raise _fail(scenario.path, f"check[{battery}].measure", f"battery: the vehicle {config.vehicle!r} has no "
                                                                    "battery (no NexusBatteryAPI prim); fly one that "
                                                                    "has, or remove the check")


def _has_battery(vehicle: str) -> bool:
    from nexus.plant.assets import resolve_asset  # noqa: PLC0415
    from nexus.plant.loading import prims_with  # noqa: PLC0415
    from nexus.plant.usd_files import open_stage  # noqa: PLC0415

    try:
        return bool(prims_with(open_stage(resolve_asset("vehicle", vehicle)), "NexusBatteryAPI"))
    except BuildError:
        return True  # a vehicle that does not load is the run's error, reported with its folder
