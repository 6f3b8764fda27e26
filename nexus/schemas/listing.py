"""What ``nexus schema`` lists of each API schema: its attributes (type, unit, default, allowed values, the
schema that declares each) and relationships, read from the component specs."""

from __future__ import annotations

from nexus.core.spec import input_relations
from nexus.schemas.generate import _value


def _allowed(param) -> str:
    if param.choices is None and param.type == "bool":
        return "true or false"
    if param.choices is None and param.type in ("string", "token"):
        return "any text"
    return param.bounds_text()


def describe(entries) -> list[dict]:
    """One dict per API schema: its name, component, doc, attributes (the bases' too, each with the schema that
    declares it) and relationships, all read from the component specs."""

    found = []
    for entry in entries:
        spec = entry.spec
        own = {param.attr for param in spec.params}
        owner = {param.attr: base.schema for base in spec.bases for param in base.all_params}
        attributes = [{"name": param.attr, "type": param.type, "unit": param.unit or "-", "default": _value(param),
                       "allowed": _allowed(param), "from": spec.schema if param.attr in own else owner[param.attr],
                       "doc": " ".join(param.doc.split())}
                      for param in spec.all_params]
        relations = [{"name": relation.attr, "kind": "required" if relation.required else "optional",
                      "doc": " ".join(relation.doc.split())} for relation in spec.all_relations]
        relations += [{"name": f"nexus:inputs:{port.signal.split('/')[0]}", "kind": "input connection",
                       "doc": " ".join((port.doc or f"The prim whose stage writes the {port.signal} signal.").split())}
                      for port in input_relations(spec)]
        found.append({"schema": spec.schema, "component": entry.target or None, "abstract": spec.abstract,
                      "bases": [base.schema for base in spec.bases], "doc": " ".join(spec.doc.split()),
                      "attributes": attributes, "relationships": relations})
    return found
