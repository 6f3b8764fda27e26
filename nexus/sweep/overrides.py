"""A point's vehicle or scene attributes, applied through a USD override layer in its run folder.

The layer (``vehicle.usda`` or ``scene.usda`` in the run folder) sublayers
the original file and holds only ``over`` opinions for the varied
attributes, so the run is an ordinary run of an ordinary vehicle file: its
``run.json`` names that layer (and its digest), and ``nexus replay``,
``plot`` and ``view`` read it like any other. The original file is never
written.
"""

from __future__ import annotations

from pathlib import Path

from pxr import Sdf, Usd

import nexus  # noqa: F401 (registers the Nexus USD schemas, so schema attributes resolve)
from nexus.core.errors import BuildError
from nexus.plant.assets import resolve_asset
from nexus.runtime.params import _specs, parameters, unknown_name
from nexus.sweep.spec import SweepError

#: USD value types by their scalar kind; a vector type (``float3``) takes a list of that many numbers.
_FLOATS = ("float", "double", "half")
_INTS = ("int", "uint", "int64", "uint64", "uchar")
_TEXT = ("token", "string", "asset")


def _open(kind: str, name: str):
    path = resolve_asset(kind, name)
    return path, Usd.Stage.Open(str(path))


def _fits(type_name: str, value) -> bool:
    """Whether a TOML value can be written to a USD attribute of ``type_name`` (e.g. ``float``, ``float3``)."""
    base = type_name.rstrip("0123456789")
    width = type_name[len(base):]

    def scalar(v) -> bool:
        if base in _FLOATS:
            return isinstance(v, (int, float)) and not isinstance(v, bool)
        if base in _INTS:
            return isinstance(v, int) and not isinstance(v, bool)
        if base == "bool":
            return isinstance(v, bool)
        if base in _TEXT:
            return isinstance(v, str)
        return False

    if width:
        return isinstance(value, list) and len(value) == int(width) and all(scalar(v) for v in value)
    return scalar(value)


def _find(stages, prim_path: str, attribute: str):
    """(kind, attribute) for the first of the vehicle's and the scene's stages that has the prim."""
    for kind, (_, stage) in stages.items():
        prim = stage.GetPrimAtPath(prim_path)
        if prim and prim.IsValid():
            attr = prim.GetAttribute(attribute)
            return kind, prim, attr if attr and attr.IsValid() else None
    return None, None, None


def check_attributes(sweep_path: Path, vehicle: str, scene: str, values: dict[str, list],
                     ranges: dict[str, list] | None = None) -> None:
    """Refuse an unknown prim, an unknown attribute or a value of the wrong type (one line each), and a
    [random] range (``ranges``: key -> [low, high]) that reaches past the attribute's bounds: whichever values
    the random seed draws, the whole range is checked."""
    try:
        stages = {"vehicle": _open("vehicle", vehicle), "scene": _open("scene", scene)}
    except BuildError as error:
        raise SweepError(f"{sweep_path}: {error}") from None
    for key, vals in values.items():
        prim_path, attribute = key.split(" ", 1)
        kind, prim, attr = _find(stages, prim_path, attribute)
        if prim is None:
            raise SweepError(f"{sweep_path}: {key!r}: no prim {prim_path} in the vehicle {stages['vehicle'][0]} "
                             f"or the scene {stages['scene'][0]}")
        if attr is None and kind == "vehicle":
            table = parameters(vehicle)
            try:
                table.resolve(key, "sweep")  # a name the table knows but a sweep does not read says so
            except BuildError as error:
                raise SweepError(f"{sweep_path}: {error}") from None
            raise SweepError(f"{sweep_path}: {unknown_name(key, table.names(), table.vehicle)}")
        if attr is None:
            names = sorted(a.GetName() for a in prim.GetAttributes() if a.GetName().startswith("nexus:"))
            raise SweepError(f"{sweep_path}: {key!r}: the prim {prim_path} of {stages[kind][0]} has no attribute "
                             f"{attribute}; it has {', '.join(names) or 'no nexus: attributes'}")
        type_name = str(attr.GetTypeName())
        for value in vals:
            if not _fits(type_name, value):
                raise SweepError(f"{sweep_path}: {key!r} = {value!r} does not fit the attribute's type "
                                 f"{type_name} (in {stages[kind][0]})")
        param = _param_of(stages[kind][1], prim_path, attribute) if key in (ranges or {}) else None
        for end, value in zip(("low", "high"), ranges[key] if param is not None else ()):
            problem = param.problem(value)
            if problem is not None:
                raise SweepError(f"{sweep_path}: [random]: {key!r}: {end} = {value!r} is out of bounds: the "
                                 f"attribute {problem} (in {stages[kind][0]}); draw from a range inside it")


def _param_of(stage, prim_path: str, attribute: str):
    """The component parameter (its bounds) a Nexus schema of the prim declares for ``attribute``, or None."""
    for path, spec in _specs(stage):
        if path == prim_path:
            for param in spec.all_params:
                if param.attr == attribute:
                    return param
    return None


def write_overrides(folder: Path, vehicle: str, scene: str, attributes: dict) -> tuple[str, str]:
    """Write the override layers for ``attributes`` into ``folder``; returns the (vehicle, scene) to fly.

    Only a file that has a varied attribute gets a layer; the other stays as given.
    """
    if not attributes:
        return vehicle, scene
    stages = {"vehicle": _open("vehicle", vehicle), "scene": _open("scene", scene)}
    by_kind: dict[str, list[tuple[str, str, object]]] = {}
    for key, value in attributes.items():
        prim_path, attribute = key.split(" ", 1)
        kind, _, _ = _find(stages, prim_path, attribute)
        by_kind.setdefault(kind, []).append((prim_path, attribute, value))
    flown = {"vehicle": vehicle, "scene": scene}
    for kind, items in by_kind.items():
        original, _ = stages[kind]
        layer_path = Path(folder) / f"{kind}.usda"
        # A process that flew this point before (a Ray worker on --resume) may still hold the folder's old
        # layer in USD's registry, where CreateNew refuses the identifier: take that one and write it afresh.
        layer = Sdf.Layer.Find(str(layer_path))
        if layer is None:
            layer = Sdf.Layer.CreateNew(str(layer_path))
        else:
            layer.Clear()
        layer.subLayerPaths.append(str(original))
        source = Sdf.Layer.FindOrOpen(str(original))
        for key in source.pseudoRoot.ListInfoKeys():  # units, up axis, default prim: the layer reads as the file
            if key not in ("subLayers", "subLayerOffsets", "primChildren"):
                layer.pseudoRoot.SetInfo(key, source.pseudoRoot.GetInfo(key))
        stage = Usd.Stage.Open(layer)
        stage.SetEditTarget(Usd.EditTarget(layer))
        for prim_path, attribute, value in items:
            attr = stage.GetPrimAtPath(prim_path).GetAttribute(attribute)
            written = tuple(value) if isinstance(value, list) else value
            if not attr.Set(written):
                raise SweepError(f"could not write {prim_path} {attribute} = {value!r} into {layer_path}")
        layer.Save()
        flown[kind] = str(layer_path)
    return flown["vehicle"], flown["scene"]
