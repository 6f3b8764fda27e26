"""Every name a vehicle's parameters go by, resolved in one place: ``nexus params --vehicle V`` lists them.

A parameter used to have up to four names: the USD attribute a sweep sets
(``"/vehicle/controller nexus:positionP"``), the variation file's name
(``mass``, ``thrust_scale``), the differentiable rollout's name (``pid.kp_z``,
``rotor1.kt``, ``esc.tau_up``) and the spec's own key. :func:`parameters`
builds, for one vehicle, one table of :class:`ParamEntry` rows: the canonical
name plus its aliases, what it sets, its unit and bounds, and which readers
take it:

* ``sweep``: an axis of a sweep file (a :class:`~nexus.runtime.config.RunConfig` field
  or a vehicle attribute, written through an override layer);
* ``variation``: a top-level key of a variation file (``nexus run --vary``);
* ``gradient``: a parameter of :class:`nexus.diff.Rollout` (``Rollout.slot``,
  ``nexus optimize --params``).

The rows come from the declarations, walked here and never reached up for:
every Nexus prim's spec parameters (:class:`nexus.core.spec.Param`: attribute,
unit, bounds, doc), the rollout's names each spec declares with its device
arrays (``Spec.arrays``, :mod:`nexus.core.arrays`: ``rotor{n}.kt`` on the
propeller's thrust coefficient), the drawn parameters each owner declares
beside its class (:mod:`nexus.vocab.drawn`: unit, check, kind, and the owner:
the part a drawn value goes to) and the settings of
:class:`~nexus.runtime.config.RunConfig` (:mod:`nexus.vocab.settings`). This
module only adds what no spec declares:

* :data:`VARIATION_ATTRIBUTES`: a variation name that sets a USD attribute
  outright (``mass`` is the base body's ``physics:mass``);
* :data:`PHYSICS_ATTRIBUTES`, :data:`INITIAL_STATE`: the UsdPhysics attributes
  of the base body and the start state the rollout differentiates (they have
  no Nexus spec).

An unknown name gets the one sentence of :func:`nexus.vocab.names.unknown_name`,
with the same "did you mean" wherever it was written (a variation file, a
sweep axis, ``nexus optimize --params``); the worlds' draws are handed this
table's look-up (:func:`variation_names`) rather than importing it.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path

from pxr import Usd, UsdPhysics

from nexus.core.arrays import GradientName
from nexus.core.errors import BuildError
from nexus.plant.assets import FOLDERS, resolve_asset
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas import catalog
from nexus.schemas.catalog import component_class, discover, index
from nexus.vocab.drawn import Drawn
from nexus.vocab.names import VariationNames, unknown_name
from nexus.vocab.settings import choices_of
from nexus.vocab.types import type_text
from nexus.worlds.owners import drawn_parameters, owner_of, version
from nexus.runtime.config import RunConfig

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
    that takes the drawn value (``nexus.plant.base_force.BaseForce``: :mod:`nexus.vocab.drawn`).
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
    path = Path(vehicle)
    if path.suffix and path.parent.resolve() == FOLDERS["vehicle"].resolve():
        return path.stem
    return str(vehicle)


def parameters(vehicle: str | Path | None = None) -> Parameters:
    """The parameter table of ``vehicle`` (a shipped name or a USD path; None: RunConfig's default vehicle)."""
    if vehicle is None:
        vehicle = _default_vehicle()
    path = resolve_asset("vehicle", vehicle)
    return _table(str(path), path.stat().st_mtime_ns, vehicle_label(vehicle), (version(), catalog.version()))


def variation_names(vehicle: str | Path | None = None) -> VariationNames:
    """``vehicle``'s look-up of variation names for the worlds' draws (:mod:`nexus.worlds.drawn`): any name of a
    variation parameter -> its own name, or the one sentence for a name a variation file may not give. The
    table is built on the first name that is no draw's own (a run with only own names never opens it)."""

    def own_name(name: str) -> str:
        return parameters(vehicle).resolve(name, "variation").variation

    return own_name



def _default_vehicle() -> str:
    return next(f.default for f in fields(RunConfig) if f.name == "vehicle")


@lru_cache(maxsize=8)
def _table(path: str, _mtime: int, label: str, _declared: tuple[int, int]) -> Parameters:
    stage = Usd.Stage.Open(path)
    if stage is None:
        raise BuildError(f"{path}: USD could not open the vehicle file")
    return Parameters(label, tuple(_rows(stage)))


# -- rows -----------------------------------------------------------------------------------------------------

def _specs(stage) -> list[tuple[str, object]]:
    """(prim path, spec) for every prim that applies a Nexus component schema, in file order."""
    known = index()
    found = []
    for prim in stage.Traverse():
        for schema in nexus_apis(prim):  # a registered component's schema too (no USD schema of its own)
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
    return next((e.spec for e in discover() if e.spec.schema == schema), None)


def _base_body(stage) -> str | None:
    """The base body: the first rigid body in file order (as the plant's loader takes it)."""
    for prim in stage.Traverse():
        if prim.HasAPI(UsdPhysics.RigidBodyAPI):
            return str(prim.GetPath())
    return None


def _rows(stage) -> list[ParamEntry]:
    drawn = drawn_parameters()
    specs = _specs(stage)
    base = _base_body(stage)
    declared = _declared_gradients(specs)

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
    for prims, spec, name in declared:  # a whole attribute of one prim: the rollout's name is an alias of it
        if name.component is None and (name.element is not None or len(prims) == 1):
            prim = prims[name.element or 0]
            link(f"{prim} {name.attr}", "gradient", alias=name.name)
            for alias in name.aliases:
                link(f"{prim} {name.attr}", "gradient", alias=alias)
    if base is not None:
        link(f"{base} physics:mass", "gradient")

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
    rows += _gradient_rows(declared, base)
    rows += [_draw_row(info) for info in drawn.values() if info.name not in VARIATION_ATTRIBUTES]
    return rows


def _declared_gradients(specs: list[tuple[str, object]]) -> list[tuple[list[str], object, GradientName]]:
    """(the spec's prims, the spec, one name) for every name the rollout differentiates that a component's spec
    declares with its arrays (:mod:`nexus.core.arrays`: ``rotor2.kt``, ``esc.tau_up``, ``pid.position_p.z``),
    the specs in the order their first prim comes in the file."""
    prims_of: dict[int, tuple[object, list[str]]] = {}
    for prim, spec in specs:
        prims_of.setdefault(id(spec), (spec, []))[1].append(prim)
    return [(prims, spec, name) for spec, prims in prims_of.values() for name in spec.gradient_names(len(prims))]


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
    owner = owner_of(variation) if variation is not None else None
    return owner.label if owner is not None else None


def _gradient_rows(declared: list[tuple[list[str], object, GradientName]], base: str | None) -> list[ParamEntry]:
    """The rollout's names that are no whole attribute of one prim: a component of a vector attribute (a PID
    gain's axis, a body drag coefficient's), one value shared by several prims (every ESC's lag), the base
    body's inertia and the start state."""
    rows: list[ParamEntry] = []
    for prims, spec, name in declared:
        param = spec.param(name.param)
        if name.component is not None:
            prim = prims[name.element or 0]
            target = f"{prim} {name.attr}[{name.component}]"
            rows.append(ParamEntry(target, "element", name.unit, _bounds(param), ("gradient",), name.doc,
                                   (name.name, *name.aliases), (target,)))
        elif name.element is None and len(prims) > 1:
            rows.append(ParamEntry(name.name, "shared", name.unit, _bounds(param), ("gradient",),
                                   f"{name.doc}, one value for every {spec.noun or spec.name}",
                                   tuple(name.aliases), tuple(f"{prim} {name.attr}" for prim in prims)))
    if base is not None:
        unit, bounds, doc = PHYSICS_ATTRIBUTES["physics:diagonalInertia"]
        for axis, index in _VECTOR.items():
            target = f"{base} physics:diagonalInertia[{index}]"
            rows.append(ParamEntry(target, "element", unit, bounds, ("gradient",), f"{doc}: component {index}",
                                   (f"inertia.{axis}",), (target,)))
    for name, (unit, doc) in INITIAL_STATE.items():
        rows.append(ParamEntry(name, "state", unit, "finite", ("gradient",), doc))
    return rows


def _draw_row(info: Drawn) -> ParamEntry:
    unit = info.unit if info.unit else "-"
    kind = {"int": "an integer", "str": "a name"}.get(info.kind)
    doc = info.doc + (f" ({kind})" if kind else "") + ("; per rotor allowed" if info.per_rotor_allowed else "")
    return ParamEntry(info.name, "draw", unit, info.check, ("variation",), doc, variation=info.name,
                      owner=_owner(info.name))


def _run_fields():
    return fields(RunConfig)


def _run_row(f) -> ParamEntry:
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


__all__ = ["INITIAL_STATE", "PHYSICS_ATTRIBUTES", "READERS", "VARIATION_ATTRIBUTES",
           "ParamEntry", "Parameters", "not_read", "parameters", "variation_names", "vehicle_label"]
