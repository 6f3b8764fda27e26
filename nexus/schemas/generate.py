"""Writing the USD schema files from the component specs (``nexus schema --write``).

Three files are generated beside this module, never edited by hand:

- ``generatedSchema.usda``: one codeless API schema class per spec, each
  parameter an attribute with its fallback (the spec's default), its doc with
  the unit and allowed range, and ``customData`` holding ``unit``,
  ``minimum``/``maximum`` for tools; each relation and connectable input a
  relationship; a spec's bases become built-in API schemas (``apiSchemas``),
  so the sensors' shared rate, noise switch and mount are declared once, in
  ``NexusSensorAPI``;
- ``plugInfo.json``: the plugin that declares each class a single-apply API;
- ``components.json``: the index from schema to component class (see
  :mod:`nexus.schemas.catalog`).

:func:`stale_files` tells which checked-in files differ from what the specs
generate; a test fails on any.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nexus.core.spec import Param, Spec, input_relations
from nexus.schemas.catalog import INDEX_FILE, Entry, discover

FOLDER = Path(__file__).parent
HEADER = (
    "Nexus API schemas, generated from the component specs by `nexus schema --write`; do not edit. "
    "Units are SI unless a doc says otherwise; vectors on a vehicle are in the body frame (FLU: x forward, "
    "y left, z up)."
)


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.10g}"


def _value(param: Param) -> str:
    value = param.default
    if param.type == "bool":
        return "true" if value else "false"
    if param.type in ("float3", "double3"):
        return "(" + ", ".join(_number(v) for v in value) + ")"
    if param.type == "float3[]":
        return "[" + ", ".join("(" + ", ".join(_number(v) for v in item) + ")" for item in value) + "]"
    if param.type in ("string", "token"):
        return _quote(str(value))
    return _number(value)


def _param_doc(param: Param) -> str:
    unit = f" [{param.unit}]" if param.unit and param.unit != "-" else ""
    allowed = param.bounds_text()
    return f"{param.doc.rstrip('.')}{unit}." + (f" Allowed: {allowed}." if allowed not in ("finite", "any value") else "")


def _custom_data(param: Param) -> list[str]:
    lines = [f'string unit = {_quote(param.unit or "-")}']
    if param.low is not None:
        lines.append(f"double minimum = {_number(float(param.low))}")
        if param.open_low:
            lines.append("bool minimumExclusive = true")
    if param.high is not None:
        lines.append(f"double maximum = {_number(float(param.high))}")
    return lines


def _class(spec: Spec) -> str:
    meta = [f"doc = {_quote(spec.doc)}"]
    if spec.bases:
        meta.append("prepend apiSchemas = [" + ", ".join(_quote(b.schema) for b in spec.bases) + "]")
    lines = [f'class "{spec.schema}" (', *(f"    {m}" for m in meta), ")", "{"]
    for param in spec.params:
        lines.append(f"    {param.type} {param.attr} = {_value(param)} (")
        lines.append("        customData = {")
        lines += [f"            {item}" for item in _custom_data(param)]
        lines.append("        }")
        lines.append(f"        doc = {_quote(_param_doc(param))}")
        lines.append("    )")
    for relation in spec.relations:
        lines.append(f"    rel {relation.attr} (")
        lines.append(f"        doc = {_quote(relation.doc)}")
        lines.append("    )")
    for port in input_relations(spec):
        lines.append(f"    rel nexus:inputs:{port.signal.split('/')[0]} (")
        lines.append(f"        doc = {_quote(port.doc or f'The prim whose stage writes the {port.signal} signal.')}")
        lines.append("    )")
    lines.append("}")
    return "\n".join(lines)


#: Schema classes not yet declared by a spec, kept as they were hand-written (transitional).
LEGACY_FILE = FOLDER / "legacy.usda"


def _legacy_classes(known: set[str]) -> dict[str, str]:
    if not LEGACY_FILE.exists():
        return {}
    text = LEGACY_FILE.read_text()
    found: dict[str, str] = {}
    starts = [i for i in range(len(text)) if text.startswith('class "', i)]
    for a, b in zip(starts, starts[1:] + [len(text)]):
        block = text[a:b].rstrip() + "\n"
        name = block.split('"')[1]
        if name not in known:
            found[name] = block.rstrip()
    return found


def _index_entry(entry: Entry) -> dict:
    found = {"target": entry.target, "abstract": entry.spec.abstract}
    if entry.spec.extras.get("mavlink"):  # a sensor the PX4 exchange forwards (nexus.px4.controller)
        found["mavlink"] = entry.spec.extras["mavlink"]
    return found


def render(entries: list[Entry]) -> dict[str, str]:
    """File name -> text of each generated file."""
    legacy = _legacy_classes({e.spec.schema for e in entries})
    classes = [_class(e.spec) for e in entries] + list(legacy.values())
    usda = "#usda 1.0\n(\n    " + _quote(HEADER) + "\n)\n\n" + "\n\n".join(classes) + "\n"
    names = [e.spec.schema for e in entries] + list(legacy)
    types = {
        f"NexusSchemas{name[len('Nexus'):]}": {
            "alias": {"UsdSchemaBase": name},
            "autoGenerated": True,
            "bases": ["UsdAPISchemaBase"],
            "schemaIdentifier": name,
            "schemaKind": "singleApplyAPI",
        }
        for name in names
    }
    plug = {
        "Plugins": [{
            "Info": {"Types": types},
            "LibraryPath": "",
            "Name": "nexusSchemas",
            "ResourcePath": ".",
            "Root": ".",
            "Type": "resource",
        }]
    }
    index = {
        "generated_by": "nexus schema --write",
        "schemas": {
            **{e.spec.schema: _index_entry(e) for e in entries},
            **{name: {"target": "", "abstract": False} for name in legacy},
        },
    }
    return {
        "generatedSchema.usda": usda,
        "plugInfo.json": json.dumps(plug, indent=4) + "\n",
        INDEX_FILE.name: json.dumps(index, indent=4) + "\n",
    }


def stale_files(folder: Path = FOLDER) -> list[str]:
    """Generated files whose checked-in text differs from what the specs give now."""
    return [name for name, text in render(discover()).items()
            if not (folder / name).exists() or (folder / name).read_text() != text]


def write(folder: Path = FOLDER) -> list[str]:
    """Write every generated file; the names of those that changed."""
    changed = stale_files(folder)
    for name, text in render(discover()).items():
        (folder / name).write_text(text)
    return changed
