"""Mission guidance: flies a :class:`~nexus.guidance.profile.MissionProfile` on the device and ends the run.

A device stage of kind ``guide``, so a PID flight has no host stage and its
whole tick is one graph. The plan needs where the vehicle rests and the way it
faces, which only the first estimate tells: the stage's ``start`` hook, run
once by the start-up (after the estimator's first stage, before the first
tick), reads the estimate on the host, computes the
:class:`~nexus.guidance.profile.MissionPlan` and fills the device leg table
the captured kernel reads (the table exists before capture; only its contents
change). Every tick after that the kernel
(:func:`nexus.guidance.kernels.fly_mission`) looks the plan up at the tick's
``time``, writes ``setpoint`` and ``armed`` = 1, and during the landing checks
every ``check_period`` seconds whether the vehicle has stayed within
``landed_height`` of its start height, slower than ``landed_speed``, for
``landed_time``; then it writes ``armed`` = 0 (the controller outputs zeros on
this same tick) and sets the loop's done flag, which ends the run after the
tick. Without the start hook (a ring flown without start-up) it writes nothing.

The phase and the time each phase began live on the device too; ``phase`` and
``transitions`` read them back for tests and reports.
:class:`nexus.guidance.host_mission.HostMissionGuidance` is the same mission
as a host stage.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.guidance.mission_base import MissionComponent
from nexus.guidance.kernels import MAX_LEGS, MissionLeg, MissionRules, MissionState, fly_mission
from nexus.guidance.profile import PHASES, MissionPlan, MissionProfile, heading_of

__all__ = ["MissionGuidance", "build_mission", "heading_of", "profile_from_prim"]


class MissionGuidance(MissionComponent):
    """Writes ``setpoint`` and ``armed`` from a mission profile on the device; ends the run once landed."""

    def __init__(self, name: str = "/scene/mission", profile: MissionProfile | None = None, check_period: float = 0.04):
        super().__init__(name, profile, check_period)
        self.legs = self.rules = self.state = self.entered = None

    def stages(self) -> list[Stage]:
        return [
            Stage(
                "mission", "guide", self._run, finishes=True, start=self._plan,
                reads=(Read("estimate", PoseTwist, (1,)), Read("time", wp.float64, (1,))),
                writes=(Write("setpoint", Setpoint, (1,)), Write("armed", wp.int32, (1,))),
            )
        ]

    def prepare(self, ctx) -> None:
        device = ctx.device
        self.legs = wp.zeros(MAX_LEGS, dtype=MissionLeg, device=device)
        self.rules = wp.zeros(1, dtype=MissionRules, device=device)
        self.state = wp.zeros(1, dtype=MissionState, device=device)
        self.entered = wp.full(len(PHASES), -1.0, dtype=wp.float64, device=device)

    # -- start-up (host) ----------------------------------------------------------------

    def _plan(self, io) -> None:
        """Plan from the first estimate and fill the device tables the kernel reads."""
        first = io["estimate"].numpy()[0]
        now = float(io["time"].numpy()[0])
        position = first["position"]
        start = np.array([position[0], position[1], position[2]], dtype=np.float64)
        plan = MissionPlan(self.profile, start, heading_of(first["attitude"]), start_time=now)
        if len(plan.legs) > MAX_LEGS:
            raise BuildError(f"{self.name}: the mission has {len(plan.legs)} legs, more than the {MAX_LEGS} the device table holds")
        legs = []
        for leg in plan.legs:
            item = MissionLeg()
            item.phase = PHASES.index(leg.phase)
            item.start_time = leg.start_time
            item.end_time = leg.end_time
            item.duration = leg.duration
            item.start = wp.vec3d(*(float(v) for v in leg.start))
            item.end = wp.vec3d(*(float(v) for v in leg.end))
            item.start_yaw = leg.start_yaw
            item.end_yaw = leg.end_yaw
            legs.append(item)
        device = self.legs.device
        wp.copy(self.legs, wp.array(legs, dtype=MissionLeg, device=device), count=len(legs))
        rules = MissionRules()
        rules.legs = len(legs)
        rules.ground_z = plan.ground_z
        rules.land_speed = self.profile.land_speed
        rules.landed_height = self.profile.landed_height
        rules.landed_speed = self.profile.landed_speed
        rules.landed_time = self.profile.landed_time
        rules.check_period = self.check_period
        self.rules.assign(wp.array([rules], dtype=MissionRules, device=device))
        state = MissionState()
        state.planned = 1
        state.phase = -1
        state.next_check = now
        self.state.assign(wp.array([state], dtype=MissionState, device=device))
        self.entered.fill_(-1.0)
        self.plan = plan

    # -- the stage (device) -------------------------------------------------------------

    def _run(self, io) -> None:
        wp.launch(
            fly_mission, 1,
            inputs=[io["time"], io["estimate"], self.legs, self.rules, self.state, self.entered],
            outputs=[io["setpoint"], io["armed"], io.done], device=io.device,
        )

    # -- reading back (host) ------------------------------------------------------------

    @property
    def phase(self) -> str:
        """The phase flown now: ``start`` before the first stage, then one of PHASES."""
        if self.state is None:
            return "start"
        state = self.state.numpy()[0]
        index = int(state["phase"])
        return PHASES[index] if state["planned"] and index >= 0 else "start"

    @property
    def transitions(self) -> list[tuple[float, str]]:
        """(sim time [s], phase) at each change of phase, the first at the start."""
        if self.entered is None:
            return []
        times = self.entered.numpy()
        return [(float(times[i]), PHASES[i]) for i in sorted(range(len(times)), key=lambda i: (times[i], i)) if times[i] >= 0.0]


#: Prim attribute -> MissionProfile field.
PRIM_FIELDS = {
    "nexus:altitude": "altitude",
    "nexus:climbSpeed": "climb_speed",
    "nexus:holdTime": "hold_time",
    "nexus:yawSweep": "yaw_sweep",
    "nexus:yawRate": "yaw_rate",
    "nexus:yawDwell": "yaw_dwell",
    "nexus:returnSpeed": "return_speed",
    "nexus:landSpeed": "land_speed",
    "nexus:landedTime": "landed_time",
}


def profile_from_prim(prim, base: MissionProfile | None = None) -> MissionProfile:
    """A profile from a ``NexusMissionAPI`` prim: its authored values, else the schema's fallbacks."""
    values = {}
    for attribute_name, field_name in PRIM_FIELDS.items():
        attribute = prim.GetAttribute(attribute_name)
        value = attribute.Get() if attribute else None
        if value is not None:
            values[field_name] = float(value)
    return (base or MissionProfile()).with_(**values)


def build_mission(prim, ctx) -> MissionGuidance:
    """The component for a prim applying ``NexusMissionAPI``; ``ctx`` is :class:`nexus.assembly.PrimContext`."""
    path = str(prim.GetPath())
    profile = profile_from_prim(prim)
    try:
        profile.check(f"mission prim {path}")
    except ValueError as error:
        message = str(error)
        for attribute_name, field_name in PRIM_FIELDS.items():  # name the attribute as authored
            message = message.replace(f": {field_name} must", f": {attribute_name} must")
        scene = getattr(getattr(ctx, "plant", None), "scene_path", None) or getattr(ctx, "path", "")
        raise BuildError(f"{scene}: {message}") from None
    return MissionGuidance(path, profile)
