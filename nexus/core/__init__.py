"""The tick engine: stages, signals, planner, executors. Knows nothing of physics."""

from nexus.core.build_context import BuildContext
from nexus.core.component import Component
from nexus.core.device import resolve_device
from nexus.core.errors import BuildError, CaptureError, NexusError, RunError
from nexus.core.loop import Loop, RunResult
from nexus.core.planner import Plan, Segment, plan_segments
from nexus.core.ports import DevicePort, HostSlot
from nexus.core.ring import RING_ORDER
from nexus.core.rng import RngTree
from nexus.core.signals import NO_DEFAULT, Read, Write
from nexus.core.stage import Stage
from nexus.core.stage_io import StageIO

__all__ = [
    "BuildContext", "BuildError", "CaptureError", "Component", "DevicePort", "HostSlot", "Loop",
    "NO_DEFAULT", "NexusError", "Plan", "RING_ORDER", "Read", "RngTree", "RunError", "RunResult",
    "Segment", "Stage", "StageIO", "Write", "plan_segments", "resolve_device",
]
