"""Checking a stage's Nexus prims against Nexus's schemas before anything is built.

Every ``nexus:`` attribute must be declared by a Nexus API schema the prim
applies, with the declared type; every relationship target must exist; every
applied ``Nexus…API`` must be one Nexus ships. Problems are collected and
raised as one ``BuildError`` naming the file, the prim and the property.
"""

from __future__ import annotations

from pathlib import Path

from pxr import Usd

from nexus import schemas
from nexus.core.errors import BuildError
from nexus.schemas import catalog


def nexus_apis(prim) -> list[str]:
    """The Nexus API schemas ``prim`` applies (declared ones and unknown ones alike), and those of registered
    components (:func:`nexus.schemas.catalog.register`)."""
    plugins = catalog.registered()
    return [name for name in prim.GetAppliedSchemas() if name.startswith("Nexus")] + [
        name for name in _listed_api_names(prim)
        if (name.startswith("Nexus") or name in plugins) and name not in prim.GetAppliedSchemas()
    ]


def _listed_api_names(prim) -> list[str]:
    listed = prim.GetMetadata("apiSchemas")
    if listed is None:
        return []
    return [str(item) for item in listed.GetAddedOrExplicitItems()]


def _authored_type(attribute) -> str:
    """The type the file wrote, which USD's composed view hides behind the schema's."""
    for spec in attribute.GetPropertyStack():
        type_name = getattr(spec, "typeName", None)
        if type_name:
            return str(type_name)
    return str(attribute.GetTypeName())


def check_stage(stage, path: Path) -> None:
    """Raise ``BuildError`` listing every bad Nexus prim, attribute or relationship in ``stage``."""
    problems: list[str] = []
    for prim in stage.Traverse():
        apis = nexus_apis(prim)
        declared: dict[str, str] = {}
        for api in apis:
            plugin = catalog.registered().get(api)
            if plugin is not None:  # a registered component's schema: declared by its spec, not by USD
                declared.update(catalog.properties(plugin.spec))
                continue
            if api not in schemas.API_SCHEMAS:
                problems.append(
                    f"{path}: prim {prim.GetPath()} applies unknown schema '{api}'; "
                    f"Nexus declares {', '.join(schemas.API_SCHEMAS)}"
                )
                continue
            for name, (type_name, _fallback) in schemas.schema_properties(api).items():
                declared[name] = type_name
        for attribute in prim.GetAuthoredAttributes():
            name = attribute.GetName()
            if not name.startswith("nexus:"):
                continue
            if name not in declared:
                known = ", ".join(sorted(n for n, t in declared.items() if t != "rel")) or "none"
                problems.append(
                    f"{path}: prim {prim.GetPath()} has unknown attribute '{name}' "
                    f"(its schemas {apis or '[none applied]'} declare: {known}); fix the name or apply the right schema"
                )
                continue
            authored = _authored_type(attribute)
            if declared[name] == "rel":
                problems.append(f"{path}: prim {prim.GetPath()}: '{name}' must be a relationship, not a {authored} attribute")
            elif authored != declared[name]:
                problems.append(
                    f"{path}: prim {prim.GetPath()} attribute '{name}' is {authored}, but its schema declares "
                    f"{declared[name]}; author it as {declared[name]} {name}"
                )
        for relationship in prim.GetAuthoredRelationships():
            name = relationship.GetName()
            if not name.startswith("nexus:"):
                continue
            if name not in declared and not name.startswith("nexus:inputs:"):
                problems.append(f"{path}: prim {prim.GetPath()} has unknown relationship '{name}'")
                continue
            for target in relationship.GetTargets():
                if not stage.GetPrimAtPath(target.GetPrimPath()):
                    problems.append(
                        f"{path}: prim {prim.GetPath()} relationship '{name}' targets {target}, "
                        "which does not exist; point it at an existing prim"
                    )
    problems += _unread_nexus_prims(stage, path)
    if problems:
        if len(problems) == 1:
            raise BuildError(problems[0])
        raise BuildError(f"{path} has {len(problems)} problems:\n" + "\n".join(f"  - {p}" for p in problems))


def _unread_nexus_prims(stage, path: Path) -> list[str]:
    """Prims applying a Nexus schema under an ``over`` that nothing defines: USD composes them, but
    they are not part of the stage a run reads (``Traverse`` skips undefined prims), so they would be
    dropped in silence. Inactive prims (``active = false``) and ``class`` prims are left alone: that
    is how a file switches a component off or shares one."""
    problems = []
    for prim in stage.TraverseAll():
        if prim.IsDefined() or prim.IsAbstract() or not prim.IsActive() or not nexus_apis(prim):
            continue
        over, walk = prim, prim
        while not walk.IsPseudoRoot():  # the outermost 'over' with no definition in any layer
            if not walk.HasDefiningSpecifier():
                over = walk
            walk = walk.GetParent()
        applied = _outermost_apis(nexus_apis(prim))
        problems.append(
            f"{path}: prim {prim.GetPath()} applies {', '.join(applied)} but Nexus never reads it: "
            f"{over.GetPath()} is only an 'over', and no layer defines it; nest it under the prims it belongs to, "
            "e.g. over \"vehicle\" { over \"body\" { over \"base\" { ... } } } for a sensor on the Astro Max's base"
        )
    return problems


def _outermost_apis(names: list[str]) -> list[str]:
    """``names`` less those built into another of them (``NexusSensorAPI`` inside ``NexusRangefinderAPI``)."""
    registry = Usd.SchemaRegistry()
    built_in = set()
    for name in names:
        definition = registry.FindAppliedAPIPrimDefinition(name)
        if definition:
            built_in.update(api for api in definition.GetAppliedAPISchemas() if api != name)
    return [name for name in names if name not in built_in] or names
