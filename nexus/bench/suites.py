"""The registry of ``nexus bench`` suites: name -> module with ``run`` and ``table``."""

from __future__ import annotations

import importlib

#: Suite name -> module path. Each module has ``run(device) -> dict`` and ``table(dict)``.
SUITES: dict[str, str] = {
    "engine": "nexus.bench.engine",
    "sensors": "nexus.bench.sensors",
    "plant": "nexus.bench.plant",
}

DEFAULT_SUITE = "engine"


def load(name: str):
    return importlib.import_module(SUITES[name])
