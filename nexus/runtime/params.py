"""Every name a vehicle's parameters go by, resolved in one place: ``nexus params --vehicle V`` lists them.

A parameter used to have up to four names: the USD attribute a sweep sets
(``"/vehicle/controller nexus:positionP"``), the variation file's name
(``mass``, ``thrust_scale``), the differentiable rollout's name (``pid.kp_z``,
``rotor1.kt``, ``esc.tau_up``) and the spec's own key. :func:`parameters`
builds, for one vehicle, one table of :class:`ParamEntry` rows: the canonical
name plus its aliases, what it sets, its unit and bounds, and which readers
take it:

* ``sweep``: an axis of a sweep file (a :class:`~nexus.runtime.flight.RunConfig` field
  or a vehicle attribute, written through an override layer);
* ``variation``: a top-level key of a variation file (``nexus run --vary``);
* ``gradient``: a parameter of :class:`nexus.diff.Rollout` (``Rollout.slot``,
  ``nexus optimize --params``).

The rows come from where their metadata lives: every Nexus prim's spec
parameters (:class:`nexus.core.spec.Param`: attribute, unit, bounds, doc), the
drawn parameters each owner declares beside its class (:mod:`nexus.worlds.drawn`:
unit, check, kind, and the owner: the part a drawn value goes to), the rollout's names (:mod:`nexus.diff.params`) and the fields of
:class:`~nexus.runtime.flight.RunConfig`. This module only adds the links between them:

* :data:`VARIATION_ATTRIBUTES`: a variation name that sets a USD attribute
  outright (``mass`` is the base body's ``physics:mass``);
* :data:`PHYSICS_ATTRIBUTES`: the UsdPhysics attributes of the base body the
  rollout differentiates (they have no Nexus spec);
* :func:`_gradient_rows`: which attribute each rollout name sets.

A new alias goes into one of these three. An unknown name gets the one
sentence of :func:`unknown_name`, with the same "did you mean" wherever it
was written (a variation file, a sweep axis, ``nexus optimize --params``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

from nexus.core.errors import BuildError

#: Who reads a name, in the order ``nexus params`` shows them.
READERS = ("sweep", "variation", "gradient")

#: Variation names that set one attribute of the base body outright (not a multiplier, an offset or a draw).
VARIATION_ATTRIBUTES = {"mass": "physics:mass"}

#: UsdPhysics attributes of the base body the rollout sets: attribute -> (unit, bounds, doc).
PHYSICS_ATTRIBUTES = {
    "physics:mass": ("kg", "> 0", "the base body's mass"),
    "physics:diagonalInertia": ("kg m^2", ">= 0", "the base body's principal moments of inertia, body frame"),
}

#: The rollout's start-state names: name -> (unit, doc). They set the base's state at tick 0, no attribute.
INITIAL_STATE = {
    **{f"init.{axis}": ("m", f"the base's initial position along {axis}, world ENU") for axis in "xyz"},
    **{f"init.v{axis}": ("m/s", f"the base's initial velocity along {axis}, world ENU") for axis in "xyz"},
}

#: The rollout's per-rotor name -> the propeller spec's parameter key it is.
ROTOR_NAMES = {"kt": "thrust_coefficient"}
#: The rollout's shared ESC names (``esc.<key>``) are the ESC spec's keys.
ESC_NAMES = ("tau_up", "tau_down")

_VECTOR = {"xx": 0, "yy": 1, "zz": 2}


@dataclass(frozen=True)
class ParamEntry:
    """One parameter of a vehicle: its canonical name, aliases, what it sets, unit, bounds and readers.

    ``kind`` is ``attribute`` (a USD attribute, ``"<prim path> <attribute>"``),
    ``element`` (one component of a vector attribute, ``"... nexus:positionP[2]"``),
    ``shared`` (one value set on several attributes, such as every ESC's time
    constant), ``state`` (the rollout's start state), ``draw`` (a variation draw
    or multiplier that no attribute holds) or ``run`` (a RunConfig field).
    ``targets`` are the attributes (with ``[i]`` for a component) it sets;
    ``variation`` the name a variation file's draws carry, and ``owner`` the part
    that takes the drawn value (``nexus.plant.wind.Wind``: :mod:`nexus.worlds.drawn`).
    """

    name: str
    kind: str
    unit: str
    bounds: str
    readers: tuple[str, ...]
    doc: str = ""
    aliases: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    variation: str | None = None
    owner: str | None = None

    def read_by(self, reader: str) -> bool:
        return reader in self.readers

    @property
    def readers_text(self) -> str:
        return ", ".join(self.readers) if self.readers else "-"


@dataclass(frozen=True)
class Parameters:
    """A vehicle's parameter table: :meth:`resolve` maps any of its names to its :class:`ParamEntry`."""

    vehicle: str
    entries: tuple[ParamEntry, ...]
    by_name: dict[str, ParamEntry] = field(repr=False, compare=False, default_factory=dict)

    def __post_init__(self):
        table: dict[str, ParamEntry] = {}
        for entry in self.entries:
            for name in (entry.name, *entry.aliases):
                if name in table and table[name] is not entry:
                    raise BuildError(f"parameter name {name!r} is given to both {table[name].name!r} and "
                                     f"{entry.name!r}; rename one alias in nexus/runtime/params.py")
                table[name] = entry
        object.__setattr__(self, "by_name", table)

    def names(self, reader: str | None = None) -> list[str]:
        """Every name (canonical names and aliases) read by ``reader`` (every reader: None)."""
        return [name for name, entry in self.by_name.items() if reader is None or entry.read_by(reader)]

    def get(self, name: str) -> ParamEntry | None:
        return self.by_name.get(name)

    def resolve(self, name: str, reader: str | None = None) -> ParamEntry:
        """The entry ``name`` names; a :class:`BuildError` when it names none, or one ``reader`` does not read."""
        entry = self.by_name.get(name)
        if entry is None:
            raise BuildError(unknown_name(name, self.names(), self.vehicle))
        if reader is not None and not entry.read_by(reader):
            raise BuildError(not_read(name, entry, reader, self.vehicle))
        return entry


def unknown_name(name: str, known, vehicle: str) -> str:
    """The one sentence for a name no reader knows, with the closest known names.

    A ``"<prim path> <attribute>"`` of a prim that has parameters is compared on its attribute with that
    prim's, namespace left out (the shared path and ``nexus:`` would make every attribute look close).
    """
    known = list(known)
    prim, _, attribute = name.partition(" ")
    same_prim = {_last(n.partition(" ")[2]): n for n in known if attribute and n.partition(" ")[0] == prim}
    if same_prim:
        close = [same_prim[a] for a in difflib.get_close_matches(_last(attribute), list(same_prim), n=3, cutoff=0.6)]
    else:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return f"parameter {name!r} is unknown;{hint} `nexus params --vehicle {vehicle}` lists every name and what reads it"


def _last(attribute: str) -> str:
    """An attribute's name without its namespaces (``timeConstantUp`` of ``nexus:motor:timeConstantUp``)."""
    return attribute.rpartition(":")[2]


_READER_TEXT = {"sweep": "a sweep axis", "variation": "a variation file", "gradient": "a gradient (nexus.diff, "
                "nexus optimize --params)"}


def not_read(name: str, entry: ParamEntry, reader: str, vehicle: str) -> str:
    """The sentence for a known name that ``reader`` does not take."""
    what = f"{name!r} ({entry.name!r})" if entry.name != name else f"{name!r}"
    read = ", ".join(entry.readers) or "nothing"
    return (f"{what} is not read by {_READER_TEXT[reader]}; it is read by {read}: "
            f"`nexus params --vehicle {vehicle}` lists every name and what reads it")


def vehicle_label(vehicle: str | Path) -> str:
    """How a sentence names the vehicle: a shipped vehicle by its name, any other by its path."""
    from nexus.plant.assets import FOLDERS  # noqa: PLC0415

    path = Path(vehicle)
    if path.suffix and path.parent.resolve() == FOLDERS["vehicle"].resolve():
        return path.stem
    return str(vehicle)


def parameters(vehicle: str | Path | None = None) -> Parameters:
    """The parameter table of ``vehicle`` (a shipped name or a USD path; None: RunConfig's default vehicle)."""
    from nexus.plant.assets import resolve_asset  # noqa: PLC0415
    from nexus.worlds.drawn import version  # noqa: PLC0415

    if vehicle is None:
        vehicle = _default_vehicle()
    path = resolve_asset("vehicle", vehicle)
    return _table(str(path), path.stat().st_mtime_ns, vehicle_label(vehicle), version())


def _default_vehicle() -> str:
    from nexus.runtime.flight import RunConfig  # noqa: PLC0415

    return next(f.default for f in fields(RunConfig) if f.name == "vehicle")


@lru_cache(maxsize=8)
def _table(path: str, _mtime: int, label: str, _declared: int) -> Parameters:
    from pxr import Usd  # noqa: PLC0415

    import nexus  # noqa: F401, PLC0415 (registers the Nexus USD schemas before the stage opens)

    stage = Usd.Stage.Open(path)
    if stage is None:
        raise BuildError(f"{path}: USD could not open the vehicle file")
    return Parameters(label, tuple(_rows(stage)))


# -- rows -----------------------------------------------------------------------------------------------------

def _specs(stage) -> list[tuple[str, object]]:
    """(prim path, spec) for every prim that applies a Nexus component schema, in file order."""
    from nexus.schemas.catalog import component_class, index  # noqa: PLC0415

    known = index()
    found = []
    for prim in stage.Traverse():
        for schema in prim.GetAppliedSchemas():
            entry = known.get(schema)
            if entry is None or entry.get("abstract"):
                continue
            cls = component_class(schema)
            spec = getattr(cls, "spec", None) if cls is not None else _module_spec(schema)
            if spec is not None:
                found.append((str(prim.GetPath()), spec))
    return found


def _module_spec(schema: str):
    """A spec that builds no component (a module-level declaration), found by walking the component packages."""
    from nexus.schemas.catalog import discover  # noqa: PLC0415

    return next((e.spec for e in discover() if e.spec.schema == schema), None)


def _base_body(stage) -> str | None:
    """The base body: the first rigid body in file order (as the plant's loader takes it)."""
    from pxr import UsdPhysics  # noqa: PLC0415

    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            return str(prim.GetPath())
    return None


def _rows(stage) -> list[ParamEntry]:
    from nexus.control.pid import PidController  # noqa: PLC0415
    from nexus.plant.esc import Esc  # noqa: PLC0415
    from nexus.plant.propeller import Propeller  # noqa: PLC0415
    from nexus.worlds.drawn import drawn_parameters  # noqa: PLC0415

    drawn = drawn_parameters()
    specs = _specs(stage)
    base = _base_body(stage)
    pid = next((prim for prim, spec in specs if spec is PidController.spec), None)
    escs = [prim for prim, spec in specs if spec is Esc.spec]
    propellers = [prim for prim, spec in specs if spec is Propeller.spec]
    drag = next((prim for prim, spec in specs if spec.schema == "NexusDragAPI"), None)

    # The links: attribute -> (extra readers, aliases, variation name).
    links: dict[str, tuple[set, list, str | None]] = {}

    def link(target: str, reader: str, alias: str | None = None, variation: str | None = None) -> None:
        readers, aliases, _ = links.setdefault(target, (set(), [], None))
        readers.add(reader)
        if alias is not None:
            aliases.append(alias)
        if variation is not None:
            links[target] = (readers, aliases, variation)

    if base is not None:
        for name, attribute in VARIATION_ATTRIBUTES.items():
            link(f"{base} {attribute}", "variation", alias=name, variation=name)
    for i, prim in enumerate(propellers):
        for short, key in ROTOR_NAMES.items():
            link(f"{prim} {Propeller.spec.param(key).attr}", "gradient", alias=f"rotor{i + 1}.{short}")
    if base is not None:
        link(f"{base} physics:mass", "gradient")
    if drag is not None:
        link(f"{drag} nexus:rotorDragCoefficient", "gradient", alias="drag.rotor")

    rows: list[ParamEntry] = [_run_row(f) for f in _run_fields()]
    attribute_rows: list[ParamEntry] = []
    for prim, spec in specs:
        for param in spec.all_params:
            attribute_rows.append(_attribute_row(f"{prim} {param.attr}", param.unit, _bounds(param), param.doc,
                                                 links))
    if base is not None:
        by_attribute = {attribute: drawn[name] for name, attribute in VARIATION_ATTRIBUTES.items()}
        for attribute, (unit, bounds, doc) in PHYSICS_ATTRIBUTES.items():
            if attribute in by_attribute:  # a variation draws it: its unit and check are its owner's
                unit, bounds = by_attribute[attribute].unit, by_attribute[attribute].check
            attribute_rows.append(_attribute_row(f"{base} {attribute}", unit, bounds, doc, links))
    rows += attribute_rows
    rows += _gradient_rows(pid, base, escs, len(propellers))
    rows += _drag_rows(drag)
    rows += [_draw_row(info) for info in drawn.values() if info.name not in VARIATION_ATTRIBUTES]
    if pid is not None and escs and base is not None:
        _check_gradient_names(rows, len(propellers), drag is not None)
    return rows


def _check_gradient_names(rows: list[ParamEntry], rotors: int, drag: bool = False) -> None:
    """Every name the rollout knows has a row read by ``gradient`` (a new rollout name needs its alias here)."""
    from nexus.diff.params import PID_ALIASES, known_names  # noqa: PLC0415

    named = {n for row in rows if row.read_by("gradient") for n in (row.name, *row.aliases)}
    missing = [n for n in (*known_names(rotors, drag), *PID_ALIASES) if n not in named]
    if missing:
        raise BuildError(f"the rollout knows {', '.join(missing)} but nexus/runtime/params.py gives "
                         f"{'it' if len(missing) == 1 else 'them'} no row; add the alias there")


def _bounds(param) -> str:
    """A spec parameter's allowed values in words (a switch or a name has no numeric range)."""
    if param.choices is None and param.type == "bool":
        return "true or false"
    if param.choices is None and param.type in ("string", "token"):
        return "a name"
    return param.bounds_text()


def _attribute_row(name: str, unit: str, bounds: str, doc: str, links: dict) -> ParamEntry:
    readers, aliases, variation = links.get(name, (set(), [], None))
    ordered = tuple(r for r in READERS if r == "sweep" or r in readers)
    return ParamEntry(name, "attribute", unit, bounds, ordered, doc, tuple(aliases), (name,), variation,
                      _owner(variation))


def _owner(variation: str | None) -> str | None:
    """The part a drawn value goes to (None: no variation draws it)."""
    from nexus.worlds.drawn import owner_of  # noqa: PLC0415

    owner = owner_of(variation) if variation is not None else None
    return owner.label if owner is not None else None


def _gradient_rows(pid: str | None, base: str | None, escs: list[str], rotors: int) -> list[ParamEntry]:
    """The rollout's names that are no whole attribute: PID gain components, inertia, shared ESC lags, start state."""
    from nexus.control.pid import PidController  # noqa: PLC0415
    from nexus.diff.params import AXES, PID_ALIASES, PID_GAINS  # noqa: PLC0415
    from nexus.plant.esc import Esc  # noqa: PLC0415

    rows: list[ParamEntry] = []
    if pid is not None:
        for gain in PID_GAINS:
            param = PidController.spec.param(gain)
            for axis_name in ("x", "y", "z"):
                index = AXES[axis_name]
                full = f"pid.{gain}.{axis_name}"
                aliases = [full] + [f"pid.{gain}.{a}" for a, i in AXES.items() if i == index and a != axis_name]
                aliases += [alias for alias, target in PID_ALIASES.items() if target in aliases]
                target = f"{pid} {param.attr}[{index}]"
                rows.append(ParamEntry(target, "element", param.unit, _bounds(param), ("gradient",),
                                       f"{param.doc}: component {index}", tuple(aliases), (target,)))
    if base is not None:
        unit, bounds, doc = PHYSICS_ATTRIBUTES["physics:diagonalInertia"]
        for axis, index in _VECTOR.items():
            target = f"{base} physics:diagonalInertia[{index}]"
            rows.append(ParamEntry(target, "element", unit, bounds, ("gradient",), f"{doc}: component {index}",
                                   (f"inertia.{axis}",), (target,)))
    if escs:
        for key in ESC_NAMES:
            param = Esc.spec.param(key)
            rows.append(ParamEntry(f"esc.{key}", "shared", param.unit, _bounds(param), ("gradient",),
                                   f"{param.doc}, one value for every ESC",
                                   targets=tuple(f"{prim} {param.attr}" for prim in escs)))
    for name, (unit, doc) in INITIAL_STATE.items():
        rows.append(ParamEntry(name, "state", unit, "finite", ("gradient",), doc))
    return rows


def _drag_rows(drag: str | None) -> list[ParamEntry]:
    """The body drag coefficient's components, each a rollout name (``drag.cd.x|y|z``); none without a drag prim."""
    if drag is None:
        return []
    from nexus.air.drag import Drag  # noqa: PLC0415

    param = Drag.spec.param("body_drag_coefficient")
    rows = []
    for axis, index in (("x", 0), ("y", 1), ("z", 2)):
        target = f"{drag} {param.attr}[{index}]"
        rows.append(ParamEntry(target, "element", param.unit, _bounds(param), ("gradient",),
                               f"{param.doc}: component {index}", (f"drag.cd.{axis}",), (target,)))
    return rows


def _draw_row(info) -> ParamEntry:
    unit = info.unit if info.unit else "-"
    kind = {"int": "an integer", "str": "a name"}.get(info.kind)
    doc = info.doc + (f" ({kind})" if kind else "") + ("; per rotor allowed" if info.per_rotor_allowed else "")
    return ParamEntry(info.name, "draw", unit, info.check, ("variation",), doc, variation=info.name,
                      owner=_owner(info.name))


def _run_fields():
    from nexus.runtime.flight import RunConfig  # noqa: PLC0415

    return fields(RunConfig)


def _run_row(f) -> ParamEntry:
    import typing  # noqa: PLC0415

    from nexus.runtime.flight import RunConfig  # noqa: PLC0415
    from nexus.vocab.settings import choices_of  # noqa: PLC0415
    from nexus.vocab.types import type_text  # noqa: PLC0415

    hint = typing.get_type_hints(RunConfig)[f.name]
    unit = (f.metadata.get("unit") or "-") if f.metadata else "-"
    choices = choices_of(f) if f.metadata else None
    bounds = ("one of " + ", ".join(map(str, choices))) if choices else type_text(hint, none=False)
    if f.metadata and not choices:
        lo, hi = f.metadata.get("minimum"), f.metadata.get("maximum")
        low = None if lo is None else f"{'>' if f.metadata.get('min_open') else '>='} {lo:g}"
        high = None if hi is None else f"<= {hi:g}"
        if low or high:
            bounds = ", ".join(x for x in (bounds, low, high) if x)
    doc = f.metadata.get("help", "") if f.metadata else ""
    return ParamEntry(f.name, "run", unit, bounds, ("sweep",), doc or "a RunConfig field (nexus run's option)")


__all__ = ["ESC_NAMES", "INITIAL_STATE", "PHYSICS_ATTRIBUTES", "READERS", "ROTOR_NAMES", "VARIATION_ATTRIBUTES",
           "ParamEntry", "Parameters", "not_read", "parameters", "unknown_name", "vehicle_label"]
