"""Where each component's spec lives: found by walking Nexus's component packages.

``nexus schema --write`` imports every module of :data:`COMPONENT_PACKAGES`,
collects each component class that carries a :class:`~nexus.core.spec.Spec`
with a USD schema (and each module-level spec that only declares a schema,
such as the scene's geodetic origin), and writes the schema files plus an
index, ``components.json``: schema name -> ``module:Class``. At run time the
assembly reads the index, so it imports only the components a vehicle uses,
and a new component file needs no edit anywhere else: the next
``nexus schema --write`` finds it.

A component class of a module outside those packages (one's own, imported
with ``nexus run --plugin MODULE``) declares itself with :func:`register`
above the class: its schema then joins the index for this process, so a
vehicle prim that lists it in ``apiSchemas`` becomes one, its attributes are
checked against its spec (:func:`properties`; USD's schema registry, built
once per process, never learns it) and ``nexus params`` lists its parameters.
"""

from __future__ import annotations

import json
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nexus.core.component import Component
from nexus.core.errors import BuildError
from nexus.core.lazy import load_attribute, load_module
from nexus.core.spec import Spec, input_relations

#: Packages whose modules may declare components with specs.
COMPONENT_PACKAGES = ("nexus.plant", "nexus.sensors", "nexus.estimation", "nexus.guidance", "nexus.control",
                      "nexus.air", "nexus.aero")
INDEX_FILE = Path(__file__).with_name("components.json")


@dataclass(frozen=True)
class Entry:
    """One declared schema: its spec and its component class (``module:Class``; empty for a spec that
    builds no component, such as a shared base)."""

    spec: Spec
    target: str


def discover() -> list[Entry]:
    """Every spec with a schema in the component packages, bases first, then in module order."""
    entries: dict[str, Entry] = {}

    def add(spec: Spec, target: str) -> None:
        for base in spec.bases:
            add(base, "")
        known = entries.get(spec.schema)
        if known is not None and known.spec is not spec:
            raise BuildError(f"schema {spec.schema} is declared by two specs ({known.spec.name}, {spec.name})")
        if known is not None and known.target and target and known.target != target:
            raise BuildError(f"schema {spec.schema} is the spec of two components: {known.target} and {target}")
        if known is None or (target and not known.target):
            entries[spec.schema] = Entry(spec, target)

    for package_name in COMPONENT_PACKAGES:
        package = load_module(package_name)
        names = [package_name] + [m.name for m in pkgutil.walk_packages(package.__path__, package_name + ".")]
        for module_name in sorted(set(names)):
            module = load_module(module_name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Component) and value.__module__ == module_name:
                    spec = value.__dict__.get("spec")
                    if isinstance(spec, Spec) and spec.schema and not spec.abstract:
                        add(spec, f"{module_name}:{value.__qualname__}")
                elif isinstance(value, Spec) and value.schema:
                    add(value, "")
    return list(entries.values())


@lru_cache(maxsize=1)
def _generated_index() -> dict[str, dict]:
    try:
        return json.loads(INDEX_FILE.read_text())["schemas"]
    except (OSError, ValueError, KeyError) as error:
        raise RuntimeError(f"{INDEX_FILE} is missing or broken ({error}); run `nexus schema --write`") from error


def index() -> dict[str, dict]:
    """The generated index, with the registered components' schemas (:func:`register`):
    schema -> {"target": "module:Class", "abstract": bool}."""
    found = _generated_index()
    if not _REGISTERED:
        return found
    return {**found, **{schema: {"target": f"{cls.__module__}:{cls.__qualname__}", "abstract": False}
                        for schema, cls in _REGISTERED.items()}}


#: Component classes of modules outside :data:`COMPONENT_PACKAGES`, by schema (:func:`register`).
_REGISTERED: dict[str, type[Component]] = {}
_version = 0


def register(cls: type[Component]) -> type[Component]:
    """Declare, above a component class of one's own, that a vehicle prim applying its spec's schema becomes
    one (see the module); returns the class. Its spec needs a schema no other spec declares."""
    global _version
    spec = cls.__dict__.get("spec")
    if not isinstance(spec, Spec) or not spec.schema:
        raise BuildError(f"{cls.__qualname__}: a registered component needs a spec with a schema (spec = Spec(..., "
                         "schema=\"MyPartAPI\"))")
    target = f"{cls.__module__}:{cls.__qualname__}"
    same = _REGISTERED.get(spec.schema)
    known = _generated_index().get(spec.schema, {}).get("target") or (
        f"{same.__module__}:{same.__qualname__}" if same is not None else None)
    if known is not None and known != target:  # the same class declared again (its module re-imported) is fine
        raise BuildError(f"schema {spec.schema} is the spec of two components: {known} and {target}")
    _REGISTERED[spec.schema] = cls
    _version += 1
    return cls


def withdraw(cls: type[Component]) -> None:
    """Forget a registered class (a test's own, once it is done)."""
    global _version
    for schema in [s for s, c in _REGISTERED.items() if c is cls]:
        del _REGISTERED[schema]
    _version += 1


def registered() -> dict[str, type[Component]]:
    """The registered component classes by schema."""
    return dict(_REGISTERED)


def version() -> int:
    """A number that changes with every registration or withdrawal (a cache of a vehicle's parameters sees it)."""
    return _version


def properties(spec: Spec) -> dict[str, str]:
    """The properties ``spec``'s schema declares, as USD's registry lists a generated one's: attribute ->
    type name (``float``, ``float3``), ``rel`` for a relationship."""
    found = {param.attr: param.type for param in spec.all_params}
    found.update({relation.attr: "rel" for relation in spec.all_relations})
    found.update({f"nexus:inputs:{port.signal.split('/')[0]}": "rel" for port in input_relations(spec)})
    return found


def component_class(schema: str) -> type[Component] | None:
    """The component class a prim applying ``schema`` becomes (None: the schema builds no component)."""
    if schema in _REGISTERED:
        return _REGISTERED[schema]
    entry = index().get(schema)
    if entry is None:
        return None
    if ":" not in (entry["target"] or ""):
        return None
    return load_attribute(entry["target"])
