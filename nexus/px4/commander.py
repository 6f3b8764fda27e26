"""Mission commands sent from inside the lockstep loop, so each lands on its due tick in every run.

PX4 takes a MAVLink command in its receiver thread as soon as the datagram
arrives, in wall time, and acknowledges it later from threads that run on its
(lockstep) clock. So a command is sent between two ticks, while PX4's clock
stands still (PX4 has answered the last ``HIL_SENSOR`` and waits for the
next), followed by a ``TIMESYNC`` request; the loop then holds the clock
(sends no ``HIL_SENSOR``) until that request is answered. PX4's receiver
handles one socket's datagrams in order and answers ``TIMESYNC`` itself, at
once, stamped with its clock: the answer says PX4 holds the command, taken at
the time of the tick before. A ``COMMAND_ACK`` counts as that answer too.

The acknowledgement itself needs PX4's clock to move (its commander runs on
it): it must come within ``ACK_WITHIN_S`` of sim time, and at that tick the
clock holds again until it is in. A refusal ends the run with PX4's result and
what PX4 said about it (``STATUSTEXT``), ``REFUSAL_GRACE_S`` of sim time after
it (PX4 says why shortly after it refuses); a command never confirmed, or
never acknowledged, ends it with an error that names the command.

With a link loss (``link_loss``: [start, end) [s] of sim time), the commander
plays a ground station: PX4 notices a lost data link only by the ground
station's ``HEARTBEAT`` (type GCS) stopping, so it sends one every
``HEARTBEAT_PERIOD_S`` of sim time, on the first tick at or after each whole
period, followed by a ``TIMESYNC`` and a clock hold as a command is (so PX4
takes each at the tick before, in every run). Inside the window it sends
nothing: no heartbeat, no command (a command due there goes on the first tick
after the window). Only the uplink is cut: what PX4 sends is still read, so
the run keeps what PX4 said about the loss (a real PX4 logs it in its ULog
too). A run without a link loss sends no heartbeat, as before.

PX4's own look at the heartbeats is wall-clock driven, so the commander pins
it to a tick (read from PX4 main 02e73e3b, ``mavlink_receiver.cpp`` and
``mavlink_main.cpp``). The receiver thread counts the ground station present
(``heartbeat_type_gcs``) while its last heartbeat is at most
``PX4_HEARTBEAT_TIMEOUT_US`` (2.5 s) old, and re-evaluates that
(``CheckHeartbeats``) on a heartbeat and, by itself, at the end of any loop
pass whose clock is past 2.5 s and at least ``PX4_CHECK_EVERY_US`` (1.25 s)
after its last look. Its loop passes come when a datagram arrives or its
``poll()`` times out after 10 ms of wall time, so with no datagram that look
happens at whatever tick PX4's clock stands at when the wall-clock timeout
fires. The look publishes the link status at once (the MAVLink main thread
sends it on its next pass, else once a second); the 1 Hz status then runs
from there, and the commander declares the link lost ``COM_DL_LOSS_T`` after
the last status that saw the ground station. Over a loss that last status
comes 1 s after the receiver's first look at 1.25 s past the last heartbeat,
so where that look fell (a tick or two, with the machine's load) moved the
declaration, the failsafe and the landing from run to run
(``px4_link_loss``: one flight in four, two PX4s side by side). So the
commander keeps PX4's look schedule (a heartbeat looks at once, past 2.5 s)
and, before the first tick at which PX4's clock has reached the next look,
sends two ``TIMESYNC`` requests, each with a clock hold until PX4 answers:
the first wakes the receiver at that tick, and the second is read only on a
later pass, so its answer says the first pass's look is done. The look thus
falls on that tick in every run, and the link status with it. TIMESYNC is no
heartbeat: it changes nothing PX4 counts about the ground station, so the
loss stays a loss (a wake is sent inside the window too).

The mission's end comes from the lockstep answers (``HIL_ACTUATOR_CONTROLS``'s
armed flag, :meth:`note_armed`): PX4 computes it on its clock, so it falls on
the same tick in every reproducible run, where the arrival of a ``HEARTBEAT``
on the API stream would not. A PX4 that lands and disarms on its own (a
failsafe, even while the link is down) ends the mission on that tick.
"""

from __future__ import annotations

import logging
import time

from pymavlink.dialects.v20 import common as mavlink

from nexus.px4.api_link import ApiLink
from nexus.px4.errors import CommandRefusedError, CommandUnacknowledgedError
from nexus.px4.mission import Command, MissionPlan, usec

log = logging.getLogger("nexus")

#: Sim time [s] within which PX4 must acknowledge a command (its commander runs every 10 ms).
ACK_WITHIN_S = 1.0
#: Sim time [s] the run goes on after a refusal, to collect PX4's STATUSTEXTs about it.
REFUSAL_GRACE_S = 0.5
#: PX4's STATUSTEXTs run.json keeps (the first; PX4 says a few dozen in a flight, a flood would bloat the file).
KEPT_TEXTS = 1000
#: MAV_RESULT.IN_PROGRESS: not yet the final answer.
IN_PROGRESS = 5
#: Sim time [s] between the ground station's heartbeats when a run has a link loss (a ground station's 1 Hz).
HEARTBEAT_PERIOD_S = 1.0
#: MAV_TYPE_GCS and MAV_AUTOPILOT_INVALID: what a ground station's heartbeat says it is.
MAV_TYPE_GCS = 6
MAV_AUTOPILOT_INVALID = 8
#: TIMESYNC ``ts1`` of a heartbeat's confirmation (plus its count), far from the commands' barriers.
HEARTBEAT_BARRIER = 1 << 30
#: TIMESYNC ``ts1`` of the receiver wakes (plus twice their count, plus 0 or 1), far from both.
WAKE_BARRIER = 1 << 31
#: PX4's receiver counts a ground station present this long after its last heartbeat [µs], looks at that only
#: once its clock is past it, and looks by itself this long after its last look [µs] (telemetry_status's
#: HEARTBEAT_TIMEOUT_US and half of it, MavlinkReceiver::CheckHeartbeats; see the module doc).
PX4_HEARTBEAT_TIMEOUT_US = 2_500_000
PX4_CHECK_EVERY_US = PX4_HEARTBEAT_TIMEOUT_US // 2


def result_name(result: int) -> str:
    entry = mavlink.enums["MAV_RESULT"].get(result)
    return entry.name if entry is not None else f"result {result}"


class LockstepCommander:
    """Drives a :class:`MissionPlan` from the exchange stage: read PX4's stream, send what is due, hold."""

    def __init__(self, plan: MissionPlan, url: str, hold_timeout_s: float, link_loss: tuple | None = None):
        self.plan = plan
        #: The link loss's window [start, end) [µs of sim time], or None (then no heartbeat is sent).
        self.link_loss = None if link_loss is None else (usec(link_loss[0]), usec(link_loss[1]))
        self.next_heartbeat_usec = usec(HEARTBEAT_PERIOD_S)
        #: The ticks a heartbeat went on, and the ticks that sent nothing because the link was down.
        self.heartbeat_ticks: list[int] = []
        self.silent_ticks = 0
        #: PX4's receiver's last look at its heartbeats [µs of PX4's clock] as it keeps it (0: none yet), and the
        #: ticks its looks were pinned to by a wake (module doc).
        self.px4_last_check_usec = 0
        self.wake_ticks: list[int] = []
        self.link = ApiLink(url)  # bound when the flight is built: a busy port fails the build
        self.hold_timeout_s = hold_timeout_s
        #: Clock holds, the wall time they took [s], and confirmations whose PX4 time was not the tick before.
        self.holds = 0
        self.hold_wall_s = 0.0
        self.clock_mismatches = 0
        #: Commands that went out after the tick they were due on (their condition arrived late).
        self.late_commands = 0
        self.refused: tuple[Command, int] | None = None

    def close(self) -> None:
        self.link.close()

    def step(self, tick: int, time_usec: int, previous_usec: int) -> None:
        """Before the ``HIL_SENSOR`` of ``tick`` (sim time ``time_usec``; PX4's clock at ``previous_usec``)."""
        self._read()
        self._check_answers(time_usec)
        silent = self.link_down(time_usec)
        if self.link_loss is not None:
            if previous_usec >= self.next_check_usec():  # PX4's receiver looks now: pin its look here
                self._wake_receiver(tick, previous_usec)
            if time_usec >= self.next_heartbeat_usec and not silent:
                self._send_heartbeat(tick, previous_usec)
            while self.next_heartbeat_usec <= time_usec:
                self.next_heartbeat_usec += usec(HEARTBEAT_PERIOD_S)
        if silent:
            self.silent_ticks += 1
            if self.plan.pending is not None and self.plan.pending.label == "end":
                self.plan.due(time_usec)  # the end sends nothing: it may come while the link is down
            return  # a command due now waits for the link to come back
        command = self.plan.due(time_usec)
        if command is not None:
            command.sent_tick = tick
            held_by_loss = self.link_loss is not None and self.link_loss[0] <= command.due_usec < self.link_loss[1]
            if time_usec - command.due_usec >= time_usec - previous_usec and not held_by_loss:
                # Due before this tick: the condition it waited for arrived late, so its tick is not reproducible.
                self.late_commands += 1
                log.warning("mission: %s was due at %.3f s but could go only at %.3f s (PX4 reported what it "
                            "waits for late); its tick may differ between runs", command.name, command.due_usec * 1e-6,
                            time_usec * 1e-6)
            if hasattr(command, "items"):  # a scenario's steps as a mission (nexus.px4.step_mission)
                self._upload(command)
            else:
                self._send_and_hold(command, previous_usec)

    def _upload(self, command) -> None:
        """MISSION_COUNT, then each item PX4 asks for, with the clock held until PX4's MISSION_ACK."""
        link = self.link
        target = link.target_system or 1
        link.send(link.mav.mission_count_encode(target, 1, len(command.items)))

        def answered(messages) -> bool:
            for message in messages:
                asks = message.get_type() in ("MISSION_REQUEST_INT", "MISSION_REQUEST")
                if asks and message.seq < len(command.items):
                    item = command.items[message.seq]  # (command, frame, param1..4, x, y, z)
                    link.send(link.mav.mission_item_int_encode(target, 1, message.seq, item[1], item[0], 0, 1,
                                                               *item[2:]))
            return command.result is not None

        if not self._hold(answered):
            raise CommandUnacknowledgedError(
                f"PX4 did not take the mission of {len(command.items)} items sent on tick {command.sent_tick} "
                f"({command.sent_usec * 1e-6:.3f} s sim): no MISSION_ACK within {self.hold_timeout_s:g} s with the "
                f"clock held; is PX4 running, and sending its API stream to {link.url}?")
        log.info("mission: upload of %d items on tick %d (%.3f s sim)", len(command.items), command.sent_tick,
                 command.sent_usec * 1e-6)

    def note_armed(self, armed: bool, time_usec: int) -> None:
        """PX4's lockstep answer of the tick at ``time_usec`` said armed or not (its ``mode`` flag)."""
        self.plan.note_armed(armed, time_usec)

    def finished(self, time_usec: int) -> bool:
        return self.plan.finished(time_usec)

    def link_down(self, time_usec: int) -> bool:
        """Whether the link loss's window [start, end) holds sim time ``time_usec`` [µs]."""
        return self.link_loss is not None and self.link_loss[0] <= time_usec < self.link_loss[1]

    def next_check_usec(self) -> int:
        """PX4's clock [µs] at which its receiver next looks at its heartbeats by itself (module doc): 1.25 s after
        its last look, and past 2.5 s."""
        return max(self.px4_last_check_usec + PX4_CHECK_EVERY_US, PX4_HEARTBEAT_TIMEOUT_US + 1)

    def _wake_receiver(self, tick: int, previous_usec: int) -> None:
        """Two TIMESYNCs, each with the clock held until PX4 answers: its receiver's look falls on this tick."""
        link = self.link
        if link.peer is None and not self._hold(lambda messages: link.peer is not None):
            raise CommandUnacknowledgedError(
                f"PX4 sent nothing on {link.url} by tick {tick}, so the wake of its receiver for the link loss has no "
                f"address; is PX4's API stream sent there?")
        for k in range(2):
            barrier = WAKE_BARRIER + 2 * len(self.wake_ticks) + k
            link.send(link.mav.timesync_encode(0, barrier))
            if not self._hold(lambda messages: any(m.get_type() == "TIMESYNC" and m.tc1 != 0 and m.ts1 == barrier
                                                   for m in messages)):
                raise CommandUnacknowledgedError(
                    f"PX4 did not answer the TIMESYNC that pins its receiver's heartbeat check to tick {tick} within "
                    f"{self.hold_timeout_s:g} s with the clock held; is PX4 running, and sending its API stream to "
                    f"{link.url}?")
        self.px4_last_check_usec = previous_usec
        self.wake_ticks.append(tick)

    def _send_heartbeat(self, tick: int, previous_usec: int) -> None:
        """The ground station's heartbeat, then a TIMESYNC; the clock holds until PX4 answers it."""
        link = self.link
        if link.peer is None and not self._hold(lambda messages: link.peer is not None):
            raise CommandUnacknowledgedError(
                f"PX4 sent nothing on {link.url} by tick {tick} ({self.next_heartbeat_usec * 1e-6:.3f} s sim), so the "
                f"ground station's heartbeat for the link loss has no address; is PX4's API stream sent there?")
        link.send(link.mav.heartbeat_encode(MAV_TYPE_GCS, MAV_AUTOPILOT_INVALID, 0, 0, 0))
        barrier = HEARTBEAT_BARRIER + len(self.heartbeat_ticks)
        link.send(link.mav.timesync_encode(0, barrier))
        if not self._hold(lambda messages: any(m.get_type() == "TIMESYNC" and m.tc1 != 0 and m.ts1 == barrier
                                               for m in messages)):
            raise CommandUnacknowledgedError(
                f"PX4 did not confirm the ground station's heartbeat on tick {tick}: no TIMESYNC answer within "
                f"{self.hold_timeout_s:g} s with the clock held; is PX4 running, and sending its API stream to "
                f"{link.url}?")
        self.heartbeat_ticks.append(tick)
        if previous_usec > PX4_HEARTBEAT_TIMEOUT_US:  # PX4 looks at its heartbeats on each one, past 2.5 s
            self.px4_last_check_usec = previous_usec

    def _read(self) -> list:
        messages = self.link.drain()
        for message in messages:
            self.plan.note(message)
        return messages

    def _check_answers(self, time_usec: int) -> None:
        for command in self.plan.commands:
            if command.result not in (None, 0) and self.refused is None:
                self.refused = (command, time_usec)
            if command.result is None and time_usec >= command.sent_usec + usec(ACK_WITHIN_S):
                self._hold_for_ack(command, time_usec)
        if self.refused is not None and time_usec >= self.refused[1] + usec(REFUSAL_GRACE_S):
            command = self.refused[0]
            said = self.plan.statustexts_after(command)
            hint = ("; PX4's preflight checks refused it: fix what PX4 names, or arm later (the mission arms at "
                    f"{self.plan.arm_at_s:g} s of sim time)") if command.label == "arm" else ""
            raise CommandRefusedError(
                f"PX4 refused {command.name}, sent on tick {command.sent_tick} ({command.sent_usec * 1e-6:.3f} s sim): "
                f"{result_name(command.result)} ({command.result}); PX4 said: "
                + ("; ".join(repr(text) for text in said) if said else "nothing") + hint
            )

    def _hold_for_ack(self, command: Command, time_usec: int) -> None:
        """Hold the clock until ``command``'s acknowledgement, which is overdue, is in."""
        if self._hold(lambda messages: command.result is not None):
            return
        raise CommandUnacknowledgedError(
            f"PX4 never acknowledged {command.name}, sent on tick {command.sent_tick} "
            f"({command.sent_usec * 1e-6:.3f} s sim): no COMMAND_ACK within {ACK_WITHIN_S:g} s of sim time and "
            f"{self.hold_timeout_s:g} s of wall time with the clock held at {time_usec * 1e-6:.3f} s; is PX4's "
            f"MAVLink instance on {self.link.url} the one the commands reach?"
        )

    def _send_and_hold(self, command: Command, previous_usec: int) -> None:
        """Send ``command`` and a TIMESYNC request; hold the clock until PX4 answers either."""
        link = self.link
        link.send(command.message(link.mav, link.target_system or 1))
        barrier = len(self.plan.commands)
        link.send(link.mav.timesync_encode(0, barrier))
        confirmed = []

        def answered(messages) -> bool:
            for message in messages:
                if message.get_type() == "TIMESYNC" and message.tc1 != 0 and message.ts1 == barrier:
                    confirmed.append(message.tc1 // 1000)
            return bool(confirmed) or command.result is not None

        if not self._hold(answered):
            raise CommandUnacknowledgedError(
                f"PX4 did not confirm receiving {command.name}, due on tick {command.sent_tick} "
                f"({command.sent_usec * 1e-6:.3f} s sim): no TIMESYNC answer or COMMAND_ACK within "
                f"{self.hold_timeout_s:g} s with the clock held; is PX4 running, and sending its API stream to "
                f"{link.url}?"
            )
        if confirmed and confirmed[0] != previous_usec:
            self.clock_mismatches += 1
            log.warning("PX4 took %s at its time %d us, not at the tick before (%d us)", command.name, confirmed[0],
                        previous_usec)
        log.info("mission: %s on tick %d (%.3f s sim)", command.label, command.sent_tick, command.sent_usec * 1e-6)

    def read(self) -> list:
        """Read PX4's API stream now (the plan notes every message); what arrived."""
        return self._read()

    def hold_until(self, done) -> bool:
        """Hold the clock, reading PX4's stream, until ``done(messages)``; False after the hold timeout."""
        return self._hold(done)

    def _hold(self, done) -> bool:
        """Read PX4's stream with the clock held until ``done(messages)``; False after the hold timeout."""
        self.holds += 1
        began = time.monotonic()
        deadline = began + self.hold_timeout_s
        try:
            while True:
                if done(self._read()):
                    return True
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self.link.wait(remaining)
        finally:
            self.hold_wall_s += time.monotonic() - began

    def stats(self) -> dict:
        report = self.plan.summarise()
        return {**report.__dict__, "holds": self.holds, "hold_wall_s": round(self.hold_wall_s, 3),
                "clock_mismatches": self.clock_mismatches, "late_commands": self.late_commands,
                # What PX4 said (STATUSTEXT), [PX4 time [s], text], the first KEPT_TEXTS: px4_failsafe reads it.
                "statustexts": [[stamp * 1e-6, text] for stamp, text in self.plan.statustexts[:KEPT_TEXTS]],
                "statustexts_left_out": max(0, len(self.plan.statustexts) - KEPT_TEXTS),
                "api_link": self.link.stats(),
                **({"link_loss": {"start_s": self.link_loss[0] * 1e-6, "end_s": self.link_loss[1] * 1e-6,
                                  "heartbeat_ticks": self.heartbeat_ticks, "silent_ticks": self.silent_ticks,
                                  "receiver_wake_ticks": self.wake_ticks}}
                   if self.link_loss is not None else {})}
