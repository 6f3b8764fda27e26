"""The roles a flight's components play, and the wiring rules that name a missing one.

The engine (:mod:`nexus.core`) wires signals without knowing what they mean.
A flight gives two of them a meaning: ``estimate`` is written by an
estimator and read by guidance and control stages, and ``setpoint`` is
written by a guidance for a controller. These rules turn "nobody writes
'estimate'" into "the run has no estimator", and catch a guidance whose
setpoint nobody reads (a mission flown with PX4, which guides itself).
"""

from __future__ import annotations

from collections.abc import Sequence

from nexus.core.signals import Read
from nexus.core.stage import Stage
from nexus.core.wiring import Output, WiringRule

#: The estimate signal (:class:`~nexus.estimation.types.PoseTwist`) and the setpoint signal.
ESTIMATE = "estimate"
SETPOINT = "setpoint"
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
FLIGHT_RULES: tuple[WiringRule, ...] = (EstimatorNeeded(), SetpointRead())
