"""The record's columns regrouped as one typed message per signal: its JSON schema and its JSON text per row.

A record row is flat (``imu.time``, ``imu.accel[0]`` ...). An export to MCAP
puts each signal back together as one message, in the shape of its struct::

    imu         {"time": 0.004, "accel": [0.01, -0.02, -9.81], "gyro": [0.0, 0.0, 0.0]}
    body/base   {"pose": [x, y, z, qx, qy, qz, qw], "velocity": [...], ...}
    controls    {"value": [0.61, 0.61, 0.61, 0.61, 0.0, ...]}

so a tool's path to a value spells the record's column: Foxglove's
``/world0/imu.accel[0]`` is the column ``imu.accel[0]``. A signal that is one
value or one array (``armed``, ``controls``, ``wind``) sits under ``value``.
The schema is a JSON Schema that names each field with its unit
(:mod:`nexus.record.units`). Numbers are written as the shortest text that
reads back to the same float32 or float64 (NumPy's), so every value exports
exactly; a value that is not finite (a failed world's) is written as
``null``, which JSON has in place of NaN.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from nexus.record.units import column_fields, unit_of

#: The columns that are not signals: the tick's time (each message's log time), the world's index and, in a run
#: of several vehicles a world, the vehicle's index in its world.
NOT_SIGNALS = ("time", "world", "vehicle")
#: The key a one-value signal's value sits under.
VALUE = "value"


@dataclass
class _Leaf:
    column: str
    integer: bool


@dataclass
class SignalChannel:
    """One signal's message: the record columns it holds (in the order its text takes them) and its schema."""

    #: The column prefix (``imu``, ``body/base``, ``controls``).
    signal: str
    columns: list[str]
    #: JSON text with one ``%s`` per column, in ``columns``' order.
    template: str
    schema: dict = field(repr=False)

    def topic(self, world: int, vehicle: int | None = None) -> str:
        """``/world0/imu``, ``/world3/body/base``; with a ``vehicle`` (a fleet's) ``/world0/vehicle1/imu``."""
        return re.sub("/+", "/", f"{place_prefix(world, vehicle)}/{self.signal}")

    @property
    def schema_name(self) -> str:
        """``nexus.imu``, ``nexus.body.base``: one schema serves the signal in every world."""
        return "nexus." + ".".join(part for part in self.signal.split("/") if part)

    def messages(self, table) -> list[str]:
        """One JSON text per row of ``table`` (a pyarrow table holding this channel's columns)."""
        texts = [number_texts(table.column(name).to_numpy()) for name in self.columns]
        template = self.template
        return [template % row for row in zip(*texts)]


def place_prefix(world: int, vehicle: int | None = None) -> str:
    """The topic prefix of one vehicle's channels: ``/world0``, or ``/world0/vehicle1`` in a run of several a
    world (``vehicle`` None: a run of one vehicle a world, whose topics stay as they were)."""
    return f"/world{world}" if vehicle is None else f"/world{world}/vehicle{vehicle}"


def number_texts(values: np.ndarray) -> list[str]:
    """Each value as JSON text: the shortest decimal that reads back to the same bits, ``null`` if not finite."""
    texts = values.astype(str)
    if values.dtype.kind == "f":
        bad = ~np.isfinite(values)
        if bad.any():
            texts[bad] = "null"
    return texts.tolist()


def signal_channels(types: dict) -> list[SignalChannel]:
    """The channels of a record whose columns and pyarrow types are ``types`` (name -> type), in column order."""

    trees: dict[str, dict] = {}
    for name, kind in types.items():
        if name in NOT_SIGNALS:
            continue
        signal, path = column_fields(name)
        if not path or path[0][0] == "index":
            path = [("key", VALUE), *path]
        _insert(trees.setdefault(signal, {}), path, _Leaf(name, pa.types.is_integer(kind)))
    channels = []
    for signal, tree in trees.items():
        columns: list[str] = []
        template = _template(tree, columns)
        channels.append(SignalChannel(signal, columns, template, _schema_of(signal, tree)))
    return channels


def _insert(node, path, leaf: _Leaf) -> None:
    for step, (kind, key) in enumerate(path):
        last = step == len(path) - 1
        child = None if last else ({} if path[step + 1][0] == "key" else [])
        if kind == "index":
            node.extend([None] * (key + 1 - len(node)))
            if last:
                node[key] = leaf
            else:
                node[key] = node[key] if node[key] is not None else child
                node = node[key]
        elif last:
            node[key] = leaf
        else:
            node = node.setdefault(key, child)


def _template(node, columns: list[str]) -> str:
    if isinstance(node, _Leaf):
        columns.append(node.column)
        return "%s"
    if isinstance(node, list):
        return "[" + ",".join(_template(item, columns) for item in node) + "]"
    return "{" + ",".join(f'"{_escaped(key)}":{_template(value, columns)}' for key, value in node.items()) + "}"


def _escaped(key: str) -> str:
    return key.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


def _schema_of(signal: str, tree: dict) -> dict:
    return {
        "title": "nexus." + ".".join(part for part in signal.split("/") if part),
        "description": f"Nexus signal '{signal}', one message per record row (tick); log time = the tick's sim "
                       "time. A number that was not finite is null.",
        "type": "object",
        "properties": {key: _node_schema(signal, key, value) for key, value in tree.items()},
    }


def _node_schema(signal: str, field_path: str, node) -> dict:
    field_name = "" if field_path == VALUE else field_path
    if isinstance(node, _Leaf):
        return {"type": "integer" if node.integer else "number", "description": _described(signal, field_name)}
    if isinstance(node, list):
        return {"type": "array", "minItems": len(node), "maxItems": len(node),
                "description": _described(signal, field_name),
                "items": _node_schema(signal, field_path, node[0]) if not isinstance(node[0], _Leaf)
                else {"type": "integer" if node[0].integer else "number"}}
    return {"type": "object", "description": _described(signal, field_name),
            "properties": {key: _node_schema(signal, f"{field_name}.{key}".lstrip("."), value)
                           for key, value in node.items()}}


def _described(signal: str, field_name: str) -> str:
    unit = unit_of(signal, field_name)
    if unit.elements or not unit.unit:  # a field of several units names each in its meaning
        return unit.meaning
    return f"{unit.meaning} [{unit.unit}]"
