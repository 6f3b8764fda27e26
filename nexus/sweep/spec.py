"""The sweep file (TOML): what every point shares, what varies, and how (a grid or seeded random draws).

A sweep file is data: it is parsed with :mod:`tomllib`, its tables checked against
:class:`SweepFile` (msgspec, :mod:`nexus.vocab.data_file`) and its axes field by
field against RunConfig and the vehicle; nothing in it is evaluated. Example::

    [run]                      # what every point flies: any RunConfig field
    mission = "short"
    device = "cpu"

    [grid]                     # the cross product of these lists
    seed = [0, 1, 2, 3, 4, 5, 6, 7]
    "/vehicle/controller nexus:hoverThrust" = [0.56, 0.572]

or, instead of ``[grid]``, N seeded draws::

    [random]
    count = 16                 # points drawn
    random_seed = 1            # seed of the draws (not the runs' seed)
    seed = {low = 0, high = 1000}                 # whole numbers: inclusive, uniform
    tick_hz = {values = [200.0, 250.0, 500.0]}    # one of these
    "/vehicle/controller nexus:hoverThrust" = {low = 0.55, high = 0.59}   # uniform [low, high)

An axis is a :class:`~nexus.runtime.config.RunConfig` field (``seed``, ``controller``,
``mission``, ``tick_hz``, ``duration``, ``vary`` with ``worlds``, ...) or a
USD attribute, written ``"<prim path> <attribute name>"``, of the vehicle or
the scene (applied through an override layer in the run's folder:
:mod:`nexus.sweep.overrides`); a vehicle attribute may also go by its short
name (``mass``, ``rotor1.kt``): ``nexus params --vehicle V`` lists every name
a sweep reads (:mod:`nexus.runtime.params`). Relative paths (``vary``, ``vehicle``,
``scene``, ``px4.binary``) are taken from the sweep file's folder.

A ``[px4]`` table (with ``controller = "px4"``) starts the user's PX4 SITL
for each point: :mod:`nexus.sweep.px4_fleet`.

Every error is a :class:`SweepError` of one line naming the file and the key.
"""

from __future__ import annotations

import os
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Annotated, Any

import msgspec

from nexus.control.registry import controllers, import_plugins
from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.runtime.params import parameters
from nexus.vocab import data_file
from nexus.vocab.data_file import MISSING, Count, Positive, Problem, fix
from nexus.vocab.settings import choices_of, out_of_bounds
from nexus.vocab.types import fits_type, type_text
from nexus.worlds.variation import check_distributions

#: A sweep of more points than this needs ``--yes`` (a typo in a grid multiplies quickly).
MAX_POINTS_WITHOUT_YES = 1000
#: ``px4.mission``: ``nexus`` flies ``nexus px4 mission``; ``none`` flies to the run's duration.
PX4_MISSIONS = ("nexus", "none")


# -- the file's declaration: its tables and their fixed keys (checked by nexus.vocab.data_file) ------------------
# [run]'s keys are RunConfig's fields and [grid]'s and [random]'s axes are fields or USD attributes: their names
# and values are checked against RunConfig and the vehicle below, not declared here.

#: A PX4 parameter's or an environment variable's value.
_Setting = str | int | float


class _Random(msgspec.Struct):
    """``[random]``'s own keys (every other key is an axis)."""

    count: Annotated[int, msgspec.Meta(ge=1), fix("give the number of points to draw, 1 or more")]
    random_seed: Annotated[Count, fix("give a whole number, 0 or more")] = 0


#: The fix of a ``[px4]`` without its binary.
_BINARY = ("binary = \"PATH\" is required: your PX4 build's bin/px4 (build/px4_sitl_default/bin/px4); Nexus "
           "never ships or builds PX4")


class _Px4(msgspec.Struct, forbid_unknown_fields=True):
    """``[px4]``: the user's PX4 SITL build and how each point flies it."""

    binary: Annotated[str, fix(_BINARY)]
    model: Annotated[str, fix("model must be a string")] = "none_iris"
    rootfs: Annotated[str | None, fix("rootfs must be a path")] = None
    params: Annotated[dict[str, _Setting], fix("params must be a table of names to numbers or strings")] = {}
    env: Annotated[dict[str, _Setting], fix("env must be a table of names to numbers or strings")] = {}
    mission: Annotated[str, fix("mission must be a string")] = "nexus"
    command: Annotated[Annotated[list[str], msgspec.Meta(min_length=1)] | None,
                       fix("command must be a list of strings (the program and its arguments; no shell), e.g. "
                           "[\"python3\", \"fly.py\", \"{mavlink_url}\"]")] = None
    boot_timeout: Annotated[Positive, fix("boot_timeout must be a positive number of seconds")] = 60.0


class SweepFile(msgspec.Struct, forbid_unknown_fields=True):
    """A sweep file as declared: its four tables (``[grid]`` or ``[random]``, not both)."""

    run: dict[str, Any] = {}
    grid: Annotated[dict[str, list[Any]] | None, fix("give a list of values, e.g. [1, 2]")] = None
    random: _Random | None = None
    px4: _Px4 | None = None


#: Tables a sweep file may hold.
TABLES = data_file.fields_of(SweepFile)
#: Keys of ``[random]`` that are not axes.
RANDOM_KEYS = data_file.fields_of(_Random)
#: Keys of ``[px4]``.
PX4_KEYS = data_file.fields_of(_Px4)


def _sentence(problem: Problem) -> str:
    """The first thing the declaration refuses, as the sweep file's checks of old worded it."""
    table = problem.parts[0]
    if problem.kind == "unknown" and len(problem.parts) == 1:
        return f"unknown table or key {problem.name!r}; a sweep file holds [{'], ['.join(TABLES)}]"
    if len(problem.parts) == 1:
        return f"{table} must be a table ([{table}])"
    if problem.kind == "unknown":
        return f"[{table}]: unknown key {problem.name!r}; [{table}] takes {', '.join(problem.allowed)}"
    if table in ("random", "grid"):
        return f"[{table}]: {problem.name} = {None if problem.value is MISSING else problem.value!r}: {problem.fix}"
    return f"[{table}]: {problem.fix}"
#: RunConfig fields whose string value is a path when it looks like one.
PATH_FIELDS = ("vehicle", "scene", "vary")


class SweepError(BuildError):
    """A sweep file, or a sweep's options, that cannot run: found before any run starts."""

    reason = "bad-sweep"


@dataclass
class Axis:
    """One varied thing: a RunConfig field (``attribute`` None) or ``prim`` + ``attribute`` of a USD file."""

    key: str
    #: Grid: the values in order. Random: None (see ``draw``).
    values: list | None = None
    #: Random: ``{"low", "high"}`` or ``{"values"}``.
    draw: dict | None = None
    prim: str | None = None
    attribute: str | None = None

    @property
    def is_attribute(self) -> bool:
        return self.attribute is not None


@dataclass
class Px4Settings:
    """``[px4]``: the user's PX4 SITL build and how each point flies it."""

    binary: Path
    model: str = "none_iris"
    rootfs: Path | None = None
    #: Extra PX4 parameters on top of those ``nexus px4 params`` derives, name -> value.
    params: dict = field(default_factory=dict)
    #: Extra environment variables for PX4.
    env: dict = field(default_factory=dict)
    mission: str = "nexus"
    #: A user command (argument list; ``{mavlink_url}``, ``{instance}``, ``{run_dir}`` filled in); needs --allow-commands.
    command: list[str] | None = None
    #: How long PX4 may take to connect [s wall].
    boot_timeout: float = 60.0

    def as_dict(self) -> dict:
        return {"binary": str(self.binary), "model": self.model, "rootfs": str(self.rootfs) if self.rootfs else None,
                "params": dict(self.params), "env": dict(self.env), "mission": self.mission,
                "command": list(self.command) if self.command else None, "boot_timeout": self.boot_timeout}


@dataclass
class SweepSpec:
    path: Path
    #: RunConfig fields every point shares (paths resolved).
    base: dict
    axes: list[Axis]
    #: ``grid`` or ``random``.
    mode: str
    count: int = 0
    random_seed: int = 0
    px4: Px4Settings | None = None


def _fail(path: Path, text: str) -> SweepError:
    return SweepError(f"{path}: {text}")


def _run_fields() -> dict[str, Any]:
    return {f.name: f for f in fields(RunConfig)}


def _hints() -> dict[str, Any]:
    return typing.get_type_hints(RunConfig)


def _choices(name: str) -> tuple[str, ...] | None:
    """The values RunConfig field ``name`` may take (its ``choices``), or None when any of its type will do."""
    return choices_of(_run_fields()[name])


def check_field_value(path: Path, where: str, name: str, value: Any) -> Any:
    """A RunConfig field's value from the file, type-checked (an int for a float field becomes a float).

    ``controller_options`` is a table here; the controller's options class checks it when the points are made.
    """
    hint = _hints()[name]
    if name == "controller_options":
        hint = dict
    if not fits_type(value, hint):
        raise _fail(path, f"{where}: {name} = {value!r} is not of type {type_text(hint, none=False)}")
    choices = _choices(name)
    if choices is not None and value not in choices:
        raise _fail(path, f"{where}: {name} = {value!r}; choose one of {', '.join(choices)}")
    if (bounds := out_of_bounds(_run_fields()[name], value)) is not None:
        raise _fail(path, f"{where}: {name} = {value!r} is out of bounds; {bounds}")
    if isinstance(value, int) and not isinstance(value, bool) and hint is float:
        value = float(value)
    if name == "controller_options":
        value = {key: resolve_path(path, item, False) if key in _controller_path_options() and isinstance(item, str)
                 else item for key, item in value.items()}
    if name in PATH_FIELDS and isinstance(value, str):
        value = resolve_path(path, value, name != "vary")
        if name == "vary" and not Path(value).is_file():
            raise _fail(path, f"{where}: vary = {value!r}: no such variation file")
        if name == "vary":  # its distributions against their bounds: refused here, not in each point's run
            try:
                check_distributions(value)
            except BuildError as error:
                raise _fail(path, f"{where}: {error}") from None
    return value


def _controller_path_options() -> set[str]:
    """The names of every controller option that is a file (``option(path=True)``: ``model`` of the policy, ...)."""
    return {f.name for c in controllers().values() for f in fields(c.options) if f.metadata.get("path")}


def resolve_path(path: Path, value: str, may_be_name: bool) -> str:
    """``value`` as a path from the sweep file's folder, when it looks like a path (a shipped name stays)."""
    looks_like_path = "/" in value or value.endswith((".usda", ".usd", ".usdc", ".toml"))
    if may_be_name and not looks_like_path:
        return value
    candidate = Path(value).expanduser()
    if not candidate.is_absolute():
        candidate = path.parent / candidate
    return str(candidate.resolve())


def _split_attribute(path: Path, where: str, key: str) -> tuple[str, str]:
    prim, _, attribute = key.partition(" ")
    attribute = attribute.strip()
    if not prim.startswith("/") or not attribute or " " in attribute:
        raise _fail(path, f"{where}: {key!r}: an attribute axis is \"<prim path> <attribute name>\", "
                          "e.g. \"/vehicle/controller nexus:hoverThrust\"")
    return prim, attribute


#: ``vehicle`` for :func:`_axis` when the sweep varies the vehicle: a short name then has no one attribute.
VARIED_VEHICLE = object()


def _axis(path: Path, where: str, key: str, known: dict, vehicle=None) -> Axis:
    """A RunConfig field, a ``"<prim path> <attribute>"``, or a short name of ``vehicle``'s (``mass``, ``rotor1.kt``).

    A short name is resolved by :mod:`nexus.runtime.params` to the attribute it sets; an unknown name gets
    its one "unknown name" sentence.
    """
    if key.startswith("/"):
        prim, attribute = _split_attribute(path, where, key)
        return Axis(key, prim=prim, attribute=attribute)
    if key in known:
        return Axis(key)
    try:
        entry = parameters(None if vehicle is VARIED_VEHICLE else vehicle).resolve(key, "sweep")
    except BuildError as error:
        raise _fail(path, f"{where}: {error}") from None
    if vehicle is VARIED_VEHICLE:
        raise _fail(path, f"{where}: {key!r} is the short name of {entry.name!r}, but the sweep varies the "
                          "vehicle; write the attribute itself, \"<prim path> <attribute name>\"")
    prim, attribute = _split_attribute(path, where, entry.name)
    return Axis(entry.name, prim=prim, attribute=attribute)


def _sweep_vehicle(path: Path, data: dict):
    """The vehicle whose short parameter names the file may use: [run]'s, the default, or VARIED_VEHICLE."""
    if any(isinstance(data.get(t), dict) and "vehicle" in data[t] for t in ("grid", "random")):
        return VARIED_VEHICLE
    vehicle = data.get("run", {}).get("vehicle")
    return resolve_path(path, vehicle, True) if isinstance(vehicle, str) else None


def _load(path: Path) -> dict:
    """The file's TOML, checked against :class:`SweepFile`."""
    def invalid(error: Exception) -> SweepError:
        if isinstance(error, UnicodeDecodeError):
            return SweepError(f"{path}: not a text file; a sweep file is TOML")
        return SweepError(f"{path}: not valid TOML ({error})")

    data = data_file.read_toml(path, unreadable=lambda error: SweepError(f"cannot read the sweep file {path} "
                                                                        f"({error.strerror})"), invalid=invalid)
    data_file.check(data, SweepFile, lambda problem: _fail(path, _sentence(problem)))
    return data


def parse(path: str | Path) -> SweepSpec:
    """Read and check a sweep file; raises :class:`SweepError` (one line) on anything wrong."""
    path = Path(path)
    data = _load(path)
    known = _run_fields()
    base = {}
    plugins = data.get("run", {}).get("plugins", [])
    if not isinstance(plugins, list):
        raise _fail(path, f"[run]: plugins = {plugins!r}: give a list of module names, e.g. [\"my_controllers\"]")
    try:
        import_plugins(plugins, "[run] plugins")  # first: a plugin may register a controller the file names
    except BuildError as error:
        raise _fail(path, str(error)) from None
    vehicle = _sweep_vehicle(path, data)
    for key, value in data.get("run", {}).items():
        if key not in known:
            axis = _axis(path, "[run]", key, known, vehicle)  # an unknown name raises
            what = f"names the attribute {axis.key!r}" if axis.key != key else "is an attribute"
            raise _fail(path, f"[run]: {key!r} {what}; [run] holds RunConfig fields: vary it in [grid] or "
                              "[random] (a one-value list in [grid] sets it for every point)")
        base[key] = check_field_value(path, "[run]", key, value)
    if ("grid" in data) == ("random" in data):
        raise _fail(path, "give exactly one of [grid] (the cross product of lists) or [random] (seeded draws)")
    axes: list[Axis] = []
    if "grid" in data:
        mode, count, random_seed = "grid", 0, 0
        for key, values in data["grid"].items():
            axis = _axis(path, "[grid]", key, known, vehicle)
            if not values:
                raise _fail(path, f"[grid]: {key} = []: an empty list makes an empty grid (no points)")
            if not axis.is_attribute:
                values = [check_field_value(path, "[grid]", key, v) for v in values]
            axis.values = values
            axes.append(axis)
        if not axes:
            raise _fail(path, "[grid] is empty: it varies nothing (no points)")
    else:
        mode = "random"
        table = data["random"]
        count, random_seed = table["count"], table.get("random_seed", 0)
        for key, spec in table.items():
            if key in RANDOM_KEYS:
                continue
            axis = _axis(path, "[random]", key, known, vehicle)
            axis.draw = _check_draw(path, key, spec, axis, known)
            axes.append(axis)
        if not axes:
            raise _fail(path, "[random] varies nothing: add an axis, e.g. seed = {low = 0, high = 1000}")
    names = [a.key for a in axes]
    twice = [n for i, n in enumerate(names) if n in names[:i]]
    if twice:
        raise _fail(path, f"{twice[0]!r} is varied twice (under two of its names); keep one axis")
    both = [n for n in names if n in base]
    if both:
        raise _fail(path, f"{both[0]} is both in [run] and varied; keep it in one place")
    px4 = _px4(path, data["px4"]) if "px4" in data else None
    return SweepSpec(path, base, axes, mode, count, random_seed, px4)


def _check_draw(path: Path, key: str, spec: Any, axis: Axis, known: dict) -> dict:
    where = "[random]"
    if isinstance(spec, list):
        spec = {"values": spec}
    if not isinstance(spec, dict) or not (set(spec) == {"values"} or set(spec) == {"low", "high"}):
        raise _fail(path, f"{where}: {key} = {spec!r}: give {{low = A, high = B}} or {{values = [...]}}")
    if "values" in spec:
        values = spec["values"]
        if not isinstance(values, list) or not values:
            raise _fail(path, f"{where}: {key}: values must be a non-empty list")
        if not axis.is_attribute:
            spec = {"values": [check_field_value(path, where, key, v) for v in values]}
        return spec
    low, high = spec["low"], spec["high"]
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high))
    if not numbers or low > high:
        raise _fail(path, f"{where}: {key}: low and high must be numbers with low <= high (got {low!r}, {high!r})")
    if not axis.is_attribute:
        hint = _hints()[key]
        if fits_type(low, int) and fits_type(high, int) and fits_type(0, hint):
            pass  # whole-number field: drawn inclusive
        elif not fits_type(0.5, hint):
            raise _fail(path, f"{where}: {key} is of type {type_text(hint, none=False)}; draw it from whole-number "
                              "bounds or from a list of values")
        for end, value in (("low", low), ("high", high)):
            if (bounds := out_of_bounds(_run_fields()[key], value)) is not None:
                raise _fail(path, f"{where}: {key}: {end} = {value!r} is out of bounds; {bounds}")
    return {"low": low, "high": high}


def _px4(path: Path, table: dict) -> Px4Settings:
    """``[px4]``'s settings (the table's keys and types were checked by :class:`SweepFile`): the binary is a
    program, the mission one Nexus flies."""
    given = msgspec.convert(table, _Px4, strict=True)
    if not given.binary:
        raise _fail(path, f"[px4]: {_BINARY}")
    resolved = Path(resolve_path(path, given.binary, False))
    if not resolved.is_file():
        raise _fail(path, f"[px4]: binary {resolved} does not exist; build PX4 SITL (make px4_sitl_default) "
                          "and give its bin/px4")
    if not os.access(resolved, os.X_OK):
        raise _fail(path, f"[px4]: binary {resolved} is not executable (chmod +x, or give PX4's bin/px4)")
    if given.mission not in PX4_MISSIONS:
        raise _fail(path, f"[px4]: mission = {given.mission!r}; choose one of {', '.join(PX4_MISSIONS)} "
                          "(or give a command)")
    rootfs = Path(resolve_path(path, given.rootfs, False)) if given.rootfs is not None else None
    return Px4Settings(resolved, given.model, rootfs, dict(given.params), dict(given.env), given.mission,
                       list(given.command) if given.command else None, float(given.boot_timeout))
