"""Running a plan each tick: stage by stage (eager) or by graph replay (captured).

Both executors run the same stages with the same buffers, so on the CPU a
captured run matches an eager one bit for bit. The eager executor is the
reference and the debugging path; the captured one records each device segment
once with ``wp.ScopedCapture`` and replays it with ``wp.capture_launch``, with
host stages run in Python between replays. If a segment cannot be captured the
build fails and names the stage; nothing falls back to eager execution.

When the ring is one graph and the loop asks for K ticks per replay, the
captured executor also records K copies of the ring, one after the other, into
a second graph (an unrolled capture: Warp's conditional graph nodes exist only
on CUDA), so K ticks cost one launch. The one-tick graph stays for the ticks
left over at the end of a run.

Capture also counts the graph's nodes (kernel launches, copies and memsets)
per tick: on a GPU a small vehicle is bound by launch latency, so this count
predicts its speed.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from functools import partial

import warp as wp

from nexus.core.errors import CaptureError, NexusError, RunError
from nexus.core.planner import Plan, Segment
from nexus.core.stage import Stage
from nexus.core.stage_io import StageIO


def run_stage(stage: Stage, io: StageIO) -> None:
    """Run one stage, turning an unexpected exception into a ``RunError`` that names it."""
    try:
        stage.run(io)
    except NexusError:
        raise
    except Exception as error:
        raise RunError(f"{stage.where} failed: {type(error).__name__}: {error}") from error


def graph_nodes(graph) -> int | None:
    """Operations in a captured graph: from Warp's CPU recording, or CUDA's own count; None if unknown."""
    recording = getattr(graph, "_apic_capture", None)
    count = getattr(recording, "operation_count", None)
    if isinstance(count, int):
        return count
    handle = getattr(graph, "graph", None)
    if handle is not None and getattr(handle, "value", None):
        try:
            nodes = ctypes.c_size_t(0)
            if ctypes.CDLL("libcuda.so.1").cuGraphGetNodes(ctypes.c_void_p(handle.value), None, ctypes.byref(nodes)) == 0:
                return int(nodes.value)
        except OSError:
            return None
    return None


class EagerExecutor:
    """Launches every stage, in ring order, every tick."""

    mode = "eager"
    #: Not counted: nothing is captured.
    nodes_per_tick = None

    def __init__(self, plan: Plan, ios: dict[int, StageIO], device: str, ticks_per_replay: int = 1,
                 conditions: dict[int, wp.array] | None = None):
        if ticks_per_replay != 1:
            raise ValueError("the eager executor runs one tick at a time")
        self._calls = [(stage, ios[id(stage)]) for stage in plan.stages]

    def tick(self) -> None:
        for stage, io in self._calls:
            run_stage(stage, io)

    def replay(self) -> None:
        self.tick()


class CapturedExecutor:
    """Replays one captured graph per device segment; host stages run between."""

    mode = "captured"

    def __init__(self, plan: Plan, ios: dict[int, StageIO], device: str, ticks_per_replay: int = 1,
                 conditions: dict[int, wp.array] | None = None):
        self.device = device
        #: Stage id -> the one-element flag whose conditional node runs it (the scheduled stages of
        #: :mod:`nexus.core.schedule`); any other stage is captured as it is.
        self.conditions = dict(conditions or {})
        self.graphs: list = []
        self._steps: list[Callable[[], None]] = []
        for segment in plan.segments:
            if segment.host:
                stage = segment.stages[0]
                io = ios[id(stage)]
                self._steps.append(lambda stage=stage, io=io: run_stage(stage, io))
            else:
                graph = self._capture(segment, ios)
                self.graphs.append(graph)
                self._steps.append(lambda graph=graph: wp.capture_launch(graph))
        counts = [graph_nodes(graph) for graph in self.graphs]
        #: Graph nodes one tick replays (all device segments), or None where Warp cannot tell.
        self.nodes_per_tick = sum(counts) if counts and None not in counts else None
        self.ticks_per_replay = int(ticks_per_replay)
        self.replay_graph = None
        #: Ticks -> a graph of the device stages alone run that many times (powers of two), for the
        #: ticks every host stage leaves alone.
        self.between: dict[int, object] = {}
        if plan.hosts_idle_between:
            device_only = Segment(host=False, stages=plan.device_stages)
            ticks = 1
            while ticks <= self.ticks_per_replay:
                self.between[ticks] = self._capture(device_only, ios, ticks)
                ticks *= 2
        elif self.ticks_per_replay > 1:
            if plan.has_host_stage or len(plan.segments) != 1:
                raise ValueError("several ticks per replay need a ring of one graph (no host stage)")
            self.replay_graph = self._capture(plan.segments[0], ios, self.ticks_per_replay)

    def _capture(self, segment: Segment, ios: dict[int, StageIO], ticks: int = 1):
        current: Stage | None = None
        try:
            with wp.ScopedDevice(self.device), wp.ScopedCapture(device=self.device) as capture:
                for _ in range(ticks):
                    for current in segment.stages:
                        flag = self.conditions.get(id(current))
                        if flag is None:
                            current.run(ios[id(current)])
                        else:  # launched only on the ticks the clock's kernel flags
                            wp.capture_if(flag, on_true=partial(current.run, ios[id(current)]))
        except Exception as error:
            where = current.where if current is not None else "the segment's start"
            raise CaptureError(
                f"capturing {segment.text()} on {self.device} failed in {where}: "
                f"{type(error).__name__}: {error}. A device stage may only launch Warp work "
                "(no host reads, allocations or Python decisions on device values); "
                "run with --eager to debug it outside a graph, or make it a host stage."
            ) from error
        return capture.graph

    def tick(self) -> None:
        for step in self._steps:
            step()

    def device_ticks(self, ticks: int) -> None:
        """Run ``ticks`` ticks of the device stages alone (no host stage has work on them): one launch per
        set bit of ``ticks``, largest first."""
        size = 1 << (int(ticks).bit_length() - 1)
        while ticks > 0:
            if ticks >= size:
                wp.capture_launch(self.between[size])
                ticks -= size
            size >>= 1

    def replay(self) -> None:
        """Run ``ticks_per_replay`` ticks with one launch."""
        if self.replay_graph is None:
            self.tick()
        else:
            wp.capture_launch(self.replay_graph)


EXECUTORS = {"eager": EagerExecutor, "captured": CapturedExecutor}
