"""The scenario file (TOML): one flight test, read and checked key by key before anything flies.

A scenario is data (parsed with :mod:`tomllib`, nothing evaluated): the vehicle and scene, the controller,
the start, the air over time, the faults, the mission as steps, the checks over time windows, a matrix of
seeds, vehicles and variation files to fly it over, and the tolerances a baseline comparison allows.
``docs/testing.md`` lists every key; :class:`ScenarioFile` declares them (their types and bounds, checked by
:mod:`nexus.vocab.data_file` with msgspec), and the code after it checks how they fit together (a window
inside the run, a fault's step among the steps, a check's bound on the side its measure takes). Besides its own
fault kinds (sensor, gps_denied, link_loss) a ``[[fault]]`` may name any kind a part declares beside its class
(:mod:`nexus.vocab.faults`; the rotor's, beside the propeller): its keys are checked against that declaration,
and the values it sets go to the part as fixed draws.

Every error is a :class:`ScenarioError` of one line: the file, the key at fault, and how to fix it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import msgspec

from nexus.air.wind_field import parse_wind
from nexus.control import registry
from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.plant.fleet import MAX_HEADING
from nexus.plant.loading import prims_with
from nexus.plant.usd_files import open_stage
from nexus.px4.step_mission import PX4_STEPS
from nexus.runtime.config import RunConfig
from nexus.runtime.fault_trigger import CONDITIONS, PENDING_S
from nexus.scenario.plane_checks import PHASE_NAMES, PLANE_MEASURES, VTOL_PHASE_NAMES
from nexus.control.registry import DEFAULT_CONTROLLER, scalable_gains
from nexus.sweep.spec import resolve_path
from nexus.vocab import data_file
from nexus.vocab import faults as declared_faults
from nexus.vocab.data_file import MISSING, Count, NonNegative, Number, Positive, Problem, fix, key_text
from nexus.vocab.faults import Fault, FaultKey
from nexus.worlds import owners  # noqa: F401 (Nexus's own parts declared: the rotor's fault)
from nexus.worlds.variation import check_distributions

#: Keys of ``[start]``: the vehicle's start in the scene [m, east and north] and its heading [deg].
START_KEYS = {"x": "start_x", "y": "start_y", "yaw": "start_yaw"}
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
    "estimate_error_horizontal": ("m", "max", "horizontal distance between the estimate's position and the vehicle's"),
    "estimate_error_vertical": ("m", "max", "vertical distance between the estimate's position and the vehicle's"),
    "drift": ("m", "max", "the farthest the vehicle went horizontally within the window from where it was at the "
                          "window's start (max: it stayed within; min: it went at least so far by the window's end)"),
    "horizontal_invalid": ("s", "max", "sim time the estimate first said, within the window, that its horizontal "
                                       "position is invalid (status bit cleared; never: inf; min: not before)"),
    "baro_fault": ("s", "max", "sim time the estimate first flagged, within the window, the barometer as stopped or "
                               "frozen (status bit set; never: inf; min: not before)"),
    "airspeed_fault": ("s", "max", "sim time the estimate first flagged, within the window, the pitot as stopped or "
                                   "frozen, its airspeed no longer fused (status bit set; never: inf; min: not before)"),
    "min_separation": ("m", "min", "the smallest distance between the base origins of two vehicles of one world (a "
                                   "fleet: [fleet] vehicles = 2 or more)"),
    "collisions": ("-", "max", "collisions between two vehicles of one world that began within the window (a fleet "
                               "whose vehicles touch: run.json's collisions)"),
    **PLANE_MEASURES,
}
#: Measures that are a series over the record's rows (a plane's phases may narrow their window).
SERIES_MEASURES = ("position_error", "altitude_error", "tilt", "speed", "height", "battery",
                   "estimate_error_horizontal", "estimate_error_vertical", "airspeed", "altitude", "cross_track",
                   "stall_margin")
#: Measures that take a max or a min bound (a time that must come by, or not before; a distance reached or kept).
EITHER_SIDE = ("drift", "horizontal_invalid", "baro_fault", "airspeed_fault", "airspeed", "altitude")
#: Measures whose bound is fixed at 0 (a count of things that must not happen).
FIXED_BOUND = ("ended", "px4_mission", "contact", "px4_failsafe")
#: A matrix of more points than this needs ``--yes``.
MAX_POINTS_WITHOUT_YES = 64
#: A step's defaults: speed [m/s], turn rate [deg/s], position tolerance [m], heading tolerance [deg].
DEFAULT_SPEED, DEFAULT_RATE, DEFAULT_TOLERANCE, DEFAULT_HEADING_TOLERANCE = 1.0, 45.0, 0.3, 5.0
LAND_SPEED = 0.7


# -- the file's declaration: its tables, their keys, types and bounds (checked by nexus.vocab.data_file) --------

class _Table(msgspec.Struct, forbid_unknown_fields=True):
    """A table of the scenario file: a key it does not declare is refused."""


#: A time limit, a speed, a tolerance: a number above 0.
_Limit = Positive | None


class _Controller(_Table):
    name: str = DEFAULT_CONTROLLER
    gain_scale: Annotated[dict[str, NonNegative], fix("give a table of gain = factor, e.g. {rate_p = 0.1}")] = {}
    knows_failures: Annotated[bool | None, fix("takes true or false, with controller.name = \"pid\"")] = None
    policy: Annotated[str | None, fix("give the model's path from the scenario's folder, e.g. \"policy.onnx\"")] = None


class _Start(_Table):
    x: Annotated[float, msgspec.Meta(ge=-1000.0, le=1000.0)] | None = None
    y: Annotated[float, msgspec.Meta(ge=-1000.0, le=1000.0)] | None = None
    yaw: Annotated[float, msgspec.Meta(ge=-1000.0, le=1000.0)] | None = None


class _Gust(_Table):
    start: Annotated[NonNegative, fix("a gust gives start, duration, amplitude, direction")]
    duration: Annotated[Positive, fix("a gust gives start, duration, amplitude, direction")]
    amplitude: Annotated[NonNegative, fix("a gust gives start, duration, amplitude, direction")]
    direction: Annotated[float, msgspec.Meta(ge=0.0, le=360.0), fix("a gust gives start, duration, amplitude, "
                                                                    "direction")]


class _Environment(_Table):
    wind: Annotated[str | None, fix("give SPEED@FROM, e.g. \"6@270\" (6 m/s from the west)")] = None
    turbulence: Annotated[Literal["light", "moderate", "severe"] | None, fix("choose light, moderate or severe")] = None
    gust: list[_Gust] = []
    drag_area: Annotated[Annotated[list[NonNegative], msgspec.Meta(min_length=3, max_length=3)] | None,
                         fix("give the base's drag area along its x, y, z axes [m^2], e.g. [0.03, 0.03, 0.06]")] = None
    rotor_drag: NonNegative | None = None


#: ``when = {<condition> = <bound>}``: a bound [m, m/s] 0 or more, or the index of a step.
_When = msgspec.defstruct("_When", [(name, Annotated[Count, fix("give the index of a [[step]] (a whole number, 0 "
                                                                 "or more)")] | None if name == "step"
                                     else NonNegative | None, None) for name in CONDITIONS],
                          forbid_unknown_fields=True)
_At = NonNegative | None


#: The fix of a ``when`` that is no one condition.
_ONE_CONDITION = "give one condition as a table, e.g. when = {altitude_above = 1.0}"


class _Fault(_Table, tag_field="kind"):
    at: _At = None
    when: Annotated[_When | None, fix(f"{_ONE_CONDITION}; one of {', '.join(CONDITIONS)}")] = None


class _SensorFault(_Fault, tag="sensor"):
    sensor: Annotated[str | None, fix("name the sensor (the last element of its prim path: Imu, Gps)")] = None
    mode: Annotated[Literal["freeze", "dropout"], fix("choose freeze or dropout")] = "freeze"


class _GpsDenied(_Fault, tag="gps_denied"):
    pass


class _LinkLoss(_Table, tag_field="kind", tag="link_loss"):
    at: _At = None
    end: _At = None
    when: Any = None  # refused with its reason: a link loss starts at a time only


class _Step(_Table, tag_field="do"):
    pass


class _Takeoff(_Step, tag="takeoff"):
    height: Annotated[Positive, fix("give the height to climb to above the start [m]")]
    speed: _Limit = None
    tolerance: _Limit = None
    time_limit: _Limit = None


class _Goto(_Step, tag="goto"):
    to: Annotated[list[Number], msgspec.Meta(min_length=3, max_length=3),
                  fix("give [north, east, height] from the start [m], e.g. [2, 0, 2]")]
    speed: _Limit = None
    tolerance: _Limit = None
    time_limit: _Limit = None


class _Hold(_Step, tag="hold"):
    time: Annotated[NonNegative, fix("give how long to hold [s]")]


class _Turn(_Step, tag="turn"):
    heading: Annotated[float, msgspec.Meta(ge=-360.0, le=360.0),
                       fix("give the heading to turn to [deg from the start heading]")]
    rate: _Limit = None
    tolerance: _Limit = None
    time_limit: _Limit = None


class _Land(_Step, tag="land"):
    speed: _Limit = None
    time_limit: _Limit = None


class _Wait(_Step, tag="wait"):
    until_time: NonNegative | None = None
    until_speed_below: _Limit = None
    time_limit: _Limit = None


class _Check(_Table):
    measure: Literal[tuple(MEASURES)]
    name: Annotated[Annotated[str, msgspec.Meta(min_length=1)] | None, fix("give a short name")] = None
    max: Number | None = None
    min: Number | None = None
    window: Annotated[Annotated[list[Number], msgspec.Meta(min_length=2, max_length=2)] | None,
                      fix("give [from, to] in seconds of sim time, e.g. [2.0, 6.0]")] = None
    step: Any = None  # the index of a step, checked against the steps there are
    point: Annotated[Annotated[list[Number], msgspec.Meta(min_length=2, max_length=2)] | None,
                     fix("give [north, east] [m] from the NED origin")] = None
    phases: Annotated[Annotated[list[Literal[PHASE_NAMES + VTOL_PHASE_NAMES]], msgspec.Meta(min_length=1)] | None,
                      fix(f"give a plane's mission phases, some of {', '.join(PHASE_NAMES)}, or a VTOL's, some of "
                          f"{', '.join(VTOL_PHASE_NAMES)}")] = None


_Names = Annotated[list[str], msgspec.Meta(min_length=1)]


class _Matrix(_Table):
    seeds: Annotated[Annotated[list[Count], msgspec.Meta(min_length=1)] | None,
                     fix("give whole numbers, 0 or more, e.g. [0, 1, 2, 3]")] = None
    vehicles: Annotated[_Names | None, fix("give a list of names or paths")] = None
    vary: Annotated[_Names | None, fix("give a list of names or paths")] = None


class _Route(_Table):
    waypoints: Annotated[list[Annotated[list[Number], msgspec.Meta(min_length=3, max_length=3)]],
                         msgspec.Meta(min_length=1, max_length=8),
                         fix("give 1 to 8 points [north, east, height] [m] from where vehicle 0 starts, e.g. "
                             "[[0, 0, 2], [0, 6, 2]]")]
    speed: Annotated[Positive, fix("give the average speed of the take-off and of each leg [m/s], above 0")] = 1.0
    hold: Annotated[NonNegative, fix("give the pause at each waypoint [s], 0 or more")] = 0.0
    leg_time: Annotated[Positive | None, fix("give how long each leg to a waypoint takes [s], above 0")] = None
    takeoff_time: Annotated[Positive | None, fix("give how long the take-off takes [s], above 0")] = None


class _Fleet(_Table):
    vehicles: Annotated[int, msgspec.Meta(ge=1, le=64), fix("give the vehicles in the world, a whole number from 1 "
                                                            "to 64, as nexus run --vehicles")] = 1
    spacing: Annotated[Positive | None, fix("give the distance between neighbours of the line [m], above 0, as "
                                            "nexus run --spacing")] = None
    contact: Annotated[bool, fix("takes true (the vehicles collide) or false (as --no-vehicle-contact)")] = True
    offsets: Annotated[list[Annotated[list[Number], msgspec.Meta(min_length=2, max_length=3)]] | None,
                       fix("give one [north, east] [m] from the vehicle file's place per vehicle, each optionally "
                           "with its start heading [deg], clockwise seen from above, e.g. [[0, 0], [0, 3, 90]]")] = None
    route: list[_Route] = []


class _Baseline(_Table):
    tolerance: Annotated[dict[str, NonNegative],
                         fix("give a table of check name = tolerance, e.g. {landing = 0.05}")] = {}


class _Px4(_Table):
    binary: Annotated[str | None, fix("give the path of PX4's bin/px4, or binary = \"\" to take nexus test "
                                      "--px4-binary (the scenario is skipped without one)")] = None
    model: str = "none_iris"
    params: dict[str, Any] = {}
    mission: Annotated[Literal["nexus", "none"], fix("choose nexus (nexus px4 mission) or none")] = "nexus"
    settle: Annotated[bool, fix("takes true or false")] = True
    pinned: Annotated[bool, fix("takes true or false")] = True


class ScenarioFile(_Table, kw_only=True):
    """A scenario file as declared: every key and table it may hold (``docs/testing.md`` says what each does)."""

    name: Annotated[str | None, fix("give a short name without spaces or slashes")] = None
    description: str = ""
    duration: Annotated[Positive, fix("give the longest sim time the flight lasts [s], e.g. duration = 8.0")]
    tick_hz: Annotated[float, msgspec.Meta(ge=1.0, le=10000.0)] | None = None
    vehicle: Annotated[str | None, fix("give a name in vehicles/ or a path to a .usda file")] = None
    scene: Annotated[str | None, fix("give a name in scenes/ or a path to a .usda file")] = None
    seed: Annotated[Count | None, fix("give a whole number, 0 or more")] = None
    estimator: Annotated[Literal["vehicle", "truth", "ekf"] | None,
                         fix("choose vehicle (the vehicle file's own), truth or ekf")] = None
    controller: _Controller = msgspec.field(default_factory=_Controller)
    start: _Start = msgspec.field(default_factory=_Start)
    environment: _Environment = msgspec.field(default_factory=_Environment)
    fault: list[_SensorFault | _GpsDenied | _LinkLoss] = []  # and the declared kinds: scenario_file()
    step: list[_Takeoff | _Goto | _Hold | _Turn | _Land | _Wait] = []
    check: list[_Check] = []
    matrix: _Matrix = msgspec.field(default_factory=_Matrix)
    baseline: _Baseline = msgspec.field(default_factory=_Baseline)
    px4: _Px4 | None = None
    fleet: _Fleet = msgspec.field(default_factory=_Fleet)


#: Top-level keys and tables of a scenario file.
KEYS = data_file.fields_of(ScenarioFile)
#: Keys of ``[controller]``, ``[environment]`` and each ``[[environment.gust]]``.
CONTROLLER_KEYS = data_file.fields_of(_Controller)
ENVIRONMENT_KEYS = data_file.fields_of(_Environment)
GUST_KEYS = data_file.fields_of(_Gust)
#: Each ``[[fault]]`` of the scenario's own kinds: its ``kind`` and the keys it takes (``at`` [s] or a ``when``
#: condition, one of them). The other kinds (the rotor's among them) are declared beside their parts.
FAULT_KEYS = {cls.__struct_config__.tag: data_file.fields_of(cls) for cls in (_SensorFault, _GpsDenied)}
#: ``[[fault]] kind = "link_loss"`` (PX4 only): the ground station's link is down over [at, end) [s].
LINK_LOSS_KEYS = data_file.fields_of(_LinkLoss)
#: The scenario's own fault kinds; any other is declared beside the part it breaks (:mod:`nexus.vocab.faults`:
#: the rotor's beside the propeller, nexus.plant.propeller.ROTOR_FAULT).
BUILTIN_FAULTS = (*FAULT_KEYS, "link_loss")
#: Each ``[[step]]``: what it ``do``es and the keys it takes.
STEP_KEYS = {cls.__struct_config__.tag: data_file.fields_of(cls)
             for cls in (_Takeoff, _Goto, _Hold, _Turn, _Land, _Wait)}
CHECK_KEYS = data_file.fields_of(_Check)
MATRIX_KEYS = data_file.fields_of(_Matrix)
#: Keys of ``[fleet]``: several vehicles in the world, in a line (``nexus run --vehicles``, docs/fleets.md).
FLEET_KEYS = data_file.fields_of(_Fleet)
BASELINE_KEYS = data_file.fields_of(_Baseline)
PX4_KEYS = data_file.fields_of(_Px4)

#: What each tagged table is called in its "unknown" sentence.
_TAGGED = {"do": "step", "kind": "fault", "measure": "check"}


# -- faults declared beside the parts they break (nexus.vocab.faults) --------------------------------------------

def _key_type(key: FaultKey) -> Any:
    """A declared fault key's type as msgspec checks it: a finite number within its allowed values, a whole
    number, or a name."""
    if key.kind == "str":
        return Annotated[str, fix(key.fix or f"give a name: {key.doc}")]
    allowed = key.allowed
    low, high = (allowed.low, allowed.high) if allowed is not None else (-math.inf, math.inf)
    open_low, open_high = (allowed.open_low, allowed.open_high) if allowed is not None else (False, False)
    if key.kind == "int":
        bounds = {**({"gt" if open_low else "ge": int(low)} if math.isfinite(low) else {}),
                  **({"lt" if open_high else "le": int(high)} if math.isfinite(high) else {})}
        return Annotated[int, msgspec.Meta(**bounds), fix(key.fix or f"give a whole number: {key.doc}")]
    big = 1.7976931348623157e308  # finite: TOML's inf and nan fail the bound
    return Annotated[float, msgspec.Meta(**{"gt" if open_low else "ge": low if math.isfinite(low) else -big,
                                            "lt" if open_high else "le": high if math.isfinite(high) else big})]


def _declared_fault(fault: Fault) -> type:
    """The table of one declared fault: ``at`` or ``when``, and its own keys."""
    return msgspec.defstruct(f"_{fault.kind}", [(k.name, _key_type(k), k.default) for k in fault.keys],
                             bases=(_Fault,), tag=fault.kind, forbid_unknown_fields=True)


def fault_kinds() -> tuple[str, ...]:
    """The kinds a ``[[fault]]`` takes besides ``link_loss``, as its sentences list them: those Nexus's own parts
    declare (the rotor), the scenario's own, then those other modules declare (:mod:`nexus.vocab.faults`)."""
    declared = declared_faults.declared()
    own = tuple(sorted(k for k, d in declared.items() if d.label.startswith("nexus.")))  # whatever imported first
    return (*own, *FAULT_KEYS, *(k for k in declared if k not in own))


def scenario_file() -> type:
    """:class:`ScenarioFile` with every declared fault among the kinds ``[[fault]]`` takes."""
    return _scenario_file(declared_faults.version())


@lru_cache(maxsize=4)
def _scenario_file(_version: int) -> type:
    declared = declared_faults.declared()
    if not declared:
        return ScenarioFile
    for kind, entry in declared.items():
        if kind in BUILTIN_FAULTS:
            raise BuildError(f"{entry.label} declares the scenario fault {kind!r}, one of the scenario's own "
                             f"({', '.join(BUILTIN_FAULTS)}); give it another kind")
    kinds = (_SensorFault, _GpsDenied, _LinkLoss, *(_declared_fault(d.fault) for d in declared.values()))
    return msgspec.defstruct("ScenarioFile", [("fault", list[Union[kinds]], [])], bases=(ScenarioFile,),
                             kw_only=True, forbid_unknown_fields=True)


def _sentence(problem: Problem) -> str:
    """The fix for the first thing the declaration refuses, as the hand-written checks of old worded it."""
    value, name = problem.value, problem.name
    if name in _TAGGED and problem.kind in ("choice", "missing", "type"):
        choices = {"do": ", ".join(STEP_KEYS), "kind": f"{', '.join(fault_kinds())}, link_loss (PX4)",
                   "measure": ", ".join(MEASURES)}[name]
        shown = None if value is MISSING else value
        return f"{shown!r}: unknown {_TAGGED[name]}; choose one of {choices}"
    if problem.kind == "unknown":
        if not problem.table:
            return f"unknown key; a scenario holds {', '.join(KEYS)} (docs/testing.md)"
        if problem.table.endswith(".when"):
            return f"unknown condition; choose one of {', '.join(CONDITIONS)}"
        return f"unknown key; {problem.table} takes {', '.join(problem.allowed)}"
    if problem.kind == "missing":
        return f"missing; {problem.fix}"
    if problem.kind == "length" and problem.table == "matrix":
        return "give a non-empty list"
    if problem.expected == "bool" or (problem.fix and isinstance(problem.parts[-1], int)):
        return problem.fix  # a yes/no, or an item of an array: the fix says what the whole takes
    if problem.fix and (problem.expected != "float" or problem.kind == "length"):
        return (problem.fix if problem.kind == "length" or isinstance(value, (list, dict)) or problem.expected in (
            "array", "object") else f"{value!r}{';' if problem.kind == 'choice' else ':'} {problem.fix}")
    if problem.kind == "bound" and problem.finite:
        side, bound = problem.bound
        give = {">=": "at least", ">": "more than", "<=": "at most", "<": "less than"}[side]
        return f"{value!r} is out of bounds; give {give} {bound:g}"
    leaf = next((p for p in reversed(problem.parts) if isinstance(p, str)), "value")
    return f"{value!r} is not a number; give one, e.g. {leaf} = 1.0"


def _word(path: Path):
    """The :class:`ScenarioError` of ``path`` for a :class:`~nexus.vocab.data_file.Problem`."""
    def word(problem: Problem) -> ScenarioError:
        parts = problem.parts
        while parts and isinstance(parts[-1], int) and problem.kind != "missing":  # a list's item: the list's key
            parts = parts[:-1]
        key = key_text(parts) if parts != problem.parts else problem.key
        return _fail(path, key, _sentence(problem))

    return word


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
    #: A plane's mission phases (names of ``plane_phase``) the window is narrowed to; None: every row.
    phases: tuple[str, ...] | None = None

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
        phases = f" in {', '.join(self.phases)}" if self.phases else ""
        return f"{what} {op} {self.bound:g}{unit} over [{self.window[0]:g}, {self.window[1]:g}] s{phases}"

    def as_dict(self) -> dict:
        return {"name": self.name, "measure": self.measure, "bound": self.bound, "side": self.side,
                "window": list(self.window), "step": self.step, "point": list(self.point) if self.point else None,
                **({"phases": list(self.phases)} if self.phases else {})}


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


def _resolve(path: Path, value: str, may_be_name: bool = True) -> str:
    return resolve_path(path, value, may_be_name)


def load(path: str | Path, px4_binary: str | None = None) -> Scenario:
    """Read and check a scenario file; :class:`ScenarioError` (one line) on anything wrong."""
    path = Path(path)
    data = data_file.read_toml(path, unreadable=lambda error: ScenarioError(f"cannot read the scenario file {path} "
                                                                   f"({error.strerror})"),
                     invalid=lambda error: ScenarioError(f"{path}: not valid TOML ({error}); a scenario file is TOML"))
    data_file.check(data, scenario_file(), _word(path))  # every key, type and bound; what follows checks how they fit together
    name = data.get("name", path.stem)
    if not name or any(c in name for c in "/\\ \t"):
        raise _fail(path, "name", f"{name!r}: give a short name without spaces or slashes")
    description = data.get("description", "")
    duration = float(data["duration"])
    run: dict = {"duration": duration, "device": "cpu"}
    if "tick_hz" in data:
        run["tick_hz"] = float(data["tick_hz"])
    for key in ("vehicle", "scene"):
        if key in data:
            run[key] = _resolve(path, data[key])
    if "seed" in data:
        run["seed"] = data["seed"]
    if "estimator" in data:  # what writes the estimate the vehicle flies on (RunConfig.estimator)
        run["estimator"] = data["estimator"]
    ring: dict = {"name": name}
    values: dict = {}
    _controller(path, data.get("controller", {}), run, ring)
    px4 = _px4(path, data, run, px4_binary)
    skip = None
    if px4 is not None and not px4["binary"]:
        skip = "no PX4 binary: give [px4] binary or nexus test --px4-binary PATH"
    start = data.get("start", {})
    for key, drawn in START_KEYS.items():
        if key in start:
            values[drawn] = float(start[key])
    _environment(path, data.get("environment", {}), duration, run, ring)
    _fleet(path, data.get("fleet", {}), run, ring)
    triggers: list[dict] = []
    sensor_faults: list[dict] = []
    for index, fault in enumerate(data.get("fault", [])):
        if fault.get("kind") == "link_loss":
            _link_loss(path, f"fault[{index}]", fault, duration, px4)
        else:
            _fault(path, index, fault, duration, values, triggers, sensor_faults)
    if len(sensor_faults) > 1:
        ring["sensor_faults"] = sensor_faults[1:]
    steps = [_step(path, f"step[{i}]", s) for i, s in enumerate(data.get("step", []))]
    goals = None
    if px4 is not None and steps:
        _px4_steps(path, steps, px4)
        goals = _px4_goals(steps)  # reach: where PX4 must fly, measured on the record
        steps = []  # PX4 flies them itself: no Nexus guidance stage
    if steps and ring.get("routes"):
        raise _fail(path, "fleet.route", "the fleet's routes fly in place of the [[step]]s; give one or the other")
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
              for i, c in enumerate(data.get("check", []))]
    if any(c.measure == "contact" for c in checks):
        ring["contact"] = True
    apart = next((i for i, c in enumerate(checks) if c.measure == "min_separation"), None)
    if apart is not None and run.get("vehicles", 1) < 2:
        raise _fail(path, f"check[{apart}].measure", "min_separation is the distance between the vehicles of one "
                                                    "world, and the scenario flies one; set [fleet] vehicles = 2 or "
                                                    "more, or remove the check")
    touch = next((i for i, c in enumerate(checks) if c.measure == "collisions"), None)
    if touch is not None and (run.get("vehicles", 1) < 2 or run.get("vehicle_contact") is False):
        raise _fail(path, f"check[{touch}].measure", "collisions are between the vehicles of one world that can "
                                                    "touch, and the scenario flies one, or none that touch; set "
                                                    "[fleet] vehicles = 2 or more with contact = true, or remove "
                                                    "the check")
    if not checks:
        raise _fail(path, "check", "a scenario without [[check]]s cannot fail; add one, e.g. "
                                   "[[check]] measure = \"ended\"")
    names = [c.name for c in checks]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise _fail(path, "check", f"two checks are named {twice[0]!r}; give each a name of its own (name = ...)")
    matrix = _matrix(path, data.get("matrix", {}))
    tolerance = data.get("baseline", {}).get("tolerance", {})
    for key, value in tolerance.items():
        if key not in names:
            raise _fail(path, f"baseline.tolerance.{key}", f"no check is named {key!r}; name one of {', '.join(names)}")
        tolerance[key] = float(value)
    scenario = Scenario(path, name, str(description), duration, run, ring, values, checks, matrix, tolerance, px4,
                        skip, steps)
    if skip is None:
        _check_runs(scenario)
    return scenario


def _controller(path: Path, table: dict, run: dict, ring: dict) -> None:
    name = table.get("name", DEFAULT_CONTROLLER)
    if name not in registry.names():
        raise _fail(path, "controller.name", f"{name!r}; choose one of {', '.join(registry.names())}")
    run["controller"] = name
    if "knows_failures" in table:
        if "knows_failures" not in {f.name for f in fields(registry.get(name).options)}:
            knowing = _controllers_with(lambda c: "knows_failures" in {f.name for f in fields(c.options)})
            raise _fail(path, "controller.knows_failures", f"takes true or false, with controller.name = {knowing}")
        run["controller_options"] = {"knows_failures": table["knows_failures"]}
    if table.get("policy") is not None:  # the model --controller policy flies (nexus run's --policy)
        if "model" not in {f.name for f in fields(registry.get(name).options)}:
            raise _fail(path, "controller.policy", "names a policy model; set controller.name = \"policy\"")
        model = Path(resolve_path(path, table["policy"], may_be_name=False))
        if not model.is_file():
            raise _fail(path, "controller.policy", f"{table['policy']!r}: no such file ({model}); give the model's "
                        "path from the scenario's folder")
        run["controller_options"] = {"model": str(model)}
    scale = table.get("gain_scale", {})
    gains = scalable_gains()  # the registered controllers' (nexus.control.registry)
    for key in scale:
        if key not in gains:
            raise _fail(path, f"controller.gain_scale.{key}", f"unknown gain; scale one of {', '.join(gains)}")
    if scale:
        if not registry.get(name).gains:
            raise _fail(path, "controller.gain_scale", "scales the PID's gains; set controller.name = "
                        f"{_controllers_with(lambda c: c.gains)}")
        ring["gain_scale"] = {k: float(v) for k, v in scale.items()}


def _controllers_with(has) -> str:
    """The registered controllers that ``has(entry)`` holds for, as a scenario file names them: ``"pid"``."""
    return " or ".join(f'"{c.name}"' for c in registry.controllers().values() if has(c))


def _px4(path: Path, data: dict, run: dict, px4_binary: str | None) -> dict | None:
    if run["controller"] not in registry.with_setup_table("px4"):
        if "px4" in data:
            named = " or ".join(f'"{name}"' for name in registry.with_setup_table("px4"))
            raise _fail(path, "px4", f"is for controller.name = {named}; set it, or remove [px4]")
        return None
    table = data.get("px4", {})
    if "binary" not in table:
        raise _fail(path, "px4.binary", "missing; give the path of PX4's bin/px4, or binary = \"\" to take "
                                        "nexus test --px4-binary (the scenario is skipped without one)")
    binary = table["binary"] or px4_binary or ""  # --px4-binary fills an empty one
    if binary:
        binary = _resolve(path, binary, may_be_name=False)
        if not Path(binary).is_file():
            raise _fail(path, "px4.binary", f"{binary}: no such file; give the path of PX4's bin/px4")
    settle, pinned, mission = table.get("settle", True), table.get("pinned", True), table.get("mission", "nexus")
    run["controller_options"] = {"settle": settle}
    return {"binary": binary, "model": table.get("model", "none_iris"), "params": dict(table.get("params", {})),
            "mission": mission, "settle": settle, "pinned": pinned}


def _environment(path: Path, table: dict, duration: float, run: dict, ring: dict) -> None:
    if "wind" in table:
        try:
            parse_wind(table["wind"])
        except BuildError as error:
            raise _fail(path, "environment.wind", str(error)) from None
        run["wind"] = table["wind"]
    if "turbulence" in table:
        run["turbulence"] = table["turbulence"]
    drag = {}
    if "drag_area" in table:
        drag["body_drag_area"] = [float(v) for v in table["drag_area"]]
    if "rotor_drag" in table:
        drag["rotor_drag_coefficient"] = float(table["rotor_drag"])
    if drag:
        ring["drag"] = drag
    gusts = []
    for index, gust in enumerate(table.get("gust", [])):
        key = f"environment.gust[{index}]"
        start, length = float(gust["start"]), float(gust["duration"])
        if start + length > duration:
            raise _fail(path, f"{key}.start", f"the gust ends at {start + length:g} s, after the run "
                                              f"({duration:g} s); start it earlier or raise duration")
        gusts.append({"start": start, "duration": length, "amplitude": float(gust["amplitude"]),
                      "direction": float(gust["direction"])})
    if gusts:
        ring["gusts"] = gusts


def _fleet(path: Path, table: dict, run: dict, ring: dict) -> None:
    """``[fleet]``: the RunConfig fields of several vehicles in the world (``--vehicles``, ``--spacing``,
    ``--no-vehicle-contact``); one vehicle sets none, so its run is the run it was. Its ``[[fleet.route]]``s,
    one per vehicle, are the vehicles' own waypoints (nexus.guidance.fleet_mission), in place of the guidance."""
    routes = table.get("route", [])
    if routes:
        vehicles = int(table.get("vehicles", 1))
        if len(routes) != vehicles:
            raise _fail(path, "fleet.route", f"{len(routes)} [[fleet.route]]s for {vehicles} vehicle"
                                             f"{'s' * (vehicles != 1)}; give one route per vehicle, vehicle 0's first")
        ring["routes"] = [{key: value for key, value in route.items()} for route in routes]
    if table.get("vehicles", 1) == 1:
        for key in ("spacing", "contact", "offsets"):
            if key in table:
                raise _fail(path, f"fleet.{key}", "a fleet of one vehicle has no line; set fleet.vehicles = 2 or "
                                                  f"more, or remove {key}")
        return
    run["vehicles"] = int(table["vehicles"])
    if table.get("offsets") is not None:
        if len(table["offsets"]) != run["vehicles"]:
            raise _fail(path, "fleet.offsets", f"{len(table['offsets'])} offsets for {run['vehicles']} vehicles; give "
                                               "one [north, east] per vehicle, vehicle 0's first")
        if "spacing" in table:
            raise _fail(path, "fleet.spacing", "the offsets place every vehicle; remove spacing (it spaces a line)")
        for index, place in enumerate(table["offsets"]):
            if len(place) == 3 and (not math.isfinite(place[2]) or abs(place[2]) > MAX_HEADING):
                raise _fail(path, f"fleet.offsets[{index}]", f"the start heading {place[2]!r} is not a heading; give "
                            f"it in degrees, clockwise seen from above, from -{MAX_HEADING:g} to {MAX_HEADING:g}")
        run["offsets"] = [",".join(f"{float(v)!r}" for v in place) for place in table["offsets"]]
    if "spacing" in table:
        run["spacing"] = float(table["spacing"])
    if "contact" in table:
        run["vehicle_contact"] = bool(table["contact"])


def _px4_steps(path: Path, steps: list[dict], px4: dict) -> None:
    """A PX4 scenario's steps, flown as a mission uploaded to PX4 (nexus.px4.step_mission)."""
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
    for name in ("at", "end"):
        if name not in fault:
            raise _fail(path, f"{key}.{name}", f"missing; give the sim time the link loss "
                                               f"{'starts' if name == 'at' else 'ends (comes back)'} [s]")
    at = float(fault["at"])
    end = float(fault["end"])
    if at >= duration:
        raise _fail(path, f"{key}.at", f"{at:g} s is not inside the run ({duration:g} s); start it earlier")
    if end <= at:
        raise _fail(path, f"{key}.end", f"{end:g} s is not after at = {at:g} s; give a later end")
    px4["link_loss"] = [at, end]


def _when(path: Path, key: str, when: dict) -> dict:
    """A fault's condition (``when = {altitude_above = 1.0}``): exactly one key of CONDITIONS (its bound is
    checked by the declaration)."""
    if not when:
        raise _fail(path, key, f"{_ONE_CONDITION}; one of {', '.join(CONDITIONS)}")
    if len(when) > 1:
        raise _fail(path, key, f"{len(when)} conditions ({', '.join(when)}); give exactly one")
    (name, bound), = when.items()
    return {"step": bound} if name == "step" else {name: float(bound)}


def _fault(path: Path, index: int, fault: dict, duration: float, values: dict, triggers: list[dict],
           sensors: list[dict]) -> None:
    """A declared fault (the rotor's) into ``values`` (the drawn values its declaration says it sets), a sensor
    fault into ``values`` (the first sensor fault) or ``sensors`` (every sensor fault), and each into
    ``triggers`` when it waits for a condition."""
    key = f"fault[{index}]"
    kind = fault["kind"]
    declared = declared_faults.declared().get(kind)
    if "at" in fault and "when" in fault:
        raise _fail(path, key, "both at and when; give one: at = <time> [s], or when = {<condition> = <bound>}")
    if "at" not in fault and "when" not in fault:
        raise _fail(path, f"{key}.at", "missing; give the sim time the fault starts [s] (at = 3.0), or a "
                                       "condition (when = {altitude_above = 1.0})")
    if "when" in fault:
        when = _when(path, f"{key}.when", fault["when"])
        at = PENDING_S  # the fault is built waiting; the trigger stage writes its time when the condition holds
        # A declared fault's owners list their fail times under its kind (fault_clocks); a sensor's, under its name.
        target = kind if declared is not None else f"sensor:{'Gps' if kind == 'gps_denied' else fault.get('sensor')}"
        triggers.append({"fault": index, "kind": kind, "target": target, "when": when})
    else:
        at = float(fault["at"])
        if at >= duration:
            raise _fail(path, f"{key}.at", f"{at:g} s is not inside the run ({duration:g} s); start it earlier")
    if declared is not None:
        if declared.fault.time in values:
            raise _fail(path, key, f"a second {kind} fault; {declared.fault.once}")
        values.update(declared.fault.values(fault, at))
        return
    if kind == "gps_denied":
        sensor, mode = "Gps", "dropout"
    else:
        sensor, mode = fault.get("sensor"), fault.get("mode", "freeze")
        if not sensor:
            raise _fail(path, f"{key}.sensor", "missing; name the sensor (the last element of its prim path: Imu, "
                                               "Gps)")
    if any(s["sensor"] == sensor for s in sensors):
        raise _fail(path, key, f"a second fault of sensor {sensor!r} (gps_denied faults Gps); fault each sensor "
                               "once")
    if not sensors:  # the first is the variation's sensor fault; the others fly as stages of their own
        values.update(sensor_fault_time=at, sensor_fault_sensor=sensor, sensor_fault_mode=mode)
    sensors.append({"sensor": sensor, "mode": mode, "time": at})


def _step(path: Path, key: str, step: dict) -> dict:
    do = step["do"]
    out = {"do": do}
    if "time_limit" in step:
        out["time_limit"] = float(step["time_limit"])
    if do == "takeoff":
        out["to"] = [0.0, 0.0, float(step["height"])]
        out["keep_xy"] = True
    elif do == "goto":
        out["to"] = [float(v) for v in step["to"]]
    elif do == "hold":
        out["time"] = float(step["time"])
    elif do == "turn":
        out["heading"] = float(step["heading"])
        out["rate"] = float(step.get("rate", DEFAULT_RATE))
        out["tolerance"] = float(step.get("tolerance", DEFAULT_HEADING_TOLERANCE))
    elif do == "land":
        out["speed"] = float(step.get("speed", LAND_SPEED))
    elif do == "wait":
        if "until_time" in step:
            out["until_time"] = float(step["until_time"])
        if "until_speed_below" in step:
            out["until_speed_below"] = float(step["until_speed_below"])
        if len(out) == 1:
            raise _fail(path, key, "a wait with no until_time, no until_speed_below and no time_limit never "
                                   "ends; give one of them")
    if do in ("takeoff", "goto"):
        out["speed"] = float(step.get("speed", DEFAULT_SPEED))
        out["tolerance"] = float(step.get("tolerance", DEFAULT_TOLERANCE))
    return out


def _check(path: Path, key: str, check: dict, duration: float, steps: int, land: int | None = None,
           goals: list | None = None) -> Check:
    measure = check["measure"]
    unit, side, _ = MEASURES[measure]
    other = "min" if side == "max" else "max"
    if measure == "px4_failsafe" and "min" in check:
        side = other = "min"  # at least `min` different failsafe texts: the failsafe a fault must cause
        minimum = check["min"]
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
            raise _fail(path, f"{key}.min", f"{minimum!r}: give a whole number of failsafe texts, 1 or more, or "
                                            "remove min (then no failsafe may happen)")
    if measure in EITHER_SIDE and "min" in check:
        if "max" in check:
            raise _fail(path, f"{key}.max", f"{measure} takes max or min, not both; write two checks")
        side = other = "min"
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
    phases = None
    if "phases" in check:
        if measure not in SERIES_MEASURES:
            raise _fail(path, f"{key}.phases", f"{measure} is one value per run, not a series; only "
                                               f"{', '.join(SERIES_MEASURES)} take phases")
        phases = tuple(dict.fromkeys(check["phases"]))
    point = None
    if "point" in check:
        if measure != "landing":
            raise _fail(path, f"{key}.point", "only measure = \"landing\" takes a point")
        point = tuple(float(v) for v in check["point"])
    name = check.get("name", f"reach_step_{step}" if measure == "reach" else measure)
    return Check(name, measure, bound, side, (start, end), step, point, reached, phases)


def _matrix(path: Path, table: dict) -> dict:
    out = {}
    for key in MATRIX_KEYS:
        if key not in table:
            continue
        values = table[key]
        if key in ("vehicles", "vary"):
            values = [_resolve(path, v, key == "vehicles") for v in values]
            if key == "vary":
                for v in values:
                    if not Path(v).is_file():
                        raise _fail(path, "matrix.vary", f"{v}: no such variation file")
                    try:  # its distributions against their bounds, before any run
                        check_distributions(v)
                    except BuildError as error:
                        raise ScenarioError(f"{path}: matrix.vary: {error}") from None
        out[key] = values
    return out


def _check_runs(scenario: Scenario) -> None:
    """Each matrix point's configuration is one RunConfig accepts (a bad vehicle name, a bad option)."""
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
    try:
        return bool(prims_with(open_stage(resolve_asset("vehicle", vehicle)), "NexusBatteryAPI"))
    except BuildError:
        return True  # a vehicle that does not load is the run's error, reported with its folder
