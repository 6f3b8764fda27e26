"""The registry of ``nexus bench`` suites: name -> module with ``run`` and ``table``."""

from __future__ import annotations

from nexus.core.lazy import load_module

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
    "vehicles": "nexus.bench.vehicles",
    "learn": "nexus.bench.learn",
    "test": "nexus.bench.test_suite",
    "air": "nexus.bench.air",
    "estimation": "nexus.bench.estimation",
    "scale": "nexus.bench.scale",
    "fixed_wing": "nexus.bench.fixed_wing",
    "swarm": "nexus.bench.swarm",
}

DEFAULT_SUITE = "flight"

#: Suite name -> the optional packages it cannot run without, as (import name, pip name). A machine may lack
#: them (the GPU machine gets no CasADi, Ray, polars or imageio-ffmpeg: docs/benchmarking.md, "The GPU
#: check"); the suites not named here need only Nexus's own dependencies.
NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "host": (("casadi", "casadi"), ("onnxruntime", "onnxruntime")),
    "sweep": (("ray", "ray"),),
    "learn": (("gymnasium", "gymnasium"),),
    "test": (("ray", "ray"),),
}


def missing(name: str) -> list[str]:
    """The pip names of the optional packages suite ``name`` needs and this Python cannot import."""
    absent = []
    for module, package in NEEDS.get(name, ()):
        try:
            load_module(module)
        except ImportError:
            absent.append(package)
    return absent


def load(name: str):
    return load_module(SUITES[name])
