"""A scenario's checks, evaluated on a run's record after the flight (no stage in the ring, nothing on the device).

Each measure is a series over the record's rows (one per tick), computed with NumPy from the columns every
PID flight records: the base's pose and velocity (ENU world, FLU body), the setpoint (NED), and the step
mission's ``mission_step`` and ``mission_timeouts``, ``contact`` (touching contact points, recorded when a
scenario has a contact check: :mod:`nexus.plant.ground_contact`), and the estimator's ``estimate`` and
``estimate_status`` (what it said; the checks of the flight itself read the truth pose). Positions are NED from
the run's NED origin (run.json's ``ned_origin_enu_m``), heights from where the base started (the record's first
row).

A check passes when its measure stays at or under its bound (``min``: at or over it) at every row of its
window; otherwise its result names the first row that broke the bound (sim time and tick) and the worst
excess. The verdict depends only on the record's values, which a CPU run repeats bit for bit.

A record of several vehicles a world (:mod:`nexus.scenario.fleet_checks`) is judged vehicle by vehicle: each
measure of one vehicle on each vehicle's rows, the result that of the vehicle that broke it first (else the
worst), named in its message; ``min_separation`` on every vehicle of a world at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from nexus.estimation.estimate_status import AIRSPEED_FAULT, BARO_FAULT, HORIZONTAL_VALID, STATUS_SIGNAL, TRUSTED
from nexus.scenario.fleet_checks import Separation, is_fleet, separations, vehicle_rows
from nexus.scenario.plane_checks import PLANE_MEASURES, PlaneRecord
from nexus.scenario.px4_messages import FAILSAFE_OR_REFUSAL
from nexus.scenario.spec import Check

#: Run ends that make the scenario an error (the run broke), not a failure of a check.
BROKEN = ("error", "non-finite", "build-error", "px4-timeout")
#: Measures read from the estimator's status: the time a bit is first seen cleared (0) or set (1) in the window.
STATUS_MEASURES = {"horizontal_invalid": (HORIZONTAL_VALID, 0), "baro_fault": (BARO_FAULT, 1),
                   "airspeed_fault": (AIRSPEED_FAULT, 1)}


@dataclass
class CheckResult:
    check: Check
    passed: bool
    #: The measure's worst value in the window (max side: its largest; min side: its smallest).
    worst: float
    #: Sim time [s] and tick of the first row that broke the bound (None when it passed).
    first_time: float | None = None
    first_tick: int | None = None
    #: How far the worst value went past the bound (0 when it passed) [the measure's unit].
    excess: float = 0.0
    #: (times [s], values) in the window, for the report's figure.
    series: tuple = field(default=((), ()), repr=False)
    #: One tick [s] (turns a time into a tick).
    tick_s: float = 0.004
    #: What else the failure message says (px4_failsafe: PX4's first such text).
    detail: str = ""

    def as_dict(self) -> dict:
        return {"check": self.check.name, "measure": self.check.measure, "bound": self.check.bound,
                "side": self.check.side, "window": list(self.check.window), "passed": self.passed,
                "worst": None if not math.isfinite(self.worst) else self.worst, "first_time": self.first_time,
                "first_tick": self.first_tick, "excess": None if not math.isfinite(self.excess) else self.excess,
                **({"detail": self.detail} if self.detail else {})}

    def message(self) -> str:
        """``altitude_error <= 0.15 m over [2.5, 4] s: first broken at 2.712 s (tick 678), worst 0.41 (0.26 over)``."""
        if self.passed:
            return f"{self.check.describe()}: worst {_show(self.worst)}{f'; {self.detail}' if self.detail else ''}"
        over = "over" if self.check.side == "max" else "under"
        by = f"worst {_show(self.worst)} ({_show(self.excess)} {over})" if math.isfinite(self.excess) else (
            "never reached" if self.check.measure == "reach" else "never said" if self.check.measure in STATUS_MEASURES
            else "no value in the window")
        said = f"; {self.detail}" if self.detail else ""
        return f"{self.check.describe()}: first broken at {self.first_time:.3f} s (tick {self.first_tick}), {by}{said}"


def _show(value: float) -> str:
    return f"{value:.4g}" if math.isfinite(value) else "never"


def run_tick_s(info: dict) -> float:
    """A run's tick [s], from its run.json (``tick_ns``, or ``tick_hz`` in older runs; 250 Hz by default)."""
    return float(info.get("tick_ns") or 0) * 1e-9 or (1.0 / float(info.get("tick_hz") or 250.0))


class Record:
    """The series a run's record gives, computed once per run for all its checks."""

    def __init__(self, table, info: dict):
        self.info = info
        names = set(table.column_names)

        def col(name: str) -> np.ndarray:
            return table.column(name).to_numpy().astype(np.float64)

        self.time = col("time")
        self._table = table
        self._plane: PlaneRecord | None = None
        self.tick_s = run_tick_s(info)
        origin = np.asarray(info.get("ned_origin_enu_m") or [0.0, 0.0, 0.0], dtype=np.float64)
        pose = [col(f"body/base.pose[{i}]") for i in range(7)]
        east, north, up = (pose[i] - origin[i] for i in range(3))
        self.ned = np.stack([north, east, -up], axis=1)
        self.height = up - up[0]
        qx, qy = pose[3], pose[4]
        self.tilt = np.degrees(np.arccos(np.clip(1.0 - 2.0 * (qx * qx + qy * qy), -1.0, 1.0)))
        self.speed = np.linalg.norm(np.stack([col(f"body/base.velocity[{i}]") for i in range(3)], axis=1), axis=1)
        self.setpoint = None
        if "setpoint.position[0]" in names:
            self.setpoint = np.stack([col(f"setpoint.position[{i}]") for i in range(3)], axis=1)
        self.charge = col("battery.state_of_charge") if "battery.state_of_charge" in names else None
        self.step = col("mission_step") if "mission_step" in names else None
        self.timeouts = col("mission_timeouts") if "mission_timeouts" in names else None
        self.contact = col("contact") if "contact" in names else None
        self.estimate = None  # the estimate's position, NED from the NED origin [m]
        if "estimate.position[0]" in names:
            self.estimate = np.stack([col(f"estimate.position[{i}]") for i in range(3)], axis=1)
        # A run whose estimator writes no status (the truth estimator) never says invalid or faulted.
        self.status = (table.column(STATUS_SIGNAL).to_numpy().astype(np.int64) if STATUS_SIGNAL in names
                       else None)

    @property
    def plane(self) -> PlaneRecord:
        """A plane's series (:mod:`nexus.scenario.plane_checks`), built on first use."""
        if self._plane is None:
            self._plane = PlaneRecord(self.ned, self._table, self.info)
        return self._plane

    def ticks(self, rows: np.ndarray) -> np.ndarray:
        return np.rint(self.time[rows] / self.tick_s).astype(np.int64)

    def series(self, check: Check) -> np.ndarray:
        """The measure at every row (NaN where the record cannot say)."""
        nan = np.full(self.time.shape, math.nan)
        if check.measure in ("position_error", "altitude_error"):
            if self.setpoint is None:
                return nan
            goal = self.setpoint.copy()
            goal[:, 2] = np.minimum(goal[:, 2], self.ned[0, 2])  # a landing goal below the ground counts as ground
            if check.measure == "altitude_error":
                return np.abs(self.ned[:, 2] - goal[:, 2])
            return np.linalg.norm(self.ned - goal, axis=1)
        if check.measure == "tilt":
            return self.tilt
        if check.measure == "speed":
            return self.speed
        if check.measure == "height":
            return self.height
        if check.measure == "battery":
            return self.charge if self.charge is not None else nan
        if check.measure in ("estimate_error_horizontal", "estimate_error_vertical"):
            if self.estimate is None:
                return nan
            error = self.estimate - self.ned
            if check.measure == "estimate_error_vertical":
                return np.abs(error[:, 2])
            return np.hypot(error[:, 0], error[:, 1])
        if check.measure in PLANE_MEASURES:
            return self.plane.series(check.measure)
        raise KeyError(check.measure)


def evaluate(check: Check, record: Record) -> CheckResult:
    """The check's result on one run's record."""
    start, end = check.window
    inside = np.flatnonzero((record.time >= start - 1e-9) & (record.time <= end + 1e-9))
    if check.measure == "reach":
        return _reach(check, record)
    if check.measure == "landing":
        north, east = record.ned[-1, 0], record.ned[-1, 1]
        goal = check.point if check.point is not None else (record.ned[0, 0], record.ned[0, 1])
        value = math.hypot(north - goal[0], east - goal[1])
        return _single(check, record, value, len(record.time) - 1)
    if check.measure == "touchdown_point":
        row = record.plane.touchdown_row()
        return _either(check, record, record.plane.touchdown_point(), len(record.time) - 1 if row is None else row)
    if check.measure == "touchdown_sink":
        sink, tick = record.plane.touchdown_sink()
        row = len(record.time) - 1 if tick is None else int(np.clip(np.searchsorted(
            record.time, tick * record.tick_s - 1e-9), 0, len(record.time) - 1))
        return _either(check, record, sink, row)
    if check.measure == "ended":
        ended = record.info.get("exit_reason") == "done" and float(record.info.get("sim_time_s") or 0.0) <= end + 1e-9
        return _single(check, record, 0.0 if ended else 1.0, inside[-1] if len(inside) else len(record.time) - 1)
    if check.measure == "contact":
        return _contact(check, record, inside)
    if check.measure == "px4_failsafe":
        return _px4_failsafe(check, record)
    if check.measure == "drift":
        return _drift(check, record, inside)
    if check.measure in STATUS_MEASURES:
        return _status_time(check, record, inside)
    if check.measure == "collisions":  # a fleet's run is judged by evaluate_run; this one has one vehicle
        return CheckResult(check, False, math.nan, start, int(round(start / record.tick_s)), math.inf,
                           detail="the run flew one vehicle a world: none to collide with")
    if check.measure == "min_separation":  # a fleet's record is judged by evaluate_run; this one has one vehicle
        return CheckResult(check, False, math.nan, start, int(round(start / record.tick_s)), math.inf,
                           detail="the run flew one vehicle a world: no two to be apart")
    if check.measure == "px4_mission":
        mission = (record.info.get("controller_stats") or {}).get("mission") or record.info.get("mission_file")
        refused = math.nan
        if mission:
            refused = sum(1 for c in mission.get("commands", []) if c.get("result") not in (0, None))
            refused += 0 if mission.get("landed_disarmed") else 1
        return _single(check, record, refused, len(record.time) - 1)
    if check.phases:
        inside = record.plane.in_phases(inside, check.phases)
    values = record.series(check)[inside]
    times = record.time[inside]
    if len(values) == 0 or not np.isfinite(values).any():
        return CheckResult(check, False, math.nan, start, int(round(start / record.tick_s)), math.inf, (times, values))
    bad = ~(values <= check.bound) if check.side == "max" else ~(values >= check.bound)  # NaN breaks it too
    worst = float(np.nanmax(values) if check.side == "max" else np.nanmin(values))
    if not bad.any():
        return CheckResult(check, True, worst, series=(times, values))
    first = int(np.flatnonzero(bad)[0])
    excess = worst - check.bound if check.side == "max" else check.bound - worst
    return CheckResult(check, False, worst, float(times[first]), int(record.ticks(inside[first:first + 1])[0]),
                       float(excess), (times, values))


def _contact(check: Check, record: Record, inside: np.ndarray) -> CheckResult:
    """Touching contact points in the window, but the rest before the first lift-off (and, with ``check.step``,
    from the row that step began on: the landing); a record without ``contact`` fails at the window's start."""
    if record.contact is None or not len(inside):
        start = check.window[0]
        return CheckResult(check, False, math.nan, start, int(round(start / record.tick_s)), math.inf)
    if check.step is not None and record.step is not None:
        began = np.flatnonzero(record.step >= check.step)
        if len(began):
            inside = inside[inside < began[0]]
    values = record.contact[inside]
    airborne = np.flatnonzero(values == 0)
    rest = int(airborne[0]) if len(airborne) else 0  # never lifted off: every touching row counts
    counted = values.copy()
    counted[:rest] = 0.0
    times = record.time[inside]
    worst = float(counted.max()) if len(counted) else 0.0
    bad = np.flatnonzero(counted > check.bound)
    if not len(bad):
        return CheckResult(check, True, worst, series=(times, counted))
    first = int(bad[0])
    return CheckResult(check, False, worst, float(times[first]), int(record.ticks(inside[first:first + 1])[0]),
                       worst - check.bound, (times, counted))


def _px4_failsafe(check: Check, record: Record) -> CheckResult:
    """PX4's failsafe and arming-refusal texts stamped inside the window; a run that kept none of PX4's messages
    fails at the window's start (it cannot say)."""
    start, end = check.window
    messages = record.info.get("px4_messages")
    if messages is None:
        return CheckResult(check, False, math.nan, start, int(round(start / record.tick_s)), math.inf)
    said = [(t, text) for t, text in messages if start - 1e-9 <= t <= end + 1e-9 and FAILSAFE_OR_REFUSAL.search(text)]
    texts = list(dict.fromkeys(text for _, text in said))
    count = float(len(texts))
    times = np.array([t for t, _ in said]) if said else np.array([end])
    values = np.arange(1.0, len(said) + 1.0) if said else np.array([0.0])
    if check.side == "min":  # a failsafe that must happen: at least `bound` texts by the window's end
        if count >= check.bound:
            return CheckResult(check, True, count, series=(times, values), detail=f"PX4 said {texts[0]!r}")
        last = min(end, float(record.time[-1]))  # the window's end, or the run's when it ended sooner
        return CheckResult(check, False, count, last, int(round(last / record.tick_s)), check.bound - count,
                           (times, values), detail="PX4 said " + (f"only {texts!r}" if texts else "no failsafe"))
    if count <= check.bound:
        return CheckResult(check, True, count, series=(times, values))
    first = said[0][0]
    return CheckResult(check, False, count, first, int(round(first / record.tick_s)), count - check.bound,
                       (times, values), detail=f"PX4 said {texts[0]!r}")


def _drift(check: Check, record: Record, inside: np.ndarray) -> CheckResult:
    """The farthest horizontal distance [m], within the window, from where the vehicle was at its start; the
    series is the farthest so far, so a min bound reads its last value (reached by the window's end)."""
    if not len(inside):
        return _either(check, record, math.nan, len(record.time) - 1)
    start = record.ned[inside[0], :2]
    distance = np.hypot(record.ned[inside, 0] - start[0], record.ned[inside, 1] - start[1])
    farthest = np.maximum.accumulate(distance)
    if check.side == "min":
        return _either(check, record, float(farthest[-1]), int(inside[-1]), (record.time[inside], farthest))
    row = np.flatnonzero(farthest > check.bound)
    return _either(check, record, float(farthest[-1]), int(inside[row[0]]) if len(row) else int(inside[-1]),
                   (record.time[inside], farthest))


def _status_time(check: Check, record: Record, inside: np.ndarray) -> CheckResult:
    """The sim time [s] the status bit of ``check.measure`` first reads as the measure says within the window
    (inf: never; a run whose estimator writes no status never says it). Late (max) fails at the window's end,
    early (min) at the row it came."""
    bit, wanted = STATUS_MEASURES[check.measure]
    status = record.status[inside] if record.status is not None else np.full(len(inside), TRUSTED)
    came = np.flatnonzero(((status & bit) != 0) == bool(wanted))
    when = float(record.time[inside[came[0]]]) if len(came) else math.inf
    times = record.time[inside]
    series = (times, np.where(times < when, times, when)) if len(times) else ((), ())
    row = int(inside[came[0]]) if len(came) and check.side == "min" else int(inside[-1]) if len(inside) else -1
    return _either(check, record, when, row, series)


def _either(check: Check, record: Record, value: float, row: int, series=None) -> CheckResult:
    """One value against a max or a min bound, broken at ``row`` (NaN, the run cannot say, fails)."""
    times, values = series if series is not None else (record.time[row:row + 1], np.array([value]))
    good = value <= check.bound if check.side == "max" else value >= check.bound
    if good:
        return CheckResult(check, True, value, series=(times, values))
    excess = value - check.bound if check.side == "max" else check.bound - value
    return CheckResult(check, False, value, float(record.time[row]), int(record.ticks(np.array([row]))[0]),
                       excess, (times, values))


def _single(check: Check, record: Record, value: float, row: int) -> CheckResult:
    times, values = record.time[row:row + 1], np.array([value])
    if value <= check.bound:  # NaN (the run does not say) fails
        return CheckResult(check, True, value, series=(times, values))
    return CheckResult(check, False, value, float(record.time[row]), int(record.ticks(np.array([row]))[0]),
                       value - check.bound, (times, values))


def _reach(check: Check, record: Record) -> CheckResult:
    """The sim time step ``check.step`` ended within its tolerance (inf: never, or by its time limit)."""
    reached = math.inf
    if check.goals is not None:
        reached = _reached_goals(check.goals, record)
    elif record.step is not None:
        after = np.flatnonzero(record.step > check.step)
        if len(after):
            row = int(after[0])
            timed_out = row > 0 and record.timeouts[row] > record.timeouts[row - 1]
            reached = math.inf if timed_out else float(record.time[row])
    late = reached > check.bound
    deadline = min(check.bound, float(record.time[-1]))
    times, values = record.time, np.where(record.time < min(reached, record.time[-1] + 1.0), record.time, reached)
    if not late:
        return CheckResult(check, True, reached, series=(times, values))
    row = int(np.searchsorted(record.time, deadline))
    row = min(row, len(record.time) - 1)
    return CheckResult(check, False, reached, float(record.time[row]), int(record.ticks(np.array([row]))[0]),
                       reached - check.bound, (times, values))


def _reached_goals(goals: tuple, record: Record) -> float:
    """The sim time [s] the vehicle came within tolerance of the last of ``goals`` (north, east, height, tolerance
    [m] each), having come within tolerance of each before it in turn (a PX4 step); inf: never."""
    row = 0
    for north, east, height, tolerance in goals:
        distance = np.sqrt((record.ned[row:, 0] - north) ** 2 + (record.ned[row:, 1] - east) ** 2
                           + (record.height[row:] - height) ** 2)
        near = np.flatnonzero(distance <= tolerance)
        if not len(near):
            return math.inf
        row += int(near[0])
    return float(record.time[row])


def _min_separation(check: Check, worlds: list[Separation], tick_s: float) -> CheckResult:
    """The smallest distance between two vehicles of one world in the window against a min bound; the result
    is the world that broke it first (else the one whose vehicles came closest), and its detail names the two
    vehicles that came closest, when and how close."""
    start, end = check.window
    results = []
    for world in worlds:
        inside = np.flatnonzero((world.time >= start - 1e-9) & (world.time <= end + 1e-9))
        times, values = world.time[inside], world.distance[inside]
        if not len(values) or not np.isfinite(values).any():
            results.append(CheckResult(check, False, math.nan, start, int(round(start / tick_s)), math.inf,
                                       (times, values), tick_s, f"world {world.world} has no two vehicles"))
            continue
        closest = int(inside[np.nanargmin(values)])
        detail = (f"closest: vehicles {world.first[closest]} and {world.second[closest]} of world {world.world}, "
                  f"{world.distance[closest]:.4g} m apart at {world.time[closest]:.3f} s")
        worst = float(world.distance[closest])
        bad = np.flatnonzero(~(values >= check.bound))  # NaN breaks it too
        if not len(bad):
            results.append(CheckResult(check, True, worst, series=(times, values), tick_s=tick_s, detail=detail))
            continue
        first = float(times[bad[0]])
        results.append(CheckResult(check, False, worst, first, int(round(first / tick_s)), check.bound - worst,
                                   (times, values), tick_s, detail))
    return _first_broken(results, check.side)


def _collisions(check: Check, info: dict, tick_s: float) -> CheckResult:
    """The collisions that began in the window (run.json's ``collisions``, nexus.plant.vehicle_collision) against
    a max bound; the detail names the first: its tick, world, the two vehicles and its impulse."""
    start, end = check.window
    log = info.get("collisions")
    if log is None:  # the monitor was not in the ring: nothing says whether they touched
        return CheckResult(check, False, math.nan, start, int(round(start / tick_s)), math.inf, tick_s=tick_s,
                           detail="the run kept no collision log (its vehicles did not share their worlds)")
    events = sorted((e for e in log.get("events", []) if start - 1e-9 <= e["time_s"] <= end + 1e-9),
                    key=lambda e: e["tick"])
    count = len(events)
    times = np.array([e["time_s"] for e in events], dtype=np.float64)
    series = (times, np.arange(1, count + 1, dtype=np.float64))
    if count <= check.bound:
        return CheckResult(check, True, float(count), series=series, tick_s=tick_s)
    first = events[int(check.bound)]  # the one past the bound
    detail = (f"first: vehicles {first['vehicles'][0]} and {first['vehicles'][1]} of world {first['world']} at "
              f"{first['time_s']:.3f} s, {first['impulse_n_s']:.3g} N·s")
    return CheckResult(check, False, float(count), float(first["time_s"]), int(first["tick"]), count - check.bound,
                       series, tick_s, detail)


def _first_broken(results: list[CheckResult], side: str) -> CheckResult:
    """Of one check's results on several vehicles (or worlds): the one that broke it first, else the worst."""
    broken = [r for r in results if not r.passed]
    if broken:
        return min(broken, key=lambda r: math.inf if r.first_time is None else r.first_time)
    return max(results, key=lambda r: r.worst if side == "max" else -r.worst)


def _each_vehicle(check: Check, records: list, labels: list[str]) -> CheckResult:
    """A measure of one vehicle on every vehicle of a fleet: the first to break it, else the worst, named."""
    results = []
    for record, label in zip(records, labels, strict=True):
        result = evaluate(check, record)
        result.detail = f"{label}; {result.detail}" if result.detail else label
        results.append(result)
    return _first_broken(results, check.side)


def evaluate_run(checks, table, info: dict) -> list[CheckResult]:
    """Every check's result on one run's record (a pyarrow table) and its run.json."""
    if is_fleet(table):
        vehicles = vehicle_rows(table, info)
        records = [Record(v.table, v.info) for v in vehicles]
        tick_s, labels = run_tick_s(info), [v.label for v in vehicles]
        apart = separations(table) if any(c.measure == "min_separation" for c in checks) else []
        results = [_min_separation(c, apart, tick_s) if c.measure == "min_separation"
                   else _collisions(c, info, tick_s) if c.measure == "collisions"
                   else _each_vehicle(c, records, labels) for c in checks]
    else:
        record = Record(table, info)
        tick_s = record.tick_s
        results = [evaluate(check, record) for check in checks]
    for result in results:
        result.tick_s = tick_s
    return results
