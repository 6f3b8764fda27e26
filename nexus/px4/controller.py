"""PX4 as the controller: two host stages in the control slot, in lockstep over MAVLink.

``truth`` sends the base body's true state (``HIL_STATE_QUATERNION``), which
PX4 only logs. ``exchange`` sends each sensor's new samples (``HIL_SENSOR``
every tick, ``HIL_GPS`` when the GPS has a new fix), then waits for PX4's
``HIL_ACTUATOR_CONTROLS`` and writes its 16 values to the ``controls`` row.
Sim time reaches PX4 only through ``time_usec``, and the next tick starts
only after PX4 has answered, so PX4 runs exactly as fast as the sim lets it.

PX4 needs sensor data to boot before it sends any actuator message, so the
exchange does not wait until the first one has arrived (free-run), then
waits every tick.
"""

from __future__ import annotations

import logging

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage, Write
from nexus.core.types import CONTROLS_WIDTH, BaroSample, BodyState, GpsSample, ImuSample, MagSample
from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np, flu_to_frd_np, quat_to_matrix_np
from nexus.px4 import messages
from nexus.px4.link import DEFAULT_HOST, DEFAULT_PORT, MavlinkLink
from nexus.sensors.geodesy import enu_offset_to_geodetic

log = logging.getLogger("nexus")

#: MAV_CMD_SET_MESSAGE_INTERVAL, and HIL_STATE_QUATERNION's message id.
SET_MESSAGE_INTERVAL = 511
TRUTH_ID = 115

SAMPLES = (("imu", ImuSample), ("mag", MagSample), ("baro", BaroSample), ("gps", GpsSample))


class Px4Controller(Component):
    """PX4 SITL behind a TCP MAVLink link, writing the ``controls`` row."""

    def __init__(
        self,
        name: str,
        plant,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        connect_timeout: float = 120.0,
        answer_timeout: float = 5.0,
        finish_when=None,
    ):
        super().__init__(name)
        self.plant = plant
        self.link = MavlinkLink(host, port)
        self.connect_timeout, self.answer_timeout = connect_timeout, answer_timeout
        self.lockstep = False
        self.exchanges = 0
        self.answers = 0
        self.gps_sent = 0
        self.last_sample_time = {name: None for name, _ in SAMPLES}
        self.last_controls = np.zeros(CONTROLS_WIDTH, dtype=np.float32)
        self.heartbeats = 0
        #: Ground truth goes out at most this often [µs] (PX4 asks for 5000 on connecting).
        self.truth_interval_usec = 0
        self.last_truth_usec = None
        #: Answers that arrived after their tick had moved on (only around the free-run's end).
        self.stale_answers = 0
        #: A ``threading.Event`` (e.g. a mission commander's) that ends the run once set.
        self.finish_when = finish_when

    def stages(self) -> list[Stage]:
        truth_reads = (Read("time_ns", wp.int64, (1,)), Read("body/base", BodyState, (1,)))
        sample_reads = tuple(Read(name, dtype, (1,)) for name, dtype in SAMPLES)
        return [
            Stage("truth", "control", self._truth, reads=truth_reads, host=True),
            Stage(
                "exchange", "control", self._exchange,
                reads=(Read("time_ns", wp.int64, (1,)), *sample_reads),
                writes=(Write("controls", wp.float32, (1, CONTROLS_WIDTH)),),
                host=True,
            ),
        ]

    def prepare(self, ctx) -> None:
        if self.link.server is None:
            self.link.listen()  # a busy port fails the build, before any stage runs
        self.gravity = self.plant.gravity

    def close(self) -> None:
        if self.exchanges:
            log.info("PX4 lockstep: %s", self.stats())
        self.link.close()

    def stats(self) -> dict:
        """Counts of the link's traffic, for run.json and the closing log line."""
        return {
            "exchanges": self.exchanges, "answers": self.answers, "stale_answers": self.stale_answers,
            "lockstep": self.lockstep, "gps_sent": self.gps_sent, "heartbeats": self.heartbeats,
            "messages_sent": self.link.sent, "messages_received": self.link.received,
            "malformed_messages": self.link.bad_messages,
        }

    # -- stages ------------------------------------------------------------------------

    def _truth(self, io) -> None:
        self.link.accept(self.connect_timeout)
        time_usec = int(io["time_ns"].read()) // 1000
        if self.last_truth_usec is not None and time_usec - self.last_truth_usec < self.truth_interval_usec:
            return
        self.last_truth_usec = time_usec
        body = io["body/base"].read()
        origin = self.plant.ned_origin.numpy()[0].astype(np.float64)
        pose = np.array(body.pose, dtype=np.float64)
        rotation = quat_to_matrix_np(pose[3:7])
        offset_enu = pose[:3] - origin
        lat_lon_alt = enu_offset_to_geodetic(self.plant.origin, offset_enu)
        rates = flu_to_frd_np(rotation.T @ np.array(body.angular_velocity, dtype=np.float64))
        force_world = np.array(body.accel, dtype=np.float64) - np.array([0.0, 0.0, -self.gravity])
        force = flu_to_frd_np(rotation.T @ force_world)
        message = messages.hil_state_quaternion(
            self.link.mav, time_usec, messages.xyzw_to_wxyz(attitude_ned_frd_np(pose[3:7])), rates, lat_lon_alt,
            enu_to_ned_np(np.array(body.velocity, dtype=np.float64)), force,
        )
        self.link.queue(message)  # leaves with the exchange's sensor message, in one write

    def _is_new(self, name: str, sample) -> bool:
        stamp = float(sample.time)
        new = stamp != self.last_sample_time[name]
        self.last_sample_time[name] = stamp
        return new

    def _exchange(self, io) -> None:
        time_usec = int(io["time_ns"].read()) // 1000
        samples = {name: io[name].read() for name, _ in SAMPLES}
        new = {name: self._is_new(name, sample) for name, sample in samples.items()}
        fields = messages.sensor_fields(new["imu"], new["mag"], new["baro"])
        self.link.queue(messages.hil_sensor(self.link.mav, time_usec, samples["imu"], samples["mag"], samples["baro"], fields))
        if new["gps"]:
            self.link.queue(messages.hil_gps(self.link.mav, time_usec, samples["gps"]))
            self.gps_sent += 1
        self.link.flush()
        self.exchanges += 1
        if self.lockstep:
            # PX4 stamps its answer with the time of the sensor message it answers; an older
            # one (sent for an earlier message during the free-run) is stale, not this tick's.
            answer, others = self.link.wait_for(
                "HIL_ACTUATOR_CONTROLS", self.answer_timeout, accept=lambda m: m.time_usec >= time_usec
            )
            self.stale_answers += sum(1 for m in others if m.get_type() == "HIL_ACTUATOR_CONTROLS")
            answers = [answer]
        else:
            others = self.link.poll()
            answers = [m for m in others if m.get_type() == "HIL_ACTUATOR_CONTROLS"]
            if answers:
                self.lockstep = True
                log.info("PX4 answered at sim time %.3f s: lockstep from now on", time_usec * 1e-6)
        self._note(others)
        if answers:
            self.answers += len(answers)
            controls = np.asarray(answers[-1].controls, dtype=np.float32)
            if controls.shape != (CONTROLS_WIDTH,) or not np.all(np.isfinite(controls)):
                log.warning("PX4 sent an unusable HIL_ACTUATOR_CONTROLS (%s); keeping the last controls", controls)
            else:
                self.last_controls = controls
        io["controls"].write(self.last_controls)
        if self.finish_when is not None and self.finish_when.is_set():
            io.finish()

    def _note(self, others) -> None:
        for message in others:
            kind = message.get_type()
            if kind == "HEARTBEAT":
                self.heartbeats += 1
            elif kind == "HIL_ACTUATOR_CONTROLS":
                continue
            elif kind == "COMMAND_LONG" and message.command == SET_MESSAGE_INTERVAL and int(message.param1) == TRUTH_ID:
                # PX4 asks for ground truth at an interval [µs]; 0 or less means as often as we like.
                self.truth_interval_usec = max(0, int(message.param2))
                log.info("PX4 asked for ground truth every %d µs", self.truth_interval_usec)
            elif kind == "COMMAND_LONG":
                log.debug("PX4 asked: COMMAND_LONG %d", message.command)
            else:
                log.debug("PX4 sent %s, not used", kind)

