"""The roles a flight's components play, and the wiring rules that name a missing one.

The engine (:mod:`nexus.core`) wires signals without knowing what they mean.
A flight gives two of them a meaning: ``estimate`` is written by an
estimator and read by guidance and control stages, and ``setpoint`` is
written by a guidance for a controller. These rules turn "nobody writes
'estimate'" into "the run has no estimator", and catch a guidance whose
setpoint nobody reads (a mission flown with PX4, which guides itself).
``reference`` is the trajectory a tracking guidance (a figure eight,
waypoints) writes from the scene for a controller that follows it (the MPC).
"""

from __future__ import annotations

from collections.abc import Sequence

from nexus.core.signals import Read
from nexus.core.stage import Stage
from nexus.core.wiring import Output, WiringRule
from nexus.guidance.tracking import TRACKING_APIS
from nexus.plant.assets import FOLDERS, available

#: The estimate signal (:class:`~nexus.estimation.types.PoseTwist`) and the setpoint signal.
ESTIMATE = "estimate"
SETPOINT = "setpoint"
REFERENCE = "reference"
#: Stage kinds whose reading of the estimate needs an estimator in the run.
ESTIMATE_READER_KINDS = ("guide", "control")
GUIDANCE_KIND = "guide"


class EstimatorNeeded(WiringRule):
    """A guidance or controller that reads the estimate needs an estimator in the run."""

    def missing_writer(self, stage: Stage, read: Read) -> str | None:
        if read.signal == ESTIMATE and stage.kind in ESTIMATE_READER_KINDS:
            return (
                f"{stage.where} reads the estimate, but the run has no estimator to write it; "
                "add an estimator component to the vehicle."
            )
        return None


def scenes_with_reference() -> list[str]:
    """The shipped scenes that hold a tracking prim (so their runs write ``reference``), by name."""
    found = []
    for name in available("scene"):
        path = FOLDERS["scene"] / f"{name}.usda"
        if path.is_file() and any(api in path.read_text(errors="replace") for api in TRACKING_APIS):
            found.append(name)
    return found


class ReferenceNeeded(WiringRule):
    """A controller that follows a reference trajectory needs a scene that gives one."""

    def missing_writer(self, stage: Stage, read: Read) -> str | None:
        if read.signal != REFERENCE:
            return None
        scenes = scenes_with_reference()
        choices = (f"--scene {', '.join(scenes[:-1])} or {scenes[-1]}" if len(scenes) > 1 else f"--scene {scenes[0]}"
                   if scenes else "a scene file with a figure-eight or waypoints prim")
        return (
            f"{stage.where} follows a reference trajectory, but the scene gives none (it has no figure-eight or "
            f"waypoints prim); fly it in a scene that does: {choices}."
        )


class SetpointRead(WiringRule):
    """A guidance's setpoint must have a reader."""

    def check(self, outputs: Sequence[Output]) -> list[str]:
        return [
            f"{output.stage.where} writes the setpoint, but no stage reads it (a guidance on a run "
            "whose controller takes no setpoint, such as PX4's); remove the guidance or use a "
            "controller that reads the setpoint."
            for output in outputs
            if output.signal == SETPOINT and output.stage.kind == GUIDANCE_KIND and not output.readers
        ]


#: The rules every flight's loop checks.
FLIGHT_RULES: tuple[WiringRule, ...] = (EstimatorNeeded(), ReferenceNeeded(), SetpointRead())
