"""The registry of ``nexus bench`` suites: name -> module with ``run`` and ``table``."""

from __future__ import annotations

import importlib

#: Suite name -> module path. Each module has ``run(device) -> dict`` and ``table(dict)``.
SUITES: dict[str, str] = {
    "flight": "nexus.bench.flight",
    "engine": "nexus.bench.engine",
    "plant": "nexus.bench.plant",
    "sensors": "nexus.bench.sensors",
    "px4": "nexus.bench.px4",
    "host": "nexus.bench.host",
    "worlds": "nexus.bench.worlds",
    "render": "nexus.bench.render",
    "sweep": "nexus.bench.sweep",
    "diff": "nexus.bench.diff",
}

DEFAULT_SUITE = "flight"


def load(name: str):
    return importlib.import_module(SUITES[name])
