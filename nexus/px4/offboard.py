"""A CTBR policy flying PX4 in offboard mode: thrust and body rates as SET_ATTITUDE_TARGET on fixed sim ticks.

With ``--controller px4 --px4-offboard-policy FILE.onnx`` the PX4 controller
gains a host stage, ``offboard``, before its lockstep ``exchange``. Every
``decimation`` ticks (the policy's rate, a whole number of ticks) it builds
the observation the model declares from the vehicle's ``estimate`` and the
scene mission's ``setpoint``, exactly as ``--controller policy`` does
(:func:`nexus.control.policy.features.observe`), runs the model, and sends
its action to PX4's MAVLink API port as ``SET_ATTITUDE_TARGET`` with
``type_mask`` 128 (attitude ignored: body rates and thrust used). PX4's rate
controller, control allocation and mixer then fly what the policy asks.

The action layout is ``ctbr:4`` (ONNX metadata ``nexus:action``), with the
one meaning ``nexus train`` exports and ``nexus run --controller policy``
flies (:class:`nexus.control.policy.features.CtbrScaling`): four values in
[-1, 1], scaled by the model's own ``nexus:ctbr_hover_thrust`` and
``nexus:ctbr_max_rates``. Each is converted here to MAVLink's normalised
thrust, clip(hover · (1 + a₀), 0, 1), and the roll, pitch and yaw rates
aᵢ · max rate [rad/s] about the body's FRD axes (Nexus's rates are FRD, as
PX4's: no sign changes). The policy runs at ``--px4-offboard-rate``, or else
at its ``nexus:policy_hz``, or else at 50 Hz. A model whose layouts, widths or
scaling do not fit is refused when the flight is built, before any stage runs.

Timing follows the mission commander (:mod:`nexus.px4.commander`): each
setpoint leaves before the ``HIL_SENSOR`` of its tick, with a ``TIMESYNC``
request behind it, and the clock holds until PX4 answers, so PX4 has taken
the setpoint while its clock still stands at the tick before, in every run.
PX4 engages offboard only after it has had setpoints for more than a second
(its offboard docs), so the stream starts ``lead_s`` of sim time before the
mode switch (``MAV_CMD_DO_SET_MODE``, custom main mode 6, due at ``at_s``;
it also waits for a home position), and the arm follows ``arm_delay_s``
later. Both commands go through the commander: confirmed, acknowledged, and
a refusal ends the run with PX4's reason. Before PX4 is armed and in
offboard mode it ignores the setpoints, which only prove the link alive.

With several PX4 instances in one world (``--vehicles K``) every instance has
a pilot of its own (:mod:`nexus.px4.fleet_controller`). A fleet policy, whose
observation ends with one ``neighbour_position_heading:3,
neighbour_velocity_heading:3`` pair per other vehicle, flies exactly that many
vehicles plus one: another ``--vehicles`` is refused at the build.
"""

from __future__ import annotations

import logging
import math
import time
from pathlib import Path

import numpy as np

from nexus.control.policy.features import (CTBR_ACTIONS, CTBR_LAYOUT, FEATURES, CtbrScaling, observe, parse_layout,
                                           split_neighbours)
from nexus.control.policy.runners import runner_for
from nexus.core.errors import BuildError, RunError
from nexus.px4.api_link import ApiLinkError, parse_url
from nexus.px4.commander import LockstepCommander
from nexus.px4.errors import CommandUnacknowledgedError
from nexus.px4.mission import (AUTOPILOT_COMPONENT, COMMAND_NAMES, MAV_CMD_COMPONENT_ARM_DISARM, Command,
                                MissionPlan, usec)

log = logging.getLogger("nexus")

OBSERVATION_KEY, ACTION_KEY = "nexus:observation", "nexus:action"
#: SET_ATTITUDE_TARGET's type_mask with only ATTITUDE_TARGET_TYPEMASK_ATTITUDE_IGNORE set: rates and thrust used.
TYPE_MASK_RATES_THRUST = 128
MAV_CMD_DO_SET_MODE = 176
MAV_MODE_FLAG_CUSTOM_MODE_ENABLED = 1
#: PX4's custom main mode for offboard (px4_custom_mode.h); its heartbeat carries it in custom_mode bits 16-23.
PX4_CUSTOM_MAIN_MODE_OFFBOARD = 6
COMMAND_NAMES.setdefault(MAV_CMD_DO_SET_MODE, "MAV_CMD_DO_SET_MODE")
#: TIMESYNC ``ts1`` of the n-th setpoint's barrier: far above the commander's own (its command count).
SETPOINT_BARRIER = 1 << 40

#: Defaults: the policy's rate [Hz] (when neither --px4-offboard-rate nor its nexus:policy_hz gives one), the mode
#: switch [s sim] (PX4 reports home at 2-3 s and arms once its heading
#: has settled, as the mission's arm at 6 s), the stream's lead before it [s] (PX4 wants more than 1 s) and the arm's
#: delay after it [s].
RATE_HZ, AT_S, LEAD_S, ARM_DELAY_S = 50.0, 6.0, 2.0, 0.5


class OffboardError(RunError):
    """The offboard policy gave an action PX4 cannot take, or PX4 did not take a setpoint."""

    reason = "px4-offboard"


class CtbrPolicy:
    """An ONNX (or TorchScript) model declaring a ``nexus:observation`` layout, the ``ctbr:4`` action, its scaling."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        where = f"--px4-offboard-policy {self.path}"
        if not self.path.is_file():
            raise BuildError(f"{where}: no such file; give an ONNX model whose metadata declares "
                             f"{ACTION_KEY}={CTBR_LAYOUT}")
        self.runner = runner_for(self.path, where)
        observation_key, action_key = self.runner.observation_key, self.runner.action_key
        meta = self.runner.metadata
        for key in (observation_key, action_key):
            if key not in meta:
                raise BuildError(f"{where}: {self.runner.declares} no '{key}'; declare the layouts, e.g. "
                                 f"{observation_key}=position_error_heading:3,velocity_heading:3 and "
                                 f"{action_key}={CTBR_LAYOUT}")
        try:
            self.observation = parse_layout(meta[observation_key], FEATURES, observation_key, where)
            action = parse_layout(meta[action_key], CTBR_ACTIONS, action_key, where)
            #: The vehicle's own features, and how many other vehicles' features follow them (a fleet policy's,
            #: as ``nexus train --task swap`` exports it: one pair per other vehicle of the world).
            self.own_observation, self.neighbours = split_neighbours(self.observation, observation_key, where)
        except ValueError as error:
            raise BuildError(str(error)) from None
        if action != [("ctbr", 4)]:
            raise BuildError(f"{where}: {action_key} is '{meta[action_key]}'; a PX4 offboard policy gives "
                             f"{CTBR_LAYOUT} (collective about hover, roll, pitch, yaw rates, each in [-1, 1])")
        try:
            self.scaling = CtbrScaling.from_metadata(meta, where)
        except ValueError as error:
            raise BuildError(str(error)) from None
        policy_hz = meta.get("nexus:policy_hz")
        try:
            #: The rate it was trained at [Hz] (``nexus:policy_hz``), or None.
            self.policy_hz = None if policy_hz is None else float(policy_hz)
        except ValueError:
            self.policy_hz = math.nan
        if self.policy_hz is not None and not self.policy_hz > 0.0:
            raise BuildError(f"{where}: its metadata nexus:policy_hz is {policy_hz!r}; it must be a positive rate [Hz]")
        self.observation_width = sum(w for _, w in self.observation)
        declared = self.runner.input_width
        if declared is not None and declared != self.observation_width:
            raise BuildError(f"{where}: {observation_key} ({meta[observation_key]}) makes {self.observation_width} "
                             f"values, but {self.runner.input_label} takes {declared}; make them agree")
        given = self.runner.output_width(self.observation_width)
        if given is not None and given != 4:
            raise BuildError(f"{where}: {action_key} ({meta[action_key]}) names 4 values, but "
                             f"{self.runner.output_label} gives {given}; export a model with 4 outputs")
        self.inference_us: list[float] = []

    def check_vehicles(self, vehicles: int) -> None:
        """A fleet policy (with neighbour features) flies exactly one more vehicle a world than it has neighbours."""
        if self.neighbours and vehicles != self.neighbours + 1:
            raise BuildError(f"--px4-offboard-policy {self.path}: its {self.runner.observation_key} has "
                             f"{self.neighbours} neighbours, so it flies {self.neighbours + 1} vehicles in one world "
                             f"(one PX4 instance each); this run has --vehicles {vehicles}: give --vehicles "
                             f"{self.neighbours + 1}")

    def act(self, estimate, setpoint, setpoint_velocity, setpoint_acceleration, neighbours=None) -> np.ndarray:
        """The model's ``ctbr`` action (float32, as it gave it) for one estimate and setpoint (and, for a fleet
        policy, the vehicle's neighbour features, float32)."""
        row = observe(self.own_observation, estimate, setpoint, setpoint_velocity, setpoint_acceleration)
        if self.neighbours:
            row = np.concatenate([row, np.asarray(neighbours, dtype=np.float32)])
        row = row[None, :]
        begin = time.perf_counter()
        action = np.asarray(self.runner.run(row), dtype=np.float32).reshape(-1)
        self.inference_us.append((time.perf_counter() - begin) * 1e6)
        return action


class OffboardPlan(MissionPlan):
    """The two commands offboard flight needs: switch PX4 to offboard at ``at_s``, arm ``arm_delay_s`` later."""

    def __init__(self, at_s: float, arm_delay_s: float, gate_limit_s: float = 60.0):
        super().__init__(arm_at_s=at_s + arm_delay_s, gate_limit_s=gate_limit_s)
        self.arm_delay_s = arm_delay_s
        self.pending = Command("offboard", MAV_CMD_DO_SET_MODE, usec(at_s),
                               (float(MAV_MODE_FLAG_CUSTOM_MODE_ENABLED), float(PX4_CUSTOM_MAIN_MODE_OFFBOARD)))
        #: Set by the pilot once setpoints flow: the mode switch waits for it.
        self.streaming = False
        #: PX4's clock [µs] when its heartbeat first said offboard.
        self.offboard_usec: int | None = None

    def note(self, message) -> None:
        super().note(message)
        if (message.get_type() == "HEARTBEAT" and message.get_srcComponent() == AUTOPILOT_COMPONENT
                and self.offboard_usec is None and message.base_mode & MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
                and (message.custom_mode >> 16) & 0xFF == PX4_CUSTOM_MAIN_MODE_OFFBOARD):
            self.offboard_usec = self.stream_usec

    def _gate(self, command: Command) -> str | None:
        if command.label == "offboard" and self.home is None:
            return "a home position (HOME_POSITION: a good EKF)"
        if command.label == "offboard" and not self.streaming:
            return "the setpoint stream (PX4's API stream not heard yet)"
        if command.label == "arm" and self.commands[0].result != 0:
            return "PX4's acceptance of the switch to offboard (COMMAND_ACK)"
        return None

    def _after(self, command: Command) -> None:
        if command.label == "offboard":
            self.pending = Command("arm", MAV_CMD_COMPONENT_ARM_DISARM, command.sent_usec + usec(self.arm_delay_s),
                                   (1.0,))
        else:
            self.report.time_to_arm_s = command.sent_usec * 1e-6


class OffboardPilot:
    """Drives the policy and the plan from the PX4 controller's ``offboard`` stage, one call per tick."""

    def __init__(self, policy: str | Path, *, rate_hz: float | None = None, url: str, at_s: float = AT_S,
                 lead_s: float = LEAD_S, arm_delay_s: float = ARM_DELAY_S, hold_timeout_s: float = 5.0,
                 system_id: int = 1):
        self.policy = CtbrPolicy(policy)
        #: PX4's MAV_SYS_ID (instance i: i + 1): where the setpoints go until PX4's heartbeat names its system.
        self.system_id = int(system_id)
        if rate_hz is None:  # the policy's own rate, as nexus run --controller policy flies it
            rate_hz = RATE_HZ if self.policy.policy_hz is None else self.policy.policy_hz
        self.rate_hz, self.url, self.hold_timeout_s = float(rate_hz), url, hold_timeout_s
        if not self.rate_hz > 0:
            raise BuildError(f"--px4-offboard-rate {rate_hz}: give the policy's rate in Hz, more than 0")
        try:
            parse_url(url)  # a malformed URL is refused with the flight's build
        except ApiLinkError:
            raise BuildError(f"--px4-offboard-url {url!r} is not udpin:HOST:PORT; give e.g. udpin:127.0.0.1:14540 "
                             "(PX4 instance i sends its API stream to 14540 + i)") from None
        self.at_s, self.lead_s = float(at_s), float(lead_s)
        self.plan = OffboardPlan(self.at_s, float(arm_delay_s))
        self.stream_at_usec = usec(max(0.0, self.at_s - self.lead_s))
        self.commander = None
        self.decimation = 0
        self.period_s = 0.0
        #: The policy's action last sent (zeros before the first), and each sent: (tick, time [µs], action).
        self.last = np.zeros(4, dtype=np.float32)
        self.sent: list[tuple[int, int, np.ndarray]] = []
        self.first_tick: int | None = None
        self.late_stream_ticks = 0
        self.clock_mismatches = 0
        self.hold_wall_s = 0.0
        self._previous_goal = None
        self._previous_velocity = None

    def prepare(self, dt_ns: int) -> None:
        """Check the rate against the tick and bind the API port (a busy port fails the build)."""
        ticks = 1e9 / (self.rate_hz * dt_ns)
        if round(ticks) < 1 or abs(ticks - round(ticks)) > 1e-9:
            tick_hz = 1e9 / dt_ns
            raise BuildError(f"--px4-offboard-rate {self.rate_hz:g}: the policy's period must be a whole number of "
                             f"ticks ({tick_hz:g} Hz / {self.rate_hz:g} Hz = {ticks:.4g}); give a rate that divides "
                             f"{tick_hz:g} Hz, such as {tick_hz / max(1, math.floor(ticks)):g}")
        self.decimation = round(ticks)
        self.period_s = self.decimation * dt_ns * 1e-9
        if self.commander is None:
            try:
                self.commander = LockstepCommander(self.plan, self.url, self.hold_timeout_s)
            except ApiLinkError as error:
                raise BuildError(f"--px4-offboard-url {self.url}: {str(error).split(';')[0]}; stop the mission or "
                                 "ground station that holds it, or pass another --px4-offboard-url") from None
        log.info("PX4 offboard policy %s at %g Hz (every %d ticks), setpoints from %.2f s, offboard at %.2f s",
                 self.policy.path, self.rate_hz, self.decimation, self.stream_at_usec * 1e-6, self.at_s)

    def close(self) -> None:
        if self.commander is not None:
            self.commander.close()

    def step(self, tick: int, time_usec: int, previous_usec: int, estimate, setpoint, neighbours=None) -> np.ndarray:
        """Before the ``HIL_SENSOR`` of ``tick`` (PX4's clock at ``previous_usec``): the action in force after it.
        ``neighbours``: for a fleet policy, a callable giving the vehicle's neighbour features (made only when a
        setpoint goes)."""
        link = self.commander.link
        self.commander.read()
        if tick % self.decimation == 0 and time_usec >= self.stream_at_usec:
            if link.peer is None:
                self.late_stream_ticks += 1
                if self.late_stream_ticks == 1:
                    log.warning("offboard: setpoints were due from %.3f s, but PX4's API stream on %s is not heard "
                                "yet; they start once it is (their ticks may then differ between runs)",
                                self.stream_at_usec * 1e-6, self.url)
            else:
                self._send(tick, time_usec, previous_usec, estimate, setpoint, neighbours)
        self.commander.step(tick, time_usec, previous_usec)
        return self.last

    def _send(self, tick: int, time_usec: int, previous_usec: int, estimate, setpoint, neighbours=None) -> None:
        goal = np.asarray(setpoint.position, dtype=np.float64)
        # The setpoint's own velocity and acceleration over the policy's period, as --controller policy feeds them.
        velocity = np.zeros(3) if self._previous_goal is None else (goal - self._previous_goal) / self.period_s
        acceleration = np.zeros(3) if self._previous_velocity is None else \
            (velocity - self._previous_velocity) / self.period_s
        self._previous_goal, self._previous_velocity = goal, velocity
        action = self.policy.act(estimate, setpoint, velocity, acceleration,
                                 neighbours() if self.policy.neighbours else None)
        if not np.isfinite(action).all():
            raise OffboardError(f"the offboard policy {self.policy.path} gave {action.tolist()} on tick {tick} "
                                f"({time_usec * 1e-6:.3f} s sim); PX4 cannot fly a non-finite setpoint: check the "
                                "model (its observation normalisation) on this observation")
        link = self.commander.link
        thrust, roll, pitch, yaw = (float(v) for v in self.policy.scaling.setpoint(action))
        link.send(link.mav.set_attitude_target_encode(
            (time_usec // 1000) & 0xFFFFFFFF, link.target_system or self.system_id, AUTOPILOT_COMPONENT,
            TYPE_MASK_RATES_THRUST,
            [1.0, 0.0, 0.0, 0.0], roll, pitch, yaw, thrust))
        barrier = SETPOINT_BARRIER + len(self.sent)
        link.send(link.mav.timesync_encode(0, barrier))
        confirmed = []

        def answered(messages) -> bool:
            confirmed.extend(m.tc1 // 1000 for m in messages
                             if m.get_type() == "TIMESYNC" and m.tc1 != 0 and m.ts1 == barrier)
            return bool(confirmed)

        began = time.monotonic()
        if not self.commander.hold_until(answered):
            raise CommandUnacknowledgedError(
                f"PX4 did not confirm the offboard setpoint of tick {tick} ({time_usec * 1e-6:.3f} s sim): no "
                f"TIMESYNC answer within {self.hold_timeout_s:g} s with the clock held; is PX4 running, and "
                f"sending its API stream to {self.url}?")
        self.hold_wall_s += time.monotonic() - began
        if confirmed[0] != previous_usec:
            self.clock_mismatches += 1
        if self.first_tick is None:
            self.first_tick = tick
            self.plan.streaming = True
        self.last = action
        self.sent.append((tick, time_usec, action))

    def stats(self) -> dict:
        times = np.asarray(self.policy.inference_us) if self.policy.inference_us else np.zeros(1)
        plan = self.plan.summarise()
        return {
            "model": str(self.policy.path), "rate_hz": self.rate_hz, "decimation": self.decimation,
            "hover_thrust": self.policy.scaling.hover_thrust, "max_rates_rad_s": list(self.policy.scaling.max_rates),
            "setpoints": len(self.sent), "first_setpoint_tick": self.first_tick,
            "late_stream_ticks": self.late_stream_ticks, "clock_mismatches": self.clock_mismatches,
            "setpoint_hold_wall_s": round(self.hold_wall_s, 3),
            "offboard_engaged_s": None if self.plan.offboard_usec is None else self.plan.offboard_usec * 1e-6,
            "time_to_home_s": plan.time_to_home_s, "time_to_arm_s": plan.time_to_arm_s, "commands": plan.commands,
            "command_holds": self.commander.holds if self.commander else 0,
            "late_commands": self.commander.late_commands if self.commander else 0,
            "inference_us_median": round(float(np.median(times)), 1),
            **({"api_link": self.commander.link.stats()} if self.commander else {}),
        }
