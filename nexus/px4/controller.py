"""PX4 as the controller: one host stage in the control slot, in lockstep over MAVLink.

A device stage (``px4_row``, :mod:`nexus.px4.gather`) gathers what PX4 gets
into one row at the end of the tick's first graph. The host stage
``exchange`` then sends the base body's true state (``HIL_STATE_QUATERNION``,
which PX4 only logs, as often as PX4 asked for it) and each sensor's new
samples (``HIL_SENSOR`` every tick, ``HIL_GPS`` when the GPS has a new fix)
in one write, waits for PX4's ``HIL_ACTUATOR_CONTROLS`` and writes its 16
values to the ``controls`` row.
Sim time reaches PX4 only through ``time_usec``, and the next tick starts
only after PX4 has answered, so PX4 runs exactly as fast as the sim lets it.

An airspeed sensor (:mod:`nexus.sensors.airspeed`, signal ``airspeed``; the first, if several)
fills HIL_SENSOR's ``diff_pressure`` [hPa] and sets its ``fields_updated`` bit on each new
sample; without one the field is 0 and the bit never set.

Any other sensor reaches PX4 through its spec: a spec whose ``extras`` name a
MAVLink message (``{"mavlink": "DISTANCE_SENSOR"}``) is listed in the schema
index, the exchange reads that sensor's output signal (every writer of it),
and on each new sample sends what the component's ``mavlink_message(mav,
time_usec, sample)`` encodes. A new sensor needs no edit here.

A lidar (a component writing the host signal ``lidar``) feeds PX4's collision
prevention: on the tick a sweep is delivered, its in-band returns reduced to
PX4's 72 sectors go out as eight ``DISTANCE_SENSOR`` messages
(:mod:`nexus.px4.obstacles`), in the same write as that tick's ``HIL_SENSOR``.

PX4 boots on sim time: after its first ``HIL_SENSOR`` its start-up script
goes on only as its clock advances (each module start waits 2 ms of it), so
until PX4 first answers, each tick waits for PX4's answer until PX4 is idle
(every thread of its process tree asleep, when PX4 runs on this machine) or
``boot_patience`` of wall time has passed, and only then goes on: the boot
sends the same messages at the same ticks in every run, and PX4 gets the
wall time its start-up needs at each of them. From the first answer on,
every tick waits for its own answer. Each way PX4 can fail ends the run with
its own error (see :mod:`nexus.px4.errors`): no first answer within
``first_answer_s`` of sim time, no answer for a tick in time (silent, or
answering with the wrong stamps), or too many unusable answers in a row.

With a ``mission``, the built-in mission (:mod:`nexus.px4.mission`) is flown
from the exchange: each command goes out before the ``HIL_SENSOR`` of its due
tick and the clock holds until PX4 has it (:mod:`nexus.px4.commander`).

With an ``offboard_policy``, a host stage ``offboard`` before the exchange
flies a CTBR policy through PX4's offboard mode (:mod:`nexus.px4.offboard`);
the run then gets the vehicle's estimator and the scene's mission, whose
``estimate`` and ``setpoint`` the policy observes.

A plane (a vehicle file with a wing) is flown through PX4's fixed-wing airframe: each answer's 16 values go
through the plane's output map (:mod:`nexus.px4.plane_outputs`: the propeller's throttle, each surface's
servo value in the file's sign) before they reach ``controls``; the plane starts at its air start, trimmed
(:mod:`nexus.control.fixed_wing.air_start`); and a HEARTBEAT that says another vehicle than a fixed wing
(``MAV_TYPE`` neither 1 nor 0, the generic type PX4's simulator link sends) ends the run with
:class:`~nexus.px4.errors.WrongAirframeError`. It needs the sensors
PX4 reads, an airspeed sensor among them: a plane file without one is refused before any stage runs. A plane with
a catapult (``NexusCatapultAPI``) starts on its wheels instead; with a ``mission`` it flies its own mission as a
PX4 mission (:mod:`nexus.px4.plane_mission`), launched by the catapult after PX4's mission started.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import warp as wp
from pxr import Usd
from pymavlink.dialects.v20 import common as mavlink

from nexus.control.registry import ControllerOptions, RunHooks, option, register
from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.schemas.catalog import component_class, index
from nexus.plant.body_state import BodyState
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.placement import resting_heading
from nexus.sensors.airspeed import AirspeedSample
from nexus.sensors.samples import BaroSample, GpsSample, ImuSample, MagSample
from nexus.estimation.pose_twist import PoseTwist
from nexus.guidance.setpoint import Setpoint
from nexus.px4 import ground_station, messages, obstacles, offboard
from nexus.px4.gather import STAMPS, Px4Row, gather_px4_row
from nexus.px4.errors import AnswerTimeoutError, BadActuatorsError, NoAnswerError, WrongAirframeError, WrongStampsError
from nexus.px4.host_views import HostView
from nexus.px4.link import DEFAULT_HOST, DEFAULT_PORT, MavlinkLink
from nexus.px4.commander import LockstepCommander
from nexus.px4.mission import DEFAULT_URL, MAV_MODE_FLAG_SAFETY_ARMED, MissionPlan
from nexus.px4.step_mission import StepsPlan
from nexus.px4.plane_mission import PlanePlan, check_launch, plane_mission_items, runway_upload_s
from nexus.px4.vtol_mission import vtol_mission_items
from nexus.px4.packer import FramePacker
from nexus.px4.params import is_plane
from nexus.px4.plane_outputs import (MAV_TYPE_FIXED_WING, MAV_TYPE_GENERIC, MAV_TYPE_VTOL_FIXEDROTOR, PlaneOutputs,
                                     plane_outputs)
from nexus.control.fixed_wing.air_start import air_start
from nexus.control.fixed_wing.catapult import CATAPULT_SPEC, check_one_start
from nexus.control.fixed_wing.mission import plane_mission
from nexus.control.vtol.mission import vtol_mission
from nexus.schemas.reader import read_prim
from nexus.sensors.geodesy import enu_to_ecef_rotation, geodetic_to_ecef
from nexus.px4.peer_process import PeerProcess
from nexus.px4.fleet_controller import (Px4FleetController, check_instances, first_instance, instance_port,
                                        instance_url)
from nexus.px4 import run_options
from nexus.sensors.lidar import Lidar, PointCloud
from nexus.plant.usd_checks import nexus_apis

log = logging.getLogger("nexus")


class _PortOf:
    """A bare Warp array where :class:`HostView` expects a port (it reads only ``array``)."""

    def __init__(self, array):
        self.array = array

#: MAV_CMD_SET_MESSAGE_INTERVAL, and HIL_STATE_QUATERNION's message id.
SET_MESSAGE_INTERVAL = 511
TRUTH_ID = 115

#: Unusable (non-finite) answers in a row that end the run: 0.2 s at 250 Hz, long enough to
#: ride out a glitch, short enough not to fly far on stale controls.
MAX_BAD_ANSWERS_IN_A_ROW = 50
#: Boot sim time [s] after which a PX4 that has not answered once has failed. Real PX4
#: SITL answered after 0.65 s (docs/px4.md); the wall-clock floor below covers a slow start.
FIRST_ANSWER_S = 30.0
#: Wall time [s] a boot tick waits for PX4's answer when PX4's idleness cannot be seen (PX4 on
#: another machine, or a scripted peer in this process) before the clock moves on.
BOOT_PATIENCE_S = 0.05
#: Wall time [s] PX4's process must stay asleep, every thread of it, before a boot tick moves on: long
#: enough that a thread waking from a wall-clock sleep during the start-up is seen (boot ticks are few,
#: about ten against real PX4, so this costs about a second). With 20 ms, 1 boot in 6 against real PX4
#: answered a tick later than the others; with 100 ms, 3 in 3 answered on the same tick (docs/px4.md).
BOOT_QUIET_S = 0.1
#: How long the link waits for PX4 to connect, and for each actuator answer in lockstep [s wall].
CONNECT_TIMEOUT_S, ANSWER_TIMEOUT_S = 120.0, 5.0

SAMPLES = (("imu", ImuSample), ("mag", MagSample), ("baro", BaroSample), ("gps", GpsSample))
#: The signal an airspeed sensor writes: HIL_SENSOR's diff_pressure.
AIRSPEED_SIGNAL = "airspeed"
#: The host signal a lidar writes (nexus.sensors.lidar): its sweeps become PX4's obstacle data.
LIDAR_SIGNAL = "lidar"
#: PX4's collision prevention drops a distance sensor's data 0.5 s after it arrived (RANGE_STREAM_TIMEOUT_US).
OBSTACLE_TIMEOUT_S = 0.5


def mavlink_sensor_classes() -> list[type]:
    """Component classes whose spec declares a MAVLink message for the autopilot (from the schema index)."""
    return [component_class(schema) for schema, entry in sorted(index().items()) if entry.get("mavlink")]


class Px4Controller(Component):
    """PX4 SITL behind a TCP MAVLink link, writing the ``controls`` row."""

    def __init__(
        self,
        name: str,
        plant,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        connect_timeout: float = CONNECT_TIMEOUT_S,
        answer_timeout: float = ANSWER_TIMEOUT_S,
        first_answer_s: float = FIRST_ANSWER_S,
        finish_when=None,
        obstacle_band: float = obstacles.DEFAULT_BAND,
        boot_patience: float = BOOT_PATIENCE_S,
        mission: dict | None = None,
        settle: bool = False,
        offboard_policy: str | None = None,
        offboard_rate: float | None = None,
        offboard_url: str = DEFAULT_URL,
        offboard_at_s: float = offboard.AT_S,
        offboard_lead_s: float = offboard.LEAD_S,
        offboard_arm_delay_s: float = offboard.ARM_DELAY_S,
        gcs: str | None = None,
        gcs_port: int = ground_station.PX4_GCS_PORT,
        outputs: PlaneOutputs | None = None,
        start=None,
        runway_takeoff: bool = False,
        slot: int = 0,
        system_id: int = 1,
    ):
        super().__init__(name)
        #: The vehicle slot this instance flies (its row of every signal): 0, unless one PX4 instance flies each
        #: vehicle of one world (:mod:`nexus.px4.fleet_controller`).
        self.slot = int(slot)
        #: The gathered rows (one per slot): made at the build, or handed in by a fleet that gathers for all.
        self.row = None
        #: A plane's output map (PX4's 16 values -> the controls row; None: a multirotor, the values as they come),
        #: its air start (the start-up places the plane there, trimmed), and the MAV_TYPE PX4 last said it flies.
        self.outputs = outputs
        self.air_start = start
        #: A plane at rest on its wheels that PX4's mission rolls off the runway (no air start, no catapult): the
        #: start-up settles it on its wheels, as a catapult's plane.
        self.runway_takeoff = bool(runway_takeoff)
        #: A standard VTOL (lift ESCs in its output map): it rests on its gear and PX4 lifts it off on its rotors.
        self.vertical_takeoff = outputs is not None and bool(outputs.lift_channels)
        self.px4_mav_type: int | None = None
        #: A ground station's HOST:PORT whose traffic with PX4 goes through Nexus, each input on a tick
        #: (:mod:`nexus.px4.ground_station`; None: none), PX4's ground-station port, and the relay once built.
        self.gcs, self.gcs_port = gcs, int(gcs_port)
        if gcs is not None:
            ground_station.parse_address(gcs)  # a malformed address fails the build, before anything runs
        self.ground_station = None
        self._gcs_views = None
        if offboard_policy is not None and mission is not None:
            raise BuildError("--px4-offboard-policy and --px4-mission both command PX4 over its MAVLink API port "
                             "(the policy flies offboard, the mission takes off and lands): give one of them")
        #: The CTBR policy flown in PX4's offboard mode (its model is loaded and checked here, at the build).
        self.offboard = None if offboard_policy is None else offboard.OffboardPilot(
            offboard_policy, rate_hz=offboard_rate, url=offboard_url, at_s=offboard_at_s, lead_s=offboard_lead_s,
            arm_delay_s=offboard_arm_delay_s, hold_timeout_s=answer_timeout, system_id=system_id)
        self.plant = plant
        self.link = MavlinkLink(host, port)
        self.connect_timeout, self.answer_timeout = connect_timeout, answer_timeout
        #: PX4 must answer once within this much sim time [s] of boot and, at the least,
        #: ``answer_timeout`` of wall time; else the run fails (it would fly on zero controls).
        self.first_answer_s = first_answer_s
        self.boot_patience = boot_patience
        #: In lockstep too, wait after each answer until PX4's process is idle: PX4's threads outside its
        #: lockstep (commander, navigator, MAVLink) then finish each step before the next (slow; for
        #: reproducibility measurements). Needs PX4's process to be visible.
        self.settle = settle
        self.settle_waits = 0
        self.settle_wall_s = 0.0
        self.boot_started: tuple[int, float] | None = None  # (time_usec, wall [s])
        #: PX4's process tree, when it can be seen (boot ticks wait until it is idle), and boot counts.
        self.peer_process = None
        self.boot_ticks = 0
        self.boot_idle_waits = 0
        self.boot_wall_s = 0.0
        self.first_answer_tick: int | None = None
        self.lockstep = False
        #: The built-in mission's settings (``url`` and the plan's), and its driver once built.
        self.mission_options = dict(mission) if mission else None
        self.commander = None
        self.exchanges = 0
        self.answers = 0
        self.gps_sent = 0
        #: The IMU, mag, baro and GPS sample times [s] last sent (a new time is a new sample).
        self.last_sample_time = [None] * len(SAMPLES)
        self.last_exchange_usec = 0
        #: NumPy views of the exchange's signals and the frame packers, made on the first tick.
        self.views: dict | None = None
        #: The first airspeed sensor's view (None without one), its last sample time sent, and the last
        #: differential pressure [hPa] (HIL_SENSOR carries it on every message, new or not).
        self.airspeed_view: HostView | None = None
        self.airspeed_last_time: float | None = None
        self.diff_pressure_hpa = 0.0
        self.packers: dict = {}
        self.last_controls = np.zeros(CONTROLS_WIDTH, dtype=np.float32)
        self.heartbeats = 0
        #: Ground truth goes out at most this often [µs] (PX4 asks for 5000 on connecting).
        self.truth_interval_usec = 0
        self.last_truth_usec = None
        #: Answers stamped before the tick they arrived in (only at the boot's end, when a boot tick
        #: moved on before PX4 answered it), and stamped after it (never, for a PX4 in lockstep).
        self.stale_answers = 0
        self.future_answers = 0
        #: Answers whose controls were not finite: all of them, and the current run of them.
        self.bad_answers = 0
        self.bad_answers_in_a_row = 0
        self.last_bad_controls = None
        #: A ``threading.Event`` (e.g. a mission commander's) that ends the run once set.
        self.finish_when = finish_when
        #: Sensors that send their own MAVLink message: class -> output signal and sample type.
        self.extra_sensors = {cls: cls.spec.all_outputs[0] for cls in mavlink_sensor_classes()}
        #: Signal -> the components writing it, in declaration order (as the list read gives them); and
        #: the last sample time sent per component, and how many messages each kind sent.
        self.extra_writers: dict[str, list] = {}
        self.extra_last: dict[str, float] = {}
        self.extra_sent: Counter = Counter()
        #: The lidar whose sweeps go to PX4's collision prevention (the first, if several), the elevation band
        #: [rad] of the returns that count, the reduction of its rays, the tick of the last sweep sent, counts.
        self.lidar = None
        self.obstacle_band = float(obstacle_band)
        self.obstacle_reduction = None
        self.obstacle_tick = None
        self.obstacle_sweeps = 0
        self.obstacle_messages = 0

    def stages(self) -> list[Stage]:
        samples = {name: Read(name, dtype, (1,)) for name, dtype in SAMPLES}
        # The exchange reads the row, and on its own only the GPS fix (every 25th tick), the sensors that send
        # their own message, and every lidar's sweeps (an empty list on a vehicle without one).
        exchange_reads = (Read("time_ns", wp.int64, (1,)), samples["gps"],
                          *(Read(port.signal, list[port.dtype], (1,)) for port in self.extra_sensors.values()),
                          Read(AIRSPEED_SIGNAL, list[AirspeedSample], (1,)),
                          Read(LIDAR_SIGNAL, list[PointCloud]))
        # The offboard policy's setpoint goes out before the tick's HIL_SENSOR, so its stage runs first.
        flies_policy = [] if self.offboard is None else [Stage(
            "offboard", "control", self._offboard, host=True,
            reads=(Read("time_ns", wp.int64, (1,)), Read("estimate", PoseTwist, (1,)), Read("setpoint", Setpoint, (1,))),
            writes=(Write("ctbr", wp.float32, (1, 4), recorded=True),),
        )]
        return [
            # One row of everything PX4 gets this tick, gathered in the graph before the host stages.
            Stage("px4_row", "control", self._gather, reads=(Read("body/base", BodyState, (1,)), *samples.values())),
            *flies_policy,
            Stage(
                "exchange", "control", self._exchange,
                reads=exchange_reads,
                writes=(Write("controls", wp.float32, (1, CONTROLS_WIDTH), recorded=True),
                        # With a ground station: its last MANUAL_CONTROL (x, y, z, r, buttons) and its datagrams
                        # delivered to PX4 on the tick, recorded with the tick they took effect on.
                        *((Write("manual_control", wp.int32, (1, 5), recorded=True),
                           Write("gcs_messages", wp.int32, (1,), recorded=True)) if self.gcs is not None else ())),
                host=True,
            ),
        ]

    def prepare(self, ctx) -> None:
        if self.air_start is not None:
            self.air_start.prepare(ctx)  # the surfaces start at the trim (before the state is reset)
        if self.link.server is None:
            self.link.listen()  # a busy port fails the build, before any stage runs
        if self.mission_options is not None and self.commander is None:
            options = dict(self.mission_options)
            url = options.pop("url", DEFAULT_URL)
            link_loss = options.pop("link_loss", None)  # [start, end) [s]: the ground station falls silent
            steps = options.pop("steps", None)  # a scenario's steps, flown as an uploaded PX4 mission
            plane_items = options.pop("plane_items", None)  # a plane's mission, as PX4 items (nexus.px4.plane_mission)
            if plane_items is not None:
                plan = PlanePlan(plane_items, **options)
            elif steps is not None:
                plan = StepsPlan(steps, **options)
            else:
                plan = MissionPlan(**options)
            self.commander = LockstepCommander(plan, url, self.answer_timeout, link_loss=link_loss)
        if self.offboard is not None:
            self.offboard.prepare(ctx.dt_ns)
        if self.gcs is not None and self.ground_station is None:  # claims PX4's ground-station port from now on
            self.ground_station = ground_station.GroundStationRelay(self.gcs, self.gcs_port, self.answer_timeout)
        self.gravity = self.plant.gravity
        origin = self.plant.origin
        self._row_constants = (
            wp.float64(self.gravity), wp.vec3d(*geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude)),
            wp.mat33d(*enu_to_ecef_rotation(origin.latitude, origin.longitude).ravel()), wp.float64(origin.altitude))
        if self.row is None:
            self.row = wp.zeros(1, dtype=Px4Row, device=ctx.device)
        self.row_view = HostView(_PortOf(self.row), self.slot)
        for cls, port in self.extra_sensors.items():
            writers = [c for c in ctx.components if isinstance(c, cls)]
            if writers:  # a signal no component writes has nothing to send
                self.extra_writers[port.signal] = writers
        lidars = [c for c in ctx.components if isinstance(c, Lidar)]
        if lidars:
            self._prepare_obstacles(lidars)

    def _prepare_obstacles(self, lidars: list) -> None:
        """Take the first lidar for PX4's obstacle data; say what PX4 will not get."""
        self.lidar = lidars[0]
        if len(lidars) > 1:
            log.warning("PX4 gets obstacle data from the lidar %s only; %s not sent (one lidar's eight "
                        "DISTANCE_SENSOR ids fill PX4's simulator link)", self.lidar.name,
                        ", ".join(c.name for c in lidars[1:]))
        directions = getattr(self.lidar, "directions", None)
        if directions is None:
            directions = obstacles.lidar_directions(self.lidar.channels, self.lidar.columns, self.lidar.vertical_fov)
        directions = np.asarray(directions).reshape(-1, 3)
        self.obstacle_reduction = obstacles.SectorReduction(directions, self.lidar.min_range, self.lidar.max_range,
                                                            self.obstacle_band)
        if not self.obstacle_reduction.used.any():
            log.warning("lidar %s has no channel within %.1f deg of its horizontal plane: PX4's collision "
                        "prevention gets no obstacle data from it (widen obstacle_band)", self.lidar.name,
                        np.degrees(self.obstacle_band))
        period = 1.0 / self.lidar.rate
        if period >= OBSTACLE_TIMEOUT_S:
            log.warning("lidar %s sweeps every %.2f s; PX4's collision prevention drops obstacle data %.1f s "
                        "after it arrives, so it will see none between sweeps", self.lidar.name, period,
                        OBSTACLE_TIMEOUT_S)
        sigma_cm = 100.0 * self.lidar.range_noise if self.lidar.noise else 0.0
        self.obstacle_covariance = min(obstacles.UNKNOWN_COVARIANCE - 1, round(sigma_cm**2))

    def check_end(self) -> None:
        """A run that ends (by its duration) before PX4 ever answered is a failure, however short it was."""
        if self.exchanges and not self.answers:
            raise self._no_answer(self.last_exchange_usec, "when the run reached its end")

    def close(self) -> None:
        if self.exchanges:
            log.info("PX4 lockstep: %s", self.stats())
        if self.bad_answers:
            log.warning("PX4 sent %d HIL_ACTUATOR_CONTROLS with non-finite controls (last %s); the ticks they "
                        "came on kept the previous controls", self.bad_answers, self.last_bad_controls)
        if self.future_answers:
            log.warning("PX4 sent %d HIL_ACTUATOR_CONTROLS stamped after the tick they came on; none was used",
                        self.future_answers)
        self.link.close()
        if self.commander is not None:
            self.commander.close()
        if self.ground_station is not None:
            self.ground_station.close()
        if self.offboard is not None:
            self.offboard.close()

    def stats(self) -> dict:
        """Counts of the link's traffic, for run.json and the closing log line."""
        return {
            "exchanges": self.exchanges, "answers": self.answers, "stale_answers": self.stale_answers,
            # Wall time [s] spent waiting for PX4 to connect: in the run's wall time, not its flight.
            "waiting_s": round(self.link.connect_wait_s, 3),
            "future_answers": self.future_answers, "non_finite_answers": self.bad_answers,
            "lockstep": self.lockstep, "gps_sent": self.gps_sent, "heartbeats": self.heartbeats,
            **({"px4_mav_type": self.px4_mav_type} if self.outputs is not None else {}),
            "boot_ticks": self.boot_ticks, "first_answer_tick": self.first_answer_tick,
            "boot_wall_s": round(self.boot_wall_s, 3), "boot_waits_for_idle": self.peer_process is not None,
            **({"settle_waits": self.settle_waits, "settle_wall_s": round(self.settle_wall_s, 3)} if self.settle else {}),
            "sensor_messages_sent": dict(self.extra_sent),
            **({"obstacle_sweeps": self.obstacle_sweeps, "obstacle_messages": self.obstacle_messages}
               if self.lidar is not None else {}),
            "messages_sent": self.link.sent, "messages_received": self.link.received,
            "saturated_fields": dict(self.link.saturated),
            "malformed_messages": self.link.bad_messages, "skipped_bytes": self.link.reader.skipped_bytes,
            **({"mission": self.commander.stats()} if self.commander is not None else {}),
            **({"offboard": self.offboard.stats()} if self.offboard is not None else {}),
            **({"ground_station": self.ground_station.stats()} if self.ground_station is not None else {}),
        }

    @property
    def peer_wait_s(self) -> float:
        """Wall time [s] spent waiting for PX4 rather than flying: its connection and its boot ticks (a paced
        run does not count it as falling behind, :mod:`nexus.runtime.pacing`)."""
        return self.link.connect_wait_s + self.boot_wall_s

    # -- stages ------------------------------------------------------------------------

    def _gather(self, io) -> None:
        wp.launch(gather_px4_row, dim=self.row.shape[0], inputs=[io["body/base"], io["imu"], io["mag"], io["baro"], io["gps"],
                                                 self.plant.geodetic_anchor, *self._row_constants],
                  outputs=[self.row], device=io.device)

    def _offboard(self, io) -> None:
        """Once PX4 is in lockstep: the policy's setpoint for this tick, before the exchange sends its HIL_SENSOR."""
        action = self._offboard_action(io)
        if action is not None:
            io["ctbr"].write(action)

    def _offboard_action(self, io, neighbours=None):
        """The action in force after this tick for this slot's vehicle (its own estimate and setpoint rows; a fleet
        policy's ``neighbours`` callable gives its neighbour features), or None before lockstep."""
        if not self.lockstep:
            return None
        time_usec = int(io["time_ns"].read()) // 1000  # one clock for every slot
        return self.offboard.step(self.exchanges + 1, time_usec, self.last_exchange_usec,
                                  io["estimate"].read(self.slot), io["setpoint"].read(self.slot), neighbours)

    def _connect(self) -> None:
        """Wait for PX4 to connect (the first tick), and find its process when it runs on this machine."""
        self.link.accept(self.connect_timeout)
        self.peer_process = PeerProcess.of_connection(self.link.connection)
        log.info("PX4's boot ticks wait %s", f"until PX4 (pid {self.peer_process.pid}) is idle"
                 if self.peer_process is not None else f"{self.boot_patience:g} s each (PX4's process is not visible)")

    def _queue_truth(self, time_usec: int) -> None:
        """The ground truth, unless PX4 had one within the interval it asked for."""
        if self.last_truth_usec is not None and time_usec - self.last_truth_usec < self.truth_interval_usec:
            return
        self.last_truth_usec = time_usec
        row = self.row_view.value
        self.link.queue_frame(self.packers["truth"].pack_wire(time_usec, *row("truth_floats"), *row("truth_ints")))

    def _make_views(self, io) -> dict:
        """The exchange's signals as NumPy views made once, and the frame packers."""
        self.views = views = {name: HostView(io[name], self.slot) for name in ("controls", "gps")}
        views["time_ns"] = HostView(io["time_ns"])  # one clock for every slot
        airspeeds = io[AIRSPEED_SIGNAL]
        self.airspeed_view = HostView(airspeeds[0], self.slot) if airspeeds else None
        mav = self.link.mav
        saturated = self.link.saturated  # one count of every field sent saturated (nexus.px4.packer)
        self.packers = {"truth": FramePacker(mavlink.MAVLink_hil_state_quaternion_message, mav, saturated),
                        "sensor": FramePacker(mavlink.MAVLink_hil_sensor_message, mav, saturated),
                        "gps": FramePacker(mavlink.MAVLink_hil_gps_message, mav, saturated)}
        if self.ground_station is not None:
            self._gcs_views = (HostView(io["manual_control"], self.slot), HostView(io["gcs_messages"], self.slot))
        return views

    def _relay(self, time_usec: int) -> None:
        """The ground station's traffic: PX4's forwarded, its own delivered before this tick's HIL_SENSOR and recorded."""
        relay = self.ground_station
        delivered = relay.step(self.exchanges + 1, time_usec, self.last_exchange_usec, self.lockstep)
        sticks, count = self._gcs_views
        sticks.write(relay.sticks)
        count.write(delivered)

    def _exchange(self, io) -> None:
        self._receive(io, self._send(io))

    def _send(self, io) -> int:
        """This tick's messages to PX4, in one write; returns the tick's time [µs]."""
        if self.link.connection is None:
            self._connect()
        views = self.views or self._make_views(io)
        views["time_ns"].refresh()
        time_usec = views["time_ns"].values() // 1000
        row = self.row_view
        row.refresh()
        # Leaves with the sensor message, in one write.
        self._queue_truth(time_usec)
        if self.commander is not None and self.lockstep:
            self.commander.step(self.exchanges + 1, time_usec, self.last_exchange_usec)
        if self.ground_station is not None:
            self._relay(time_usec)
        sensor = row.value("sensor")
        last = self.last_sample_time
        stamps = sensor[STAMPS]
        fields = messages.sensor_fields(stamps[0] != last[0], stamps[1] != last[1], stamps[2] != last[2])
        new_gps = stamps[3] != last[3]
        self.last_sample_time = stamps
        if self.airspeed_view is not None:
            fields |= self._take_airspeed()
        # HIL_SENSOR's fields, already in PX4's units: accel, gyro, mag, abs and diff pressure, altitude, temperature.
        self.link.queue_frame(self.packers["sensor"].pack_wire(
            time_usec, *sensor[:10], self.diff_pressure_hpa, sensor[10], sensor[11], fields, 0))
        if new_gps:
            gps = views["gps"]
            gps.refresh()
            self.link.queue_frame(self.packers["gps"].pack(*messages.hil_gps_args(
                time_usec, gps.value("fix_type"), gps.value("latitude"), gps.value("longitude"), gps.value("altitude"),
                gps.value("eph"), gps.value("epv"), gps.value("velocity"), gps.value("satellites"))))
            self.gps_sent += 1
        if self.extra_writers:
            self._queue_extra_sensors(io, time_usec)
        if self.lidar is not None:
            self._queue_obstacles(io)
        self.link.flush()
        self.exchanges += 1
        self.last_exchange_usec = time_usec
        return time_usec

    def _receive(self, io, time_usec: int) -> None:
        """PX4's answer to this tick (or none, while it boots) into ``controls``; the run ends when asked to."""
        if self._answer(time_usec):
            io.finish()

    def _answer(self, time_usec: int) -> bool:
        """Wait for PX4's answer to this tick and write its controls; True when the run should end here."""
        views = self.views
        answer = self._await_answer(time_usec) if self.lockstep else self._boot(time_usec)
        if answer is not None:
            self.answers += 1
            self._take(answer.controls)
            if self.commander is not None and self.lockstep:
                self.commander.note_armed(bool(answer.mode & MAV_MODE_FLAG_SAFETY_ARMED), time_usec)
        views["controls"].write(self.last_controls)
        if self.finish_when is not None and self.finish_when.is_set():
            if not self.lockstep:
                raise self._no_answer(time_usec, "the run was asked to end")
            return True
        if self.commander is None:
            return False
        plan = self.commander.plan
        if isinstance(plan, PlanePlan):  # a plane rolls on after PX4's disarm: the run ends at its stop
            ints = self.row_view.value("truth_ints")  # HIL_STATE_QUATERNION's: vx, vy [cm/s] at 3 and 4
            return plan.rolled_out(time_usec, math.hypot(float(ints[3]), float(ints[4])) * 0.01)
        return self.commander.finished(time_usec)

    def _take_airspeed(self) -> int:
        """HIL_SENSOR's diff-pressure bit when the airspeed sensor has a new sample (kept in hPa), else 0."""
        view = self.airspeed_view
        view.refresh()
        stamp = view.value("time")
        if stamp == self.airspeed_last_time:
            return 0
        self.airspeed_last_time = stamp
        self.diff_pressure_hpa = view.value("differential_pressure") * messages.PA_TO_HPA
        return messages.DIFF_PRESSURE_BITS

    def _queue_extra_sensors(self, io, time_usec: int) -> None:
        """Each spec-declared sensor's message, for each new sample."""
        for signal, writers in self.extra_writers.items():
            for component, port in zip(writers, io[signal]):
                sample = port.read(self.slot)
                if float(sample.time) == self.extra_last.get(component.name):
                    continue
                self.extra_last[component.name] = float(sample.time)
                message = component.mavlink_message(self.link.mav, time_usec, sample)
                self.link.queue(message)
                self.extra_sent[message.get_type()] += 1

    def _queue_obstacles(self, io) -> None:
        """A new sweep (a new ``PointCloud.tick``) as PX4's obstacle data: up to eight DISTANCE_SENSORs."""
        cloud = io[LIDAR_SIGNAL][0].read()
        if cloud is None or cloud.tick == self.obstacle_tick:
            return
        self.obstacle_tick = cloud.tick
        sectors = self.obstacle_reduction.sectors(cloud["points"][self.slot], cloud["valid"][self.slot])
        sent = obstacles.distance_sensor_messages(
            self.link.mav, int(round(float(cloud.time) * 1000.0)), sectors, min_range=self.lidar.min_range,
            max_range=self.lidar.max_range, band=self.obstacle_band, covariance_cm2=self.obstacle_covariance,
        )
        for message in sent:
            self.link.queue(message)
        self.obstacle_sweeps += 1
        self.obstacle_messages += len(sent)

    def _boot(self, time_usec: int):
        """Until PX4 first answers: wait for this tick's answer until PX4 is idle (or the patience ran out).

        Returns the answer, or None when PX4 is still booting; the tick's clock then moves on. An answer
        stamped with an earlier tick (one PX4 sent after its tick had moved on) starts lockstep too: PX4
        answers every sensor message, so this tick's answer follows it.
        """
        began = time.monotonic()
        if self.boot_started is None:
            self.boot_started = (time_usec, began)
        self.boot_ticks += 1
        patience = began + (self.answer_timeout if self.peer_process is not None else self.boot_patience)
        try:
            while True:
                message = self.link.receive(min(time.monotonic() + 0.0005, patience))
                if message is None:
                    if time.monotonic() >= patience:
                        break
                    if self.peer_process is not None and self.peer_process.idle(quiet_s=BOOT_QUIET_S) \
                            and not self.link.poll_pending():
                        self.boot_idle_waits += 1
                        break
                    continue
                if message.get_type() != "HIL_ACTUATOR_CONTROLS":
                    self._note(message)
                    continue
                if message.time_usec > time_usec:
                    self.future_answers += 1
                    continue
                self.lockstep = True
                self.first_answer_tick = self.exchanges
                log.info("PX4 answered on tick %d (sim time %.3f s): lockstep from now on", self.exchanges,
                         time_usec * 1e-6)
                if message.time_usec == time_usec:
                    return message
                self.stale_answers += 1
                return self._await_answer(time_usec)
        finally:
            self.boot_wall_s += time.monotonic() - began
        first_usec, first_wall = self.boot_started
        if (time_usec - first_usec) * 1e-6 >= self.first_answer_s and time.monotonic() - first_wall >= self.answer_timeout:
            raise self._no_answer(time_usec, None)
        return None

    def _no_answer(self, time_usec: int, why: str | None) -> NoAnswerError:
        first_usec, first_wall = self.boot_started or (time_usec, time.monotonic())
        sim_s = (time_usec - first_usec) * 1e-6
        wrong = f"; {self.future_answers} answers were stamped after their tick and not used" if self.future_answers else ""
        return NoAnswerError(
            f"PX4 connected but never answered HIL_ACTUATOR_CONTROLS in {sim_s:.1f} s of sim time "
            f"({self.exchanges} sensor messages, {time.monotonic() - first_wall:.1f} s wall"
            f"{', ' + why if why else ''}); it sent {self.heartbeats} heartbeats{wrong}. The vehicle flew on zero "
            "controls: check PX4's console for a start-up error (PX4_SIM_MODEL, a module that failed to start), "
            "or raise --px4-answer-timeout if PX4 is only slow to start"
        )

    def _await_answer(self, time_usec: int):
        """Wait for the answer stamped with this tick's time [µs]; count and skip any other."""
        deadline = time.monotonic() + self.answer_timeout
        seen: Counter | None = None  # what else came meanwhile, made only when something did
        past = future = 0
        newest = None
        while True:
            message = self.link.receive(deadline)
            if message is None:
                raise self._timeout(time_usec, seen, past, future, newest)
            if message.get_type() != "HIL_ACTUATOR_CONTROLS":
                seen = seen if seen is not None else Counter()
                seen[message.get_type()] += 1
                self._note(message)
                continue
            # PX4 stamps its answer with the time of the sensor message it answers.
            if message.time_usec == time_usec:
                if self.settle and self.peer_process is not None:
                    self._settle(deadline)
                return message
            newest = message.time_usec
            if message.time_usec < time_usec:
                past += 1
                self.stale_answers += 1
            else:
                future += 1
                self.future_answers += 1

    def _settle(self, deadline: float) -> None:
        """Wait until no thread of PX4's process runs (or the answer's deadline passes)."""
        began = time.monotonic()
        while not self.peer_process.idle(tree=False) and time.monotonic() < deadline:
            pass
        self.settle_waits += 1
        self.settle_wall_s += time.monotonic() - began

    def _timeout(self, time_usec: int, seen: Counter | None, past: int, future: int, newest) -> Exception:
        waited = f"for the HIL_ACTUATOR_CONTROLS stamped {time_usec} µs (sim time {time_usec * 1e-6:.3f} s)"
        if past or future:
            return WrongStampsError(
                f"PX4 is answering, but not this tick: waiting {waited}, it sent {past} stamped earlier and "
                f"{future} stamped later (the last at {newest} µs) within {self.answer_timeout:g} s. Its clock "
                "does not follow HIL_SENSOR's time_usec: is PX4 built with lockstep, and is it the only "
                "simulator client on this port?"
            )
        others = ", ".join(f"{count} {kind}" for kind, count in sorted((seen or {}).items())) or "nothing at all"
        return AnswerTimeoutError(
            f"PX4 sent no HIL_ACTUATOR_CONTROLS within {self.answer_timeout:g} s (lockstep stalled {waited}; "
            f"it sent {others} meanwhile); is PX4 still running? raise --px4-answer-timeout if it is only slow"
        )

    def _take(self, controls) -> None:
        """Use an answer's controls, or keep the last ones if they are unusable (and count it)."""
        # A sum of floats is finite exactly when each is (16 float32 values cannot overflow a double).
        if len(controls) == CONTROLS_WIDTH and math.isfinite(sum(controls)):
            # A tuple of Python floats, written to the float32 row each tick (a plane's through its output map).
            self.last_controls = controls if self.outputs is None else self.outputs.row(controls)
            self.bad_answers_in_a_row = 0
            return
        row = np.asarray(controls, dtype=np.float32)
        self.bad_answers += 1
        self.bad_answers_in_a_row += 1
        self.last_bad_controls = row.tolist()
        log.debug("PX4 sent unusable controls %s; keeping the last ones", row)
        if self.bad_answers_in_a_row >= MAX_BAD_ANSWERS_IN_A_ROW:
            raise BadActuatorsError(
                f"PX4 sent {self.bad_answers_in_a_row} HIL_ACTUATOR_CONTROLS in a row with non-finite controls "
                f"(last {self.last_bad_controls}); the run stopped rather than fly on stale controls. PX4's "
                "controllers have diverged: check its console and the vehicle's PX4 parameters (nexus px4 params)"
            )

    def _note(self, message) -> None:
        """Act on a message that is not an answer."""
        kind = message.get_type()
        if kind == "HEARTBEAT":
            self.heartbeats += 1
            self.px4_mav_type = int(message.type)
            if self.outputs is not None and message.type not in (MAV_TYPE_GENERIC, self.outputs.mav_type):
                vtol = self.outputs.mav_type == MAV_TYPE_VTOL_FIXEDROTOR
                what = ("a standard VTOL (MAV_TYPE 22, fixed lift rotors)" if vtol else
                        f"a plane (MAV_TYPE {MAV_TYPE_FIXED_WING}, fixed wing)")
                airframe = "standard-VTOL airframe (PX4_SYS_AUTOSTART=1040)" if vtol else \
                    "fixed-wing airframe (PX4_SYS_AUTOSTART=1030)"
                raise WrongAirframeError(
                    f"PX4 says it flies MAV_TYPE {message.type}, and {self.plant.vehicle_path} is {what}: start PX4 "
                    f"with its {airframe} and the parameters `nexus px4 params` derives for this vehicle")
        elif kind == "COMMAND_LONG" and message.command == SET_MESSAGE_INTERVAL and int(message.param1) == TRUTH_ID:
            # PX4 asks for ground truth at an interval [µs]; 0 or less means as often as we like.
            self.truth_interval_usec = max(0, int(message.param2))
            log.info("PX4 asked for ground truth every %d µs", self.truth_interval_usec)
        elif kind == "COMMAND_LONG":
            log.debug("PX4 asked: COMMAND_LONG %d", message.command)
        else:
            log.debug("PX4 sent %s, not used", kind)


@dataclass(frozen=True)
class Px4Options(ControllerOptions):
    """``--controller px4``'s options: :class:`Px4Controller`'s keyword arguments (the link ones always recorded)."""

    host: str = option(DEFAULT_HOST, "PX4 link: address to listen on.", flag="--px4-host", always=True)
    port: int = option(DEFAULT_PORT, "PX4 link: TCP port PX4 connects to (4560 + instance).", flag="--px4-port",
                       minimum=0, maximum=65535, always=True)
    connect_timeout: float = option(CONNECT_TIMEOUT_S, "PX4 link: how long to wait for PX4 to connect [s].",
                                    flag="--px4-connect-timeout", minimum=0.1, always=True)
    answer_timeout: float = option(ANSWER_TIMEOUT_S, "PX4 link: how long to wait for each actuator answer in "
                                   "lockstep [s].", flag="--px4-answer-timeout", minimum=0.01, always=True)
    settle: bool = option(False, "With --controller px4 and PX4 on this machine: after each answer also wait until "
                          "PX4's process is idle (its threads outside lockstep finish each step; slow, for "
                          "reproducibility measurements).", flag="--px4-settle")
    first_answer_s: float = option(FIRST_ANSWER_S, "Sim time [s] within which PX4 must answer once after boot.")
    obstacle_band: float = option(obstacles.DEFAULT_BAND, "Elevation band [rad] of the lidar returns sent as "
                                  "obstacles (±).")
    boot_patience: float = option(BOOT_PATIENCE_S, "Wall time [s] a boot tick waits for an answer when PX4's "
                                  "idleness cannot be seen.")
    offboard_policy: str | None = option(None, "With --controller px4: fly this CTBR policy (ONNX, action ctbr:4 "
                                         "as nexus train exports it: collective about hover and body rates in "
                                         "[-1, 1]) in PX4's offboard mode, as SET_ATTITUDE_TARGET on fixed ticks "
                                         "(docs/px4_offboard.md).",
                                         flag="--px4-offboard-policy", path=True)
    offboard_rate: float | None = option(None, "With --px4-offboard-policy: the policy's rate [Hz]; its period must "
                                         "be a whole number of ticks (default: the model's nexus:policy_hz, else "
                                         f"{offboard.RATE_HZ:g} Hz).", flag="--px4-offboard-rate", minimum=0.001)
    offboard_url: str = option(DEFAULT_URL, "With --px4-offboard-policy: where PX4's MAVLink API stream "
                               "arrives (the setpoints go back to its sender).", flag="--px4-offboard-url")
    offboard_at_s: float = option(offboard.AT_S, "With --px4-offboard-policy: sim time [s] of the switch to offboard "
                                  "mode (the arm follows offboard_arm_delay_s later).", flag="--px4-offboard-at",
                                  minimum=0.0)
    offboard_lead_s: float = option(offboard.LEAD_S, "Sim time [s] the setpoint stream runs before the switch to "
                                    "offboard (PX4 wants more than 1 s).")
    offboard_arm_delay_s: float = option(offboard.ARM_DELAY_S, "Sim time [s] from the switch to offboard to the arm.")
    #: ``{"url": ...}``: fly the built-in mission from inside the lockstep loop (``nexus run --px4-mission``).
    #: It may hold ``link_loss = [start, end]`` [s]: the ground station's heartbeat stops (nexus.px4.commander).
    mission: dict | None = option(None, "The built-in mission flown from inside the loop: {url = MAVLink URL}.")
    gcs: str | None = option(None, "With --controller px4: relay a ground station (QGroundControl) at HOST:PORT to "
                             "PX4's ground-station link, each of its inputs delivered to PX4 between two ticks and "
                             "recorded with the tick it took effect on (default with --realtime: "
                             f"{ground_station.DEFAULT_GCS}; off: none, the ground station talks to PX4 directly).",
                             flag="--px4-gcs")
    gcs_port: int = option(ground_station.PX4_GCS_PORT, "PX4's ground-station MAVLink port (UDP 18570 + instance; "
                           "--px4-instance sets it).", minimum=1, maximum=65535)
    finish_when: threading.Event | None = option(None, "The run ends once this event is set (a sweep's PX4 command "
                                                 "or mission ended).", recorded=False)

    def reads_guidance(self) -> bool:
        """An offboard policy observes the vehicle's estimate and the scene mission's setpoint."""
        return self.offboard_policy is not None


#: What PX4 reads on a plane, by schema: the HIL_SENSOR and HIL_GPS groups, and the pitot's diff_pressure.
PLANE_SENSORS = {"NexusImuAPI": "IMU", "NexusMagnetometerAPI": "magnetometer", "NexusBarometerAPI": "barometer",
                 "NexusGpsAPI": "GPS", "NexusAirspeedAPI": "airspeed sensor"}


def _build(prim, path: str, ctx, options: Px4Options) -> Px4Controller:
    if ctx.plant.vehicles > 1:
        return _fleet(path, ctx, options)
    if not is_plane(ctx.stage):
        controller = Px4Controller(path, ctx.plant, system_id=first_instance(options.port) + 1, **options.keywords())
        if controller.offboard is not None:
            controller.offboard.policy.check_vehicles(1)  # a fleet policy needs its fleet
        return controller
    if ctx.plant.rotors:  # a wing and lift rotors: a standard VTOL
        return Px4Controller(path, ctx.plant, **_vtol_keywords(ctx, options))
    return Px4Controller(path, ctx.plant, **_plane_keywords(ctx, options))


def _check_sensors(ctx, kind: str, this: str, example: str) -> None:
    """PX4 flies ``kind`` on its own sensors: one line naming every one the file lacks and ``example``."""
    applied = {api for p in ctx.stage.Traverse() for api in nexus_apis(p)}
    missing = [f"{what} ({schema})" for schema, what in PLANE_SENSORS.items() if schema not in applied]
    if missing:
        raise BuildError(f"{ctx.plant.vehicle_path}: PX4 flies {kind} on its own sensors, and {this} has no "
                         f"{', no '.join(missing)}; add them under the base body ({example})")


def _vtol_keywords(ctx, options: Px4Options, slot: int = 0) -> dict:
    """:class:`Px4Controller`'s keywords for a standard VTOL: the options', its output map (the lift motors, the
    pusher and the surfaces) and, with ``--px4-mission``, its VTOL mission as PX4 items (:mod:`.vtol_mission`); it
    rests on its gear until PX4 lifts it off. An offboard policy flies a multirotor's thrust and rates: refused."""
    vehicle = ctx.plant.vehicle_path
    if options.offboard_policy is not None:
        raise BuildError(f"{vehicle}: --px4-offboard-policy flies a multirotor's thrust and body rates, and this "
                         "vehicle is a standard VTOL: drop the option (fly --px4-mission, or its own mission with "
                         "--controller vtol)")
    _check_sensors(ctx, "a VTOL", "this one", "vehicles/standard_vtol.usda's Imu, Mag, Baro, Gps and Pitot")
    keywords = options.keywords()
    if options.mission is not None:
        if options.mission.get("steps"):
            raise BuildError(f"{vehicle}: a scenario's [[step]]s fly a multirotor's PX4 mission, and this vehicle is a "
                             "standard VTOL, which flies its own VTOL mission (its NexusVtolMissionAPI prim or the "
                             "scene's) through PX4; drop the steps")
        scene = Usd.Stage.Open(str(ctx.plant.scene_path)) if ctx.plant.scene_path is not None else ctx.stage
        flown = vtol_mission(ctx.stage, scene, vehicle, ctx.plant.scene_path, None)
        east, north = (float(v) for v in ctx.plant.home_offset[slot][:2])
        items = vtol_mission_items(flown, ctx.plant.origin, shift=(north, east))
        times = {k: v for k, v in options.mission.items() if k in PLAN_TIMES}
        keywords["mission"] = {**options.mission, **times, "plane_items": items, "height": flown.height}
    return {**keywords, "outputs": plane_outputs(ctx.stage, vehicle)}


def _plane_keywords(ctx, options: Px4Options, slot: int = 0) -> dict:
    """:class:`Px4Controller`'s keywords for the plane of ``slot``: the options', its output map, its start (an air
    start, a catapult's or the runway's) and its mission's items, placed from the slot's own start."""
    vehicle = ctx.plant.vehicle_path
    if options.offboard_policy is not None:
        raise BuildError(f"{vehicle}: --px4-offboard-policy flies a multirotor's thrust and body rates, and this vehicle "
                         "is a plane: drop the option (PX4 then flies the plane in the mode it starts in, or its "
                         "mission with --px4-mission)")
    _check_sensors(ctx, "a plane", "this plane", "vehicles/aerosonde.usda's Imu, Mag, Baro, Gps and Pitot prims show how: "
                   "PX4's fixed-wing controllers fly airspeed, from HIL_SENSOR's diff_pressure")
    check_one_start(ctx.stage, vehicle)
    catapults = [p for p in ctx.stage.Traverse() if CATAPULT_SPEC.schema in nexus_apis(p)]
    keywords = options.keywords()
    start = None if catapults else air_start(ctx.stage, vehicle, ctx.plant)
    if options.mission is not None:
        keywords["mission"] = _plane_mission(ctx, vehicle, options.mission, catapults, start, slot)
    elif start is None and not catapults:
        raise BuildError(f"{vehicle}: a plane flown by PX4 starts from its air start or from a catapult, or takes off "
                         "from the runway in PX4's mission, and the file has no start and this run no mission; add a "
                         "prim with NexusAirStartAPI (nexus:airspeed [m/s], nexus:height [m]) or NexusCatapultAPI "
                         "(vehicles/aerosonde_px4.usda shows one), or fly --px4-mission (vehicles/aerosonde_runway.usda)")
    runway = options.mission is not None and start is None and not catapults
    return {**keywords, "outputs": plane_outputs(ctx.stage, vehicle), "start": start, "runway_takeoff": runway}


#: The plane mission's times a mission table may set (the upload's, the arm's and the start's; nexus.px4.step_mission).
PLAN_TIMES = ("upload_at_s", "arm_delay_s", "start_delay_s")


def _plane_mission(ctx, vehicle, mission: dict, catapults: list, start, slot: int = 0) -> dict:
    """``--px4-mission`` on a plane: the plane's mission as PX4 items (:mod:`nexus.px4.plane_mission`), flown from a
    catapult whose push comes after PX4's mission started, or from the runway (a file with no start: the plane rests
    on its wheels and PX4's runway takeoff, ``RWTO_TKOFF`` 1 from ``nexus px4 params``, rolls it off)."""
    if start is not None:
        raise BuildError(f"{vehicle}: --px4-mission on a plane launches it from a catapult or from the runway (PX4 "
                         "sends zeros until it arms, so a plane released in the air would glide unpowered while PX4 "
                         "aligns), and this file starts in the air; fly --vehicle aerosonde_px4 (catapult) or "
                         "aerosonde_runway (runway), or replace the NexusAirStartAPI prim with a NexusCatapultAPI one "
                         "(nexus:holdTime after PX4's mission start) or deactivate it (a runway takeoff)")
    if mission.get("steps"):
        raise BuildError(f"{vehicle}: a scenario's [[step]]s fly a multirotor's PX4 mission, and this vehicle is a "
                         "plane, which flies its own plane mission (its NexusPlaneMissionAPI prim or the scene's) "
                         "through PX4; drop the steps")
    scene = Usd.Stage.Open(str(ctx.plant.scene_path)) if ctx.plant.scene_path is not None else ctx.stage
    flown = plane_mission(ctx.stage, scene, vehicle, ctx.plant.scene_path, None)
    heading = None if catapults else resting_heading(ctx.plant, slot)  # no catapult, no air start: the runway
    east, north = (float(v) for v in ctx.plant.home_offset[slot][:2])  # the slot's start from vehicle 0's [m]
    items = plane_mission_items(flown, ctx.plant.origin, f"{flown.name} (the plane mission of {vehicle} and its scene)",
                                runway_heading=heading, shift=(north, east))
    times = {k: v for k, v in mission.items() if k in PLAN_TIMES}
    if heading is not None and "upload_at_s" not in times:  # a runway takeoff waits for PX4's TECS
        times["upload_at_s"] = runway_upload_s(float(ctx.plant.origin.altitude))
    if catapults:
        hold = float(read_prim(catapults[0], CATAPULT_SPEC, vehicle)["hold_time"])
        check_launch(hold, PlanePlan(items, **times).start_s(), f"{vehicle}: {catapults[0].GetPath()}")
    return {**mission, **times, "plane_items": items, "height": flown.height}


def _fleet(path: str, ctx, options: Px4Options) -> Px4FleetController:
    """One PX4 instance per vehicle of the one world (:mod:`nexus.px4.fleet_controller`): multirotors, or planes each
    flying the plane mission from its own start; with an offboard policy, each instance flies it for its own vehicle
    (its pilot on the instance's API port, addressed to its system id)."""
    vehicles = ctx.plant.vehicles
    keywords = options.keywords()
    port, gcs_port, mission = keywords.pop("port"), keywords.pop("gcs_port"), keywords.pop("mission")
    first = first_instance(port)
    check_instances(first, vehicles, f"--controller px4 --vehicles {vehicles} (first PX4 instance {first}, TCP "
                                     f"port {port})")
    peers = []
    for k in range(vehicles):
        if is_plane(ctx.stage):
            own = _vtol_keywords(ctx, options, k) if ctx.plant.rotors else _plane_keywords(ctx, options, k)
        else:
            own = dict(keywords, mission=mission)
        own.pop("port", None), own.pop("gcs_port", None)
        if own["mission"] is not None:
            own["mission"] = {**own["mission"], "url": instance_url(own["mission"]["url"], k)}
        if options.offboard_policy is not None:  # instance i's API stream arrives on the first's port + k
            own["offboard_url"] = instance_url(options.offboard_url, k)
        peers.append(Px4Controller(f"{path}[{k}]", ctx.plant, port=instance_port(port, k), gcs_port=gcs_port + k,
                                   slot=k, system_id=first + k + 1, **{**keywords, **own}))
        if peers[0].offboard is not None and k == 0:
            peers[0].offboard.policy.check_vehicles(vehicles)  # a fleet policy for another fleet size: refused now
    return Px4FleetController(path, ctx.plant, peers, first)


register("px4", _build, help="PX4 SITL in lockstep over a MAVLink TCP link (its own estimator); multirotors, and "
         "planes through PX4's fixed-wing airframe, standard VTOLs through its standard-VTOL airframe",
         options=Px4Options, vehicles=("multirotor", "plane", "vtol"),
         own_estimator=True, duration_s=300.0,
         single_world="one PX4 SITL instance flies one vehicle, and one world holds every instance's vehicle "
         "(--vehicles K flies K instances in one world)", one_world_fleet=True,
         run_hooks=RunHooks(run_options.options, run_options.NAMES, run_options.check, run_options.start),
         setup_table="px4")
