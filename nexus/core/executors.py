"""Running a plan each tick: stage by stage (eager) or by graph replay (captured).

Both executors run the same stages with the same buffers, so on the CPU a
captured run matches an eager one bit for bit. The eager executor is the
reference and the debugging path; the captured one records each device segment
once with ``wp.ScopedCapture`` and replays it with ``wp.capture_launch``, with
host stages run in Python between replays. If a segment cannot be captured the
build fails and names the stage; nothing falls back to eager execution.
"""

from __future__ import annotations

from collections.abc import Callable

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


class EagerExecutor:
    """Launches every stage, in ring order, every tick."""

    mode = "eager"

    def __init__(self, plan: Plan, ios: dict[int, StageIO], device: str):
        self._calls = [(stage, ios[id(stage)]) for stage in plan.stages]

    def tick(self) -> None:
        for stage, io in self._calls:
            run_stage(stage, io)


class CapturedExecutor:
    """Replays one captured graph per device segment; host stages run between."""

    mode = "captured"

    def __init__(self, plan: Plan, ios: dict[int, StageIO], device: str):
        self.device = device
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

    def _capture(self, segment: Segment, ios: dict[int, StageIO]):
        current: Stage | None = None
        try:
            with wp.ScopedDevice(self.device), wp.ScopedCapture(device=self.device) as capture:
                for current in segment.stages:
                    current.run(ios[id(current)])
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


EXECUTORS = {"eager": EagerExecutor, "captured": CapturedExecutor}
