"""Reading one prim against its component's spec: every value checked once, every error named.

:func:`read_prim` is the only place a component's USD attributes are read:
it takes each parameter's authored value (or the schema's fallback), converts
it to the Python type the component takes, checks it against the spec's
bounds, and reads each relation's single target. All problems of one prim are
reported together, each with the file, the prim and the attribute.
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
    if param.type == "float3[]":
        return [tuple(float(v) for v in item) for item in raw]
    return str(raw)


def where(prim: Any, spec: Spec, path: Path | str) -> str:
    """``<file>: <noun> prim <path>``: how errors point at a prim."""
    return f"{path}: {spec.noun} prim {prim.GetPath()}"


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
        head = where(prim, spec, path)
        if len(problems) == 1:
            raise BuildError(f"{head}: {problems[0]}")
        raise BuildError(f"{head} has {len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems))
    return values
