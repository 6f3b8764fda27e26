"""Monte Carlo variation files: ``nexus run --worlds N --vary FILE.toml``.

A variation file is TOML. Each top-level key names a parameter that some
part of the vehicle or the ring declares it takes (:mod:`nexus.vocab.drawn`;
``nexus params --reader variation`` lists them); its value is a number (the same in every world), a
string for the two string parameters, or a table describing a distribution::

    mass = {dist = "normal", mean = 1.2, std = 0.05, low = 1.0, high = 1.4}
    thrust_scale = {dist = "uniform", low = 0.95, high = 1.05, per_rotor = true}
    start_yaw = {dist = "choice", values = [0, 90, 180, 270], weights = [1, 1, 1, 1]}
    noise_scale = 2.0
    rotor_fail_time = 3.0
    rotor_fail_index = {dist = "choice", values = [0, 1, 2, 3]}
    rotor_fail_probability = 0.25

    [com_x]
    dist = "constant"
    value = 0.01

Distributions: ``normal`` (``mean``, ``std`` >= 0, optional ``low``/``high``
that truncate it: a sample outside them is drawn again from the same
generator, up to 1000 times), ``uniform`` (``low`` <= ``high``), ``choice``
(``values``, optional non-negative ``weights`` of the same length) and
``constant`` (``value``). ``per_rotor = true`` draws one value per rotor for
the parameters that allow it; otherwise one draw is shared by every rotor.
Each table's keys and their types are declared once, in
:mod:`nexus.worlds.variation_tables` (checked with msgspec).

Each distribution is checked whole against its parameter's bounds when the file is read, never draw by
draw (a file that flew with one seed and failed with another): a uniform's ``[low, high]``, a choice's and a
constant's values, and a normal's ``low``/``high`` must lie inside the bounds (their ends included: a draw
that lands exactly on an excluded end is drawn again). A normal has unbounded support: where its parameter is
bounded and the normal gives no ``low``/``high`` of its own on that side, the bound must be at least
:data:`NORMAL_REACH` std from the mean (the tail past it, under 1e-9 of the draws, is drawn again: the
distribution is unchanged in practice); nearer, it is refused, and the fix is to truncate it (``low =`` the
bound). A truncated normal must keep at least :data:`MIN_KEPT` of its draws, so its 1000 tries never run out.

World ``i``'s value of parameter ``name`` comes from the stream
``vary/<name>/<i>`` of the run's :class:`~nexus.core.rng.RngTree`, so it
depends only on the seed, the name and ``i``: world 5 of a 16-world run is
world 5 of a 64-world run. Whether a world gets a fault at all comes from
``vary/rotor_fail_occurs/<i>`` (``vary/sensor_fault_occurs/<i>``: the stream
its owner's :class:`~nexus.vocab.drawn.Occurrence` names); a world without
the fault has its fault time at ``math.inf``.

Every error is a :class:`~nexus.core.errors.BuildError` of one line that
starts with ``FILE:LINE:`` (the line where known), raised before anything runs.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.vocab.drawn import Drawn, Interval
from nexus.vocab.names import VariationNames, unknown_name
from nexus.vocab.types import is_number as _is_number
from nexus.vocab.types import show as _show
from nexus.vocab.types import type_name as _type_name
from nexus.worlds.owners import drawn_parameters, occurrences
from nexus.worlds.variation_tables import read_table

#: How many times a truncated normal redraws a sample outside its bounds before giving up.
MAX_TRUNCATION_TRIES = 1000
#: A normal with no ``low``/``high`` on a side where its parameter is bounded must have that bound this many std
#: from its mean or farther (a draw past it is drawn again: one in 1e9); nearer, it must be truncated.
NORMAL_REACH = 6.0
#: The least share of a truncated normal's draws that must fall inside its bounds (0.97^1000 is 6e-14: the
#: tries never run out).
MIN_KEPT = 0.03



@dataclass(frozen=True)
class Distribution:
    """A parsed distribution; ``values`` holds a choice's values (or a constant's one value)."""

    kind: str
    mean: float = 0.0
    std: float = 0.0
    low: float | None = None
    high: float | None = None
    values: tuple = ()
    weights: tuple[float, ...] | None = None

    def describe(self) -> str:
        if self.kind == "normal":
            bounds = "" if self.low is None and self.high is None else (
                f", bounds [{_show(self.low) if self.low is not None else '-inf'}, "
                f"{_show(self.high) if self.high is not None else 'inf'}]")
            return f"normal(mean={_show(self.mean)}, std={_show(self.std)}{bounds})"
        if self.kind == "uniform":
            return f"uniform({_show(self.low)}, {_show(self.high)})"
        if self.kind == "choice":
            return f"choice of {len(self.values)} values"
        return f"constant {_show(self.values[0])}"

    def sample(self, generator: np.random.Generator, allowed: Interval | None = None) -> object | None:
        """One value, or None when a truncated normal found no sample inside its bounds.

        ``allowed`` (the parameter's bounds) truncates a normal and a uniform too: a draw outside it is drawn
        again (the file's check made that a tail of under 1e-9, or an excluded end hit exactly)."""
        if self.kind == "constant":
            return self.values[0]
        if self.kind == "uniform":
            for _ in range(MAX_TRUNCATION_TRIES):
                value = float(generator.uniform(self.low, self.high))
                if allowed is None or allowed(value):
                    return value
            return None
        if self.kind == "choice":
            if self.weights is None:
                return self.values[int(generator.integers(len(self.values)))]
            cumulative = np.cumsum(self.weights)
            index = int(np.searchsorted(cumulative, generator.random() * cumulative[-1], side="right"))
            return self.values[min(index, len(self.values) - 1)]
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        for _ in range(MAX_TRUNCATION_TRIES):
            value = float(generator.normal(self.mean, self.std))
            if low <= value <= high and (allowed is None or allowed(value)):
                return value
        return None


@dataclass(frozen=True)
class VariationEntry:
    """One parameter of a variation file: where it is, its distribution, whether it draws per rotor."""

    name: str
    line: int | None
    dist: Distribution
    per_rotor: bool = False
    #: The values a draw may take, when narrower than the parameter's own (a gust no longer than the run).
    allowed: Interval | None = None

    @property
    def info(self) -> Drawn:
        return drawn_parameters()[self.name]


@dataclass(frozen=True)
class Variation:
    """A parsed and validated variation file, for a vehicle of ``rotors`` rotors and these ``sensors``."""

    path: Path
    entries: tuple[VariationEntry, ...]
    rotors: int = 4
    sensors: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.entries)

    def draw(self, rng: RngTree, worlds: int) -> list[dict[str, object]]:
        """One dict of values per world: the parameters the file names, plus the fault keys.

        Per-rotor parameters are lists of ``rotors`` floats; a fault's
        probability is spent on its time (``math.inf`` in a world without the
        fault) and is not in the dict. Raises :class:`BuildError` naming the
        world, parameter and value when a draw fails its physical check.
        """
        if not isinstance(rng, RngTree):
            raise BuildError(f"{self.path}: variation draws need an RngTree, got {type(rng).__name__}")
        if not isinstance(worlds, numbers.Integral) or isinstance(worlds, bool) or worlds < 0:
            raise BuildError(f"{self.path}: the number of worlds must be a non-negative integer, got {worlds!r}")
        return [self.draw_world(rng, world) for world in range(int(worlds))]

    def draw_world(self, rng: RngTree, world: int) -> dict[str, object]:
        """World ``world``'s values alone (what :meth:`draw` gives it): its streams ``vary/<name>/<world>`` of
        ``rng``, so a world's values depend on the tree and its index only."""
        vary = rng.child("vary")
        values = {entry.name: self._draw_entry(entry, vary, world) for entry in self.entries}
        for fault in occurrences():
            if fault.time not in values:
                continue
            for key, default in fault.defaults.items():
                values.setdefault(key, default)
            probability = values.pop(fault.probability, 1.0)
            if probability < 1.0 and not vary.child(fault.stream).child(str(world)).generator().random() < probability:
                values[fault.time] = math.inf
        return values

    def _draw_entry(self, entry: VariationEntry, vary: RngTree, world: int) -> object:
        info = entry.info
        generator = vary.child(entry.name).child(str(world)).generator()
        count = self.rotors if entry.per_rotor else 1
        drawn = []
        for rotor in range(count):
            value = entry.dist.sample(generator, entry.allowed or info.interval)
            if value is None:
                raise BuildError(
                    f"{_where(self.path, entry.line)}: world {world}: parameter {entry.name!r}: "
                    f"{MAX_TRUNCATION_TRIES} draws from {entry.dist.describe()} all fell outside its bounds; "
                    "move the mean inside the bounds or widen them")
            problem = info.problem(value, self.rotors)
            if problem is not None:
                which = f" for rotor {rotor}" if entry.per_rotor else ""
                raise BuildError(
                    f"{_where(self.path, entry.line)}: world {world}: parameter {entry.name!r} drew "
                    f"{_show(value)}{which}, but it {problem}; narrow the distribution so every draw passes "
                    f"({_narrowing(entry.dist, info)})")
            drawn.append(value)
        if info.per_rotor_allowed:
            return drawn if entry.per_rotor else drawn * self.rotors
        return drawn[0]


def world_values_problem(values: dict, rotors: int) -> str | None:
    """What is physically wrong with one world's values (as :meth:`Variation.draw` gives them), or None."""
    known = drawn_parameters()
    for name, value in values.items():
        info = known.get(name)
        if info is None:
            return f"{name!r} is not a variation parameter; valid parameters: {', '.join(known)}"
        if info.on_rotors and rotors == 0:
            return f"{name} acts on the vehicle's rotors, and this vehicle has none"
        if info.per_rotor_allowed and isinstance(value, (list, tuple)):
            if len(value) != rotors:
                return f"{name} has {len(value)} values, but the vehicle has {rotors} rotors"
            for rotor, item in enumerate(value):
                problem = info.problem(item, rotors)
                if problem is not None:
                    return f"{name}[{rotor}] = {_show(item)}, but it {problem}"
            continue
        problem = info.problem(value, rotors)
        if problem is not None:
            return f"{name} = {_show(value)}, but it {problem}"
    return None


def load_variation(path: str | Path, *, rotors: int, sensors: Sequence[str],
                   names: VariationNames | None = None, run_s: float | None = None) -> Variation:
    """Parse and validate a variation file for a vehicle with ``rotors`` rotors and these sensor names.

    A vehicle with no rotors (a plane) takes every parameter but those that act on rotors
    (:attr:`~nexus.vocab.drawn.Drawn.on_rotors`), each refused in one line naming it.

    ``run_s``, the run's length [s], bounds the parameters whose values must be no longer than the run
    (``gust_duration``) in the same check, distribution by distribution (None: left to each world's values).

    A key that is no variation parameter's own name is looked up with ``names`` (the runtime hands in the
    vehicle's: :func:`nexus.runtime.params.variation_names`; None: the draws' own names only): an alias of
    one (the base body's ``"/vehicle/body/base physics:mass"`` is ``mass``) is read as it, any other name is
    refused with the one "unknown name" sentence every reader of parameter names gives.
    """
    path = Path(path)
    if not isinstance(rotors, numbers.Integral) or isinstance(rotors, bool) or rotors < 0:
        raise BuildError(f"{path}: a variation needs the vehicle's rotor count (an integer >= 0), got {rotors!r}")
    rotors = int(rotors)
    sensors = tuple(str(name) for name in sensors)
    text = _read(path)
    data = _toml(path, text)
    entries = []
    known = drawn_parameters()
    for name, value in data.items():
        line = _key_line(text, name)
        if name not in known:
            name = _variation_name(path, line, name, names)
        if any(entry.name == name for entry in entries):
            raise BuildError(f"{_where(path, line)}: parameter {name!r} is given twice (under two of its names); "
                             "keep one")
        entries.append(_parse_entry(path, line, name, value, rotors, sensors, run_s))
    by_name = {entry.name: entry for entry in entries}
    faults = occurrences()
    for fault in faults:
        for key in (*fault.defaults, fault.probability):
            if key in by_name and fault.time not in by_name:
                raise BuildError(f"{_where(path, by_name[key].line)}: parameter {key!r} needs {fault.time!r} "
                                 f"(when the fault happens); add {fault.time} to the file")
    for fault in faults:
        for key, what in fault.required.items():
            if fault.time in by_name and key not in by_name:
                choices = f", one of: {_names(sensors)}" if known[key].sensor_name else ""
                raise BuildError(f"{_where(path, by_name[fault.time].line)}: parameter {fault.time!r} needs "
                                 f"{key!r} ({what}); add it{choices}")
    return Variation(path=path, entries=tuple(entries), rotors=rotors, sensors=sensors)


def check_distributions(path: str | Path) -> None:
    """Check each distribution of a variation file against its parameter's bounds, without a vehicle.

    For a file a sweep or a scenario matrix names: its mistakes are refused before any point flies, not in
    each point's run. Only the keys that are a parameter's own name are checked here; the rest (another name
    of one, a rotor index, a sensor name) needs the vehicle and is checked when a run loads the file.
    """
    path = Path(path)
    text = _read(path)
    known = drawn_parameters()
    for name, value in _toml(path, text).items():
        if name in known and isinstance(value, dict):
            _parse_table(f"{_where(path, _key_line(text, name))}: parameter {name!r}", known[name], value)


# -- parsing -----------------------------------------------------------------------------------------------------

def _toml(path: Path, text: str) -> dict:
    """The file's TOML, or one line naming the line at fault."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        found = re.search(r"at line (\d+)", str(error))
        if found:
            line = int(found.group(1))
        else:  # "at end of document": a value or table left open; name the file's last line of text
            line = max((number for number, row in enumerate(text.splitlines(), 1) if row.strip()), default=1)
        raise BuildError(f"{_where(path, line)}: not valid TOML: {error}; fix the syntax there") from None


def _variation_name(path: Path, line: int | None, name: str, names: VariationNames | None) -> str:
    """The variation parameter that ``name`` (an alias, or a canonical attribute name) stands for."""
    try:
        return own_name(name, names)
    except BuildError as error:
        raise BuildError(f"{_where(path, line)}: {error}") from None


def own_name(name: str, names: VariationNames | None) -> str:
    """The variation parameter ``name`` stands for, as ``names`` says; without ``names`` only a parameter's own
    name is one, and any other gets the unknown-name sentence over the draws' names."""
    if names is not None:
        return names(name)
    known = drawn_parameters()
    if name in known:
        return name
    raise BuildError(unknown_name(name, known))


def _where(path: Path, line: int | None) -> str:
    return f"{path}:{line}" if line is not None else f"{path}"


def _read(path: Path) -> str:
    if path.is_dir():
        raise BuildError(f"{path}: is a directory, not a variation file; give the path of a .toml file")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise BuildError(f"{path}: no such variation file; check the path given to --vary") from None
    except PermissionError as error:
        raise BuildError(f"{path}: the variation file cannot be read ({error.strerror}); "
                         "check its permissions") from None
    except OSError as error:
        raise BuildError(f"{path}: the variation file cannot be read ({error.strerror or error}); "
                         "check the path given to --vary") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[:error.start].count(b"\n") + 1
        raise BuildError(f"{path}:{line}: the variation file is not UTF-8 text; save it as UTF-8 TOML") from None


def _key_line(text: str, name: str) -> int | None:
    """The line of top-level key ``name``: ``name = ...``/``name.x = ...`` before any table, or a ``[name]`` header."""
    key = rf"(?:{re.escape(name)}|\"{re.escape(name)}\"|'{re.escape(name)}')"
    assignment = re.compile(rf"[ \t]*{key}[ \t]*[=.]")
    header = re.compile(rf"[ \t]*\[\[?[ \t]*{key}[ \t]*[\].]")
    in_table = False
    for number, line in enumerate(text.split("\n"), 1):
        if re.match(r"[ \t]*\[", line):
            in_table = True
            if header.match(line):
                return number
        elif not in_table and assignment.match(line):
            return number
    return None


def _names(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "(the vehicle has no sensors)"


def _scalar(context: str, info: Drawn, value, what: str) -> object:
    """A value of the parameter's kind, from the file: a float, a rotor index or a name."""
    if info.kind == "str":
        if not isinstance(value, str):
            raise BuildError(f"{context}: {what} must be a string (a name), not {_type_name(value)}")
        return value
    if info.kind == "int":
        if not isinstance(value, int) or isinstance(value, bool):
            raise BuildError(f"{context}: {what} must be an integer (a rotor index), not {_type_name(value)}")
        return int(value)
    if not _is_number(value):
        raise BuildError(f"{context}: {what} must be a number, not {_type_name(value)}")
    if not math.isfinite(value):
        raise BuildError(f"{context}: {what} must be finite, not {value}")
    return float(value)


def _narrowing(dist: Distribution, info: Drawn) -> str:
    if dist.kind == "normal":
        return f"give the normal low/high bounds inside the valid range, {info.check}"
    if dist.kind == "uniform":
        return f"move the uniform's low/high inside the valid range, {info.check}"
    return f"keep every value inside the valid range, {info.check}"


def _within_run(info: Drawn, run_s: float | None) -> Drawn:
    """``info`` with its upper bound at the run's length [s] when its values must be no longer than the run."""
    bounds = info.interval
    if not info.at_most_run or run_s is None or bounds is None or bounds.high <= run_s:
        return info
    return replace(info, check=f"{info.check} ({run_s:g} s)",
                   accepts=Interval(bounds.low, float(run_s), bounds.open_low, False))


def _parse_entry(path: Path, line: int | None, name: str, value, rotors: int,
                 sensors: tuple[str, ...], run_s: float | None = None) -> VariationEntry:
    info = _within_run(drawn_parameters()[name], run_s)
    context = f"{_where(path, line)}: parameter {name!r}"
    if info.on_rotors and rotors == 0:
        raise BuildError(f"{context} acts on the vehicle's rotors, and this vehicle has none (a plane's propeller "
                         "is not a rotor); remove it")
    if isinstance(value, dict):
        dist, per_rotor = _parse_table(context, info, value)
    elif _is_number(value) or isinstance(value, str):
        dist, per_rotor = Distribution("constant", values=(_scalar(context, info, value, "its value"),)), False
    else:
        example = ('"Imu" or a table such as {dist = "choice", values = ["Imu", "Gps"]}' if info.kind == "str" else
                   '2 or a table such as {dist = "choice", values = [0, 1]}' if info.kind == "int" else
                   'a number or a table such as {dist = "normal", mean = 1.0, std = 0.1}')
        raise BuildError(f"{context} must be {example}, not {_type_name(value)}")
    for candidate in dist.values:
        what = (f"{context} = {_show(candidate)}" if dist.kind == "constant"
                else f"{context}: choice value {_show(candidate)}")
        if info.sensor_name and candidate not in sensors:
            close = difflib.get_close_matches(candidate, sensors, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ";"
            raise BuildError(f"{what} is not a sensor of this vehicle{hint} valid names: {_names(sensors)}")
        problem = info.problem(candidate, rotors)
        if problem is not None:
            raise BuildError(f"{what}, but it {problem}; change it")
    allowed = info.interval if info is not drawn_parameters()[name] else None
    return VariationEntry(name=name, line=line, dist=dist, per_rotor=per_rotor, allowed=allowed)


def _normal_share(mean: float, std: float, low: float, high: float) -> float:
    """The share of normal(mean, std) draws inside [low, high]."""
    if std == 0:
        return 1.0 if low <= mean <= high else 0.0
    cdf = lambda x: 0.5 * math.erfc(-(x - mean) / (std * math.sqrt(2.0)))  # noqa: E731
    return max(cdf(high) - cdf(low), 0.0)


def _within_bounds(context: str, info: Drawn, dist: Distribution) -> Distribution:
    """``dist``, when its whole support lies inside the parameter's bounds (else one line saying what to change).

    Checked once per distribution, so no seed decides whether a file flies. A parameter whose check is no
    :class:`Interval` (a plugin's own) has each draw checked instead."""
    bounds = info.interval
    if bounds is None:
        return dist
    unit = f" [{info.unit}]" if info.unit and info.unit != "-" else ""
    must = f"each value of {info.name} must be {info.check}{unit}"
    if dist.kind == "uniform":
        if dist.low < bounds.low:
            raise BuildError(f"{context}: {dist.describe()} draws values below {_show(bounds.low)}, but {must}; "
                             f"give low = {_show(bounds.low)} or more")
        if dist.high > bounds.high:
            raise BuildError(f"{context}: {dist.describe()} draws values above {_show(bounds.high)}, but {must}; "
                             f"give high = {_show(bounds.high)} or less")
        return dist
    if dist.low is not None and dist.low < bounds.low:
        raise BuildError(f"{context}: {dist.describe()} is truncated below {_show(bounds.low)}, but {must}; "
                         f"give low = {_show(bounds.low)} or more")
    if dist.high is not None and dist.high > bounds.high:
        raise BuildError(f"{context}: {dist.describe()} is truncated above {_show(bounds.high)}, but {must}; "
                         f"give high = {_show(bounds.high)} or less")
    reach = NORMAL_REACH * dist.std
    if dist.low is None and dist.mean - reach < bounds.low:
        raise BuildError(f"{context}: {dist.describe()} has no low and draws values below {_show(bounds.low)} "
                         f"(its mean is {_show((dist.mean - bounds.low) / dist.std if dist.std else 0.0)} std above "
                         f"it, under {NORMAL_REACH:g}), but {must}; truncate it with low = {_show(bounds.low)} "
                         "(draws below are drawn again), or narrow std")
    if dist.high is None and dist.mean + reach > bounds.high:
        raise BuildError(f"{context}: {dist.describe()} has no high and draws values above {_show(bounds.high)} "
                         f"(its mean is {_show((bounds.high - dist.mean) / dist.std if dist.std else 0.0)} std below "
                         f"it, under {NORMAL_REACH:g}), but {must}; truncate it with high = {_show(bounds.high)} "
                         "(draws above are drawn again), or narrow std")
    low = bounds.low if dist.low is None else max(dist.low, bounds.low)
    high = bounds.high if dist.high is None else min(dist.high, bounds.high)
    kept = _normal_share(dist.mean, dist.std, low, high)
    if kept < MIN_KEPT:
        raise BuildError(f"{context}: {dist.describe()} keeps a share {kept:.3g} of its draws inside [{_show(low)}, "
                         f"{_show(high)}], under {MIN_KEPT:g}: most draws would be drawn again and some world would "
                         "get none; move the mean inside the bounds or widen them")
    return dist


def _parse_table(context: str, info: Drawn, table: dict) -> tuple[Distribution, bool]:
    given = read_table(context, table)  # its keys and their types (nexus.worlds.variation_tables)
    kind = table["dist"]
    per_rotor = given.per_rotor
    if per_rotor and not info.per_rotor_allowed:
        allowed_names = [p.name for p in drawn_parameters().values() if p.per_rotor_allowed]
        raise BuildError(f"{context}: per_rotor = true is allowed only for {', '.join(allowed_names)}; "
                         "remove it")
    if kind in ("normal", "uniform") and info.kind != "float":
        if info.kind == "int":
            raise BuildError(f"{context}: a rotor index cannot come from a {kind} distribution; use choice, "
                             'e.g. {dist = "choice", values = [0, 1, 2, 3]}')
        raise BuildError(f"{context} is a name and cannot come from a {kind} distribution; use a string or "
                         'choice, e.g. {dist = "choice", values = ["a", "b"]}')
    if kind == "normal":
        mean, std, low, high = given.mean, given.std, given.low, given.high
        if low is not None and high is not None and low > high:
            raise BuildError(f"{context}: 'low' ({_show(low)}) is above 'high' ({_show(high)}); swap them")
        return _within_bounds(context, info, Distribution("normal", mean=mean, std=std, low=low, high=high)), \
            per_rotor
    if kind == "uniform":
        low, high = given.low, given.high
        if low > high:
            raise BuildError(f"{context}: 'low' ({_show(low)}) is above 'high' ({_show(high)}); swap them")
        return _within_bounds(context, info, Distribution("uniform", low=low, high=high)), per_rotor
    if kind == "constant":
        return Distribution("constant", values=(_scalar(context, info, given.value, "'value'"),)), per_rotor
    values = tuple(_scalar(context, info, v, f"choice value {v!r}") for v in given.values)
    weights = None
    if given.weights is not None:
        if len(given.weights) != len(values):
            raise BuildError(f"{context}: a choice's 'weights' must be an array of {len(values)} numbers, one per "
                             f"value; got {len(given.weights)} weights")
        weights = tuple(given.weights)
        if any(w < 0 for w in weights):
            raise BuildError(f"{context}: a choice's 'weights' must be >= 0; got {', '.join(map(_show, weights))}")
        if sum(weights) <= 0:
            raise BuildError(f"{context}: a choice's 'weights' must not all be 0; give some value a weight > 0")
    return Distribution("choice", values=values, weights=weights), per_rotor
