"""The tick engine: stages, signals, planner, executors. Knows nothing of physics.

The names below load their modules (and Warp) on first use, so that a
module that needs only :mod:`nexus.core.errors` (a command, a file reader)
does not load Warp.
"""

from nexus.core.lazy import lazy_names as _lazy_names

#: Public name -> the module that defines it, loaded on first access (PEP 562).
_PUBLIC: dict[str, str] = {
    "BuildContext": "nexus.core.build_context",
    "Component": "nexus.core.component",
    "resolve_device": "nexus.core.device",
    "BuildError": "nexus.core.errors",
    "CaptureError": "nexus.core.errors",
    "NexusError": "nexus.core.errors",
    "RunError": "nexus.core.errors",
    "Loop": "nexus.core.loop",
    "RunResult": "nexus.core.loop",
    "Plan": "nexus.core.planner",
    "Segment": "nexus.core.planner",
    "plan_segments": "nexus.core.planner",
    "DevicePort": "nexus.core.ports",
    "HostSlot": "nexus.core.ports",
    "RING_ORDER": "nexus.core.ring",
    "RngTree": "nexus.core.rng",
    "NO_DEFAULT": "nexus.core.signals",
    "Read": "nexus.core.signals",
    "Write": "nexus.core.signals",
    "Stage": "nexus.core.stage",
    "StageIO": "nexus.core.stage_io",
}

__all__ = [
    "BuildContext", "BuildError", "CaptureError", "Component", "DevicePort", "HostSlot", "Loop",
    "NO_DEFAULT", "NexusError", "Plan", "RING_ORDER", "Read", "RngTree", "RunError", "RunResult",
    "Segment", "Stage", "StageIO", "Write", "plan_segments", "resolve_device",
]


__getattr__, __dir__ = _lazy_names("nexus.core", _PUBLIC, globals())
