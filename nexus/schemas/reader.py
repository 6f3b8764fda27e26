"""Reading one prim against its component's spec: every value checked once, every error named.

:func:`read_prim` is the only place a component's USD attributes are read:
it takes each parameter's authored value (or the schema's fallback), converts
it to the Python type the component takes, checks it against the spec's
bounds, and reads each relation's single target. All problems of one prim are
reported together, each with the file, the prim and the attribute.
:func:`read_connections` is the only place a prim's ``nexus:inputs:<signal>``
connections are read.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec


def shown(value: Any) -> str:
    """A value as an error shows it: ``-5.0``, ``(0.15, -0.15, nan)``."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(shown(v) for v in value) + ")"
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.7g}" if abs(value) >= 1e-4 or value == 0 else repr(value)
    return str(value)


def _convert(param: Param, raw: Any) -> Any:
    if param.type == "bool":
        return bool(raw)
    if param.type == "int":
        return int(raw)
    if param.type in ("float", "double"):
        return float(raw)
    if param.type in ("float3", "double3"):
        return tuple(float(v) for v in raw)
    if param.type in ("float3[]", "float2[]"):
        return [tuple(float(v) for v in item) for item in raw]
    return str(raw)


def where(prim: Any, spec: Spec, path: Path | str) -> str:
    """``<file>: <noun> prim <path>``: how errors point at a prim."""
    return f"{path}: {spec.noun} prim {prim.GetPath()}"


def prim_error(head: str, problems: list[str]) -> BuildError:
    """One error for every problem of one prim: on one line when there is one."""
    if len(problems) == 1:
        return BuildError(f"{head}: {problems[0]}")
    return BuildError(f"{head} has {len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems))


def read_prim(prim: Any, spec: Spec, path: Path | str) -> dict[str, Any]:
    """Keyword arguments for the spec's component: parameter and relation keys -> checked values."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    for param in spec.all_params:
        attribute = prim.GetAttribute(param.attr)
        raw = attribute.Get() if attribute else None
        value = param.default if raw is None else _convert(param, raw)
        why = param.problem(value)
        if why is not None:
            unit = f" {param.unit}" if param.unit and param.unit != "-" else ""
            problems.append(f"{param.attr} is {shown(value)}{unit}; it {why} ({param.doc.rstrip('.')})")
        values[param.key] = value
    for relation in spec.all_relations:
        relationship = prim.GetRelationship(relation.attr)
        targets = [str(t.GetPrimPath()) for t in relationship.GetTargets()] if relationship else []
        if len(targets) == 1:
            values[relation.key] = targets[0]
        elif targets or relation.required:
            problems.append(f"{relation.attr} needs exactly one target, has {len(targets)} ({relation.doc.rstrip('.')})")
        else:
            values[relation.key] = None
    if problems:
        raise prim_error(where(prim, spec, path), problems)
    return values


INPUTS = "nexus:inputs:"


def read_connections(prim: Any, spec: Spec, path: Path | str, required: tuple[str, ...] = ()) -> dict[str, str]:
    """The prim's connections: ``nexus:inputs:<signal>`` -> the one prim it names, for every such relationship.

    A connection naming several prims, or a ``required`` one naming none, fails
    the build with the file, the prim and the relationship.
    """
    found: dict[str, str] = {}
    problems: list[str] = []
    for relationship in prim.GetRelationships():
        name = relationship.GetName()
        if not name.startswith(INPUTS):
            continue
        targets = [str(t.GetPrimPath()) for t in relationship.GetTargets()]
        if len(targets) > 1:
            problems.append(f"{name} names {len(targets)} prims ({', '.join(targets)}); name the one writer to read")
        elif targets:
            found[name[len(INPUTS):]] = targets[0]
    for signal in required:
        if signal not in found and not any(p.startswith(INPUTS + signal + " ") for p in problems):
            doc = next((i.doc for i in spec.all_inputs if i.signal == signal and i.doc), "")
            problems.append(f"{INPUTS}{signal} needs exactly one target, has 0" + (f" ({doc.rstrip('.')})" if doc else ""))
    if problems:
        raise prim_error(where(prim, spec, path), problems)
    return found

