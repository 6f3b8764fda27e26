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
``landed_height`` of its start height (or the descent's goal has sunk to it),
vertically slower than ``landed_speed``, for ``landed_time``; then it writes
``armed`` = 0 (the controller outputs zeros on this same tick) and sets the
loop's done flag, which ends the run after the tick. Without the start hook
(a ring flown without start-up) it writes nothing.

It also reads the estimator's ``estimate_status`` and ``estimate_reset``
(defaults: trusted, no reset, which the truth estimator leaves): the start
waits for alignment, a loss of the horizontal position in the air holds and
then lands in place, and every position goal is shifted by the resets (see
:mod:`nexus.guidance.kernels`). ``mission_phase`` records the phase flown.

The prim's numbers are declared once in :data:`MISSION_SPEC` and read and
checked by :func:`nexus.schemas.reader.read_prim`. What changes during the
run (the phase, the landed detection, the time each phase began) is state
the engine owns (``mission`` and ``entered``): reset at start, snapshotted
and restored with the tick, passed to the kernel as in/out arguments. The leg
table and the landing rules the start hook fills are constant through a run
and stay on the component. ``phase`` and ``transitions`` read the state back
for tests and reports.
:class:`nexus.guidance.host_mission.HostMissionGuidance` is the same mission
as a host stage.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar
from nexus.estimation.estimate_status import RESET_SIGNAL, STATUS_SIGNAL, TRUSTED
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.kernels import MAX_LEGS, MissionLeg, MissionRules, MissionState, fly_mission
from nexus.guidance.mission_base import MissionComponent
from nexus.guidance.profile import PHASES, MissionPlan, MissionProfile, heading_of
from nexus.guidance.setpoint import Setpoint

__all__ = ["MISSION_SPEC", "MissionGuidance", "heading_of"]

_DEFAULT = MissionProfile()


def _number(key: str, attr: str, unit: str, doc: str, **bounds) -> Param:
    """A profile field as a float parameter, its default the default profile's."""
    return Param(key, attr, "float", getattr(_DEFAULT, key), unit, doc, **bounds)


def _empty_state(component, ctx) -> MissionState:
    """Not planned (the kernel writes nothing until the start hook plans), phase 0, no rest yet."""
    return MissionState()


#: The prim's numbers, each a :class:`MissionProfile` field of the same name.
MISSION_PARAMS = (
    _number("altitude", "nexus:altitude", "m", "Height of the hover above the start", low=0.0, open_low=True),
    _number("climb_speed", "nexus:climbSpeed", "m/s", "Average climb speed of the take-off", low=0.0, open_low=True),
    _number("hold_time", "nexus:holdTime", "s", "Hover before the yaw sweep", low=0.0),
    _number("yaw_sweep", "nexus:yawSweep", "deg", "Heading change each side of the start heading; 0 skips the sweep",
            low=0.0, high=180.0),
    _number("yaw_rate", "nexus:yawRate", "deg/s", "Average turn rate of each sweep leg", low=0.0, open_low=True),
    _number("yaw_dwell", "nexus:yawDwell", "s", "Pause after each sweep leg", low=0.0),
    _number("return_speed", "nexus:returnSpeed", "m/s", "Average speed of the return above the NED origin",
            low=0.0, open_low=True),
    _number("land_speed", "nexus:landSpeed", "m/s", "Descent speed of the landing", low=0.0, open_low=True),
    _number("landed_time", "nexus:landedTime", "s",
            "Time the vehicle must rest on the ground before the guidance disarms and ends the run", low=0.0),
    _number("position_loss_hold", "nexus:positionLossHold", "s",
            "Hold of height and heading after the estimate's horizontal position turns invalid in the air, before "
            "descending in place (PX4's failsafe delay COM_FAIL_ACT_T)", low=0.0),
)
#: What a mission stage reads and writes, device or host.
MISSION_INPUTS = (
    Input("estimate", PoseTwist, doc="Where the vehicle is: the plan starts there, the landing checks it"),
    Input("time", wp.float64),
    Input(STATUS_SIGNAL, wp.int32, default=TRUSTED,
          doc="The estimator's status bits: the start waits for READY and HORIZONTAL_VALID, a loss of HORIZONTAL_VALID lands in place "
              "(trusted when no estimator writes it)"),
    Input(RESET_SIGNAL, wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
          doc="Sum of the estimator's position resets [m, NED]: added to every position goal (none when unwritten)"),
)
MISSION_OUTPUTS = (
    Output("setpoint", Setpoint, recorded=True, doc="Position goal [m, NED] and heading [rad] at the tick's time"),
    Output("armed", wp.int32, recorded=True, doc="1 from the start, 0 once landed"),
    Output("mission_phase", wp.int32, recorded=True, default=-1,
           doc="Index into nexus.guidance.profile.PHASES of the phase flown; -1 before the first"),
)

MISSION_SPEC = Spec(
    name="Mission",
    schema="NexusMissionAPI",
    noun="mission",
    doc="A mission for the mission guidance: take off straight up to nexus:altitude, hold, turn the heading to "
        "+nexus:yawSweep, to -nexus:yawSweep and back, return above the NED origin, land, disarm and end the run. "
        "Positions are relative to where the vehicle rests at the start; headings to the way it faces. The defaults "
        "fly in about 28 s.",
    params=MISSION_PARAMS,
    inputs=MISSION_INPUTS,
    outputs=MISSION_OUTPUTS,
    state=(
        StateVar("mission", MissionState, (1,), _empty_state, "phase and landed detection"),
        StateVar("entered", wp.float64, (len(PHASES),), -1.0, "sim time each phase began [s]; -1 not yet"),
    ),
    stage="mission",
    kind="guide",
)


class MissionGuidance(MissionComponent):
    """Writes ``setpoint`` and ``armed`` from a mission profile on the device; ends the run once landed."""

    spec = MISSION_SPEC

    def __init__(self, name: str = "/scene/mission", profile: MissionProfile | None = None, check_period: float = 0.04):
        super().__init__(name, profile, check_period)
        self.legs = self.rules = None
        self._store = None

    @classmethod
    def from_prim(cls, prim, values, ctx) -> MissionGuidance:
        """The guidance for a scene prim applying ``NexusMissionAPI``: the default profile with the prim's values."""
        return cls(str(prim.GetPath()), MissionProfile().with_(**values))

    def stages(self) -> list[Stage]:
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=self.reads(), writes=self.writes(),
                      finishes=True, start=self._plan)]

    def prepare(self, ctx) -> None:
        """The constant tables (filled by the start hook) and, for reading the state back, the engine's store."""
        device = ctx.device
        self.worlds = ctx.worlds
        self.legs = wp.zeros((ctx.worlds, MAX_LEGS), dtype=MissionLeg, device=device)
        self.rules = wp.zeros(ctx.worlds, dtype=MissionRules, device=device)
        self._store = getattr(ctx, "states", None)

    # -- start-up (host) ----------------------------------------------------------------

    def _plan(self, io) -> None:
        """Plan each world from its first estimate, fill the constant tables and give the stage its first state."""
        estimates = io["estimate"].numpy()
        times = io["time"].numpy()
        device = self.legs.device
        legs_table = np.zeros(self.legs.shape, dtype=self.legs.numpy().dtype)
        rules_table = []
        states = []
        self.plans = []
        for world in range(self.worlds):
            first, now = estimates[world], float(times[world])
            position = first["position"]
            start = np.array([position[0], position[1], position[2]], dtype=np.float64)
            plan = self.plan_for(world, start, heading_of(first["attitude"]), now)
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
            legs_table[world, : len(legs)] = wp.array(legs, dtype=MissionLeg, device="cpu").numpy()
            rules = MissionRules()
            rules.legs = len(legs)
            rules.ground_z = plan.ground_z
            rules.land_speed = self.profile.land_speed
            rules.landed_height = self.profile.landed_height
            rules.landed_speed = self.profile.landed_speed
            rules.landed_time = self.profile.landed_time
            rules.check_period = self.check_period
            rules.loss_hold = self.profile.position_loss_hold
            rules_table.append(rules)
            # The state the stage's first run reads: planned, no phase yet, the first landed check due now.
            state = MissionState()
            state.planned = 1
            state.phase = -1
            state.next_check = now
            states.append(state)
            self.plans.append(plan)
        self.legs.assign(wp.array(legs_table, dtype=MissionLeg, device=device))
        self.rules.assign(wp.array(rules_table, dtype=MissionRules, device=device))
        first_state = io.state_in["mission"]
        first_state.assign(wp.array(states, dtype=MissionState, device=device).reshape(first_state.shape))
        io.state_in["entered"].fill_(-1.0)
        self.plan = self.plans[0]

    def plan_for(self, world: int, start: np.ndarray, start_yaw: float, now: float) -> MissionPlan:
        """The plan world (slot) ``world`` flies from ``start`` [m, NED] and ``start_yaw`` [rad] from ``now`` [s]:
        the profile's, the same for every world (a fleet's guidance gives each vehicle its own)."""
        return MissionPlan(self.profile, start, start_yaw, start_time=now)

    # -- the stage (device) -------------------------------------------------------------

    def run(self, io) -> None:
        wp.launch(
            fly_mission, self.worlds,
            inputs=[io["time"], io["estimate"], io[STATUS_SIGNAL], io[RESET_SIGNAL], self.legs, self.rules,
                    io.state_in["mission"], io.state_in["entered"]],
            outputs=[io.state_out["mission"], io.state_out["entered"], io["setpoint"], io["armed"],
                     io["mission_phase"], io.done],
            device=io.device,
        )

    # -- reading back (host) ------------------------------------------------------------

    def _state(self, name: str):
        """The engine's state array ``name`` of this guidance (None before the ring is built)."""
        arrays = self._store.of(self) if self._store is not None else {}
        return arrays.get(name)

    @property
    def phase(self) -> str:
        """The phase flown now: ``start`` before the first stage, then one of PHASES."""
        state = self._state("mission")
        if state is None:
            return "start"
        state = state.numpy()[0, 0]
        index = int(state["phase"])
        return PHASES[index] if state["planned"] and index >= 0 else "start"

    @property
    def transitions(self) -> list[tuple[float, str]]:
        """(sim time [s], phase) at each change of phase, the first at the start."""
        entered = self._state("entered")
        if entered is None:
            return []
        times = entered.numpy()[0]
        return [(float(times[i]), PHASES[i]) for i in sorted(range(len(times)), key=lambda i: (times[i], i)) if times[i] >= 0.0]

