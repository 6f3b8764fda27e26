"""Where each component's spec lives: found by walking Nexus's component packages.

``nexus schema --write`` imports every module of :data:`COMPONENT_PACKAGES`,
collects each component class that carries a :class:`~nexus.core.spec.Spec`
with a USD schema (and each module-level spec that only declares a schema,
such as the scene's geodetic origin), and writes the schema files plus an
index, ``components.json``: schema name -> ``module:Class``. At run time the
assembly reads the index, so it imports only the components a vehicle uses,
and a new component file needs no edit anywhere else: the next
``nexus schema --write`` finds it.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from nexus.core.component import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Spec

#: Packages whose modules may declare components with specs.
COMPONENT_PACKAGES = ("nexus.plant", "nexus.sensors", "nexus.estimation", "nexus.guidance", "nexus.control",
                      "nexus.air")
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
        package = importlib.import_module(package_name)
        names = [package_name] + [m.name for m in pkgutil.walk_packages(package.__path__, package_name + ".")]
        for module_name in sorted(set(names)):
            module = importlib.import_module(module_name)
            for value in vars(module).values():
                if isinstance(value, type) and issubclass(value, Component) and value.__module__ == module_name:
                    spec = value.__dict__.get("spec")
                    if isinstance(spec, Spec) and spec.schema and not spec.abstract:
                        add(spec, f"{module_name}:{value.__qualname__}")
                elif isinstance(value, Spec) and value.schema:
                    add(value, "")
    return list(entries.values())


@lru_cache(maxsize=1)
def index() -> dict[str, dict]:
    """The generated index: schema -> {"target": "module:Class", "abstract": bool}."""
    try:
        return json.loads(INDEX_FILE.read_text())["schemas"]
    except (OSError, ValueError, KeyError) as error:
        raise RuntimeError(f"{INDEX_FILE} is missing or broken ({error}); run `nexus schema --write`") from error


def component_class(schema: str) -> type[Component] | None:
    """The component class a prim applying ``schema`` becomes (None: the schema builds no component)."""
    entry = index().get(schema)
    if entry is None:
        return None
    module, _, name = (entry["target"] or "").partition(":")
    if not name:
        return None
    return getattr(importlib.import_module(module), name)
