"""Nexus USD API schemas, shipped as a codeless schema plugin.

The folder holds ``plugInfo.json`` (which declares each schema as a
single-apply API schema), ``generatedSchema.usda`` (its properties, types,
fallbacks and docs) and ``components.json`` (schema -> component class), all
three generated from the component specs by ``nexus schema --write``
(:mod:`nexus.schemas.generate`). :func:`register` hands the folder to USD's
plugin registry.

Register before the process opens its first USD stage, Newton's importer
included: USD builds its schema registry once, and a plugin registered after
that is ignored without any error. The package's ``__init__`` is expected to
call :func:`register` so that importing :mod:`nexus` is enough.

.. code-block:: python

    from nexus import schemas
    schemas.register()
    stage = Usd.Stage.Open("vehicles/astro_max_base.usda")
    imu = stage.GetPrimAtPath("/vehicle/body/base/Imu")
    imu.HasAPI("NexusImuAPI")                      # True
    imu.GetAttribute("nexus:rate").Get()           # authored value or fallback [Hz]
"""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from pxr import Plug, Usd

__all__ = ["API_SCHEMAS", "register", "schema_properties"]

_FOLDER = os.path.dirname(os.path.abspath(__file__))

#: Names of every API schema this plugin declares, from the index ``nexus schema --write`` generates.
with open(os.path.join(_FOLDER, "components.json")) as _index:
    API_SCHEMAS: tuple[str, ...] = tuple(json.load(_index)["schemas"])
_lock = threading.Lock()
_registered = False


def register() -> None:
    """Register the Nexus schema plugin with USD, once per process.

    Later calls do nothing. Call it before the first stage is opened.

    Raises:
        RuntimeError: USD's schema registry does not know the Nexus schemas
            after registration, which happens when a stage was opened (and the
            registry built) before this call.
    """
    global _registered
    with _lock:
        if _registered:
            return
        Plug.Registry().RegisterPlugins(_FOLDER)
        if Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(API_SCHEMAS[0]) is None:
            raise RuntimeError(
                "USD did not load the Nexus schemas from "
                f"{_FOLDER}: a USD stage was opened before nexus.schemas.register() ran, "
                "so the schema registry was already built. Import nexus (or call "
                "nexus.schemas.register()) before opening any stage."
            )
        _registered = True


def schema_properties(api_name: str) -> dict[str, tuple[str, Any]]:
    """The properties an API schema declares, read from USD's schema registry.

    Args:
        api_name: An applied API schema name, e.g. ``"NexusImuAPI"``.

    Returns:
        A mapping from property name (``"nexus:rate"``) to ``(type name,
        fallback)``. The type name is the Sdf value type name (``"float"``,
        ``"float3"``, ``"bool"``, ``"int"``, ``"double"``), or ``"rel"`` for a
        relationship, whose fallback is ``None``.

    Raises:
        KeyError: USD knows no applied API schema of that name.
    """
    register()

    definition = Usd.SchemaRegistry().FindAppliedAPIPrimDefinition(api_name)
    if definition is None:
        raise KeyError(f"unknown API schema {api_name!r}; Nexus declares {', '.join(API_SCHEMAS)}")
    properties: dict[str, tuple[str, Any]] = {}
    for name in definition.GetPropertyNames():
        attribute = definition.GetAttributeDefinition(name)
        if attribute:
            properties[name] = (str(attribute.GetTypeName()), attribute.GetFallbackValue())
        else:
            properties[name] = ("rel", None)
    return properties
