"""One row per world: how it ended, how well it flew, and what was drawn for it.

Two halves. :class:`WorldSummary` is a device stage (kind ``record``, after
the controller) that keeps, for each world while it flies, the largest
altitude error [m] and yaw error [deg] between the true pose and the
guidance's setpoint (while armed; a landing goal below the ground counts as
ground level). It runs whether or not the record keeps
rows (``--record summary`` keeps only this), and it stops with its world, so
a finished world's figures stop changing. :func:`summary_columns` reads it
back at the end with each world's exit, time to done, landing error and final
position, and the values drawn for it; ``run.py`` writes them as
``summary.parquet``.

A world its battery ended (``battery-empty``) has no landing error (NaN): the
pack stopped it wherever it was, often in the air on the way, so the distance
from there to the landing point says how far the mission had left, not how
well it landed, and would mix into the landing errors of the worlds that did
land. Its final position still says where it stopped.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.spec import Spec, StateVar
from nexus.guidance.setpoint import Setpoint
from nexus.plant.body_state import BodyState
from nexus.plant.frames import enu_to_ned
from nexus.plant.battery import BATTERY_EMPTY, BATTERY_EMPTY_REASON
from nexus.plant.crash import CRASHED, CRASHED_REASON
from nexus.plant.vehicle_collision import COLLIDED, COLLIDED_REASON
from nexus.estimation.ekf import DIVERGED, DIVERGED_REASON
from nexus.plant.physics import FAILED

#: Figures of the per-world distribution ``nexus run`` prints at the end (and ``nexus plot`` draws).
KEY_FIGURES = ("done_time", "max_altitude_error", "max_yaw_error", "landing_error")
#: A world's done flag once its mission ended (the guidance sets it; the step sets ``FAILED``).
DONE = 1
#: How a world ended, by its done flag (see ``nexus.core.loop``): flying at the end means the duration ran out.
EXITS = {0: "duration", DONE: "done", FAILED: "failed", BATTERY_EMPTY: BATTERY_EMPTY_REASON, CRASHED: CRASHED_REASON,
         DIVERGED: DIVERGED_REASON, COLLIDED: COLLIDED_REASON}


def run_end_reason(done: np.ndarray) -> str:
    """The exit reason of a run whose every world has ended: ``battery-empty`` when each world's pack ran
    out, ``crashed`` when each crashed (nexus.plant.crash), ``collision`` when a collision ended each
    (nexus.plant.vehicle_collision), else ``done`` (each world's own reason is in the summary)."""
    for flag, reason in ((BATTERY_EMPTY, BATTERY_EMPTY_REASON), (CRASHED, CRASHED_REASON), (DIVERGED, DIVERGED_REASON),
                         (COLLIDED, COLLIDED_REASON)):
        if done.size and bool((done == flag).all()):
            return reason
    return "done"


@wp.func
def heading_ned(q: wp.quat) -> wp.float32:
    """Heading [rad, NED: 0 north, clockwise] of an ENU/FLU body quaternion (x, y, z, w)."""
    yaw_enu = wp.atan2(2.0 * (q[3] * q[2] + q[0] * q[1]), 1.0 - 2.0 * (q[1] * q[1] + q[2] * q[2]))
    return wp.float32(0.5 * wp.pi) - yaw_enu


@wp.kernel
def track_errors(
    body: wp.array(dtype=BodyState),
    setpoint: wp.array(dtype=Setpoint),
    armed: wp.array(dtype=wp.int32),
    running: wp.array(dtype=wp.int32),
    ned_origin: wp.array(dtype=wp.vec3),
    errors_in: wp.array2d(dtype=wp.float32),
    errors_out: wp.array2d(dtype=wp.float32),
):
    world = wp.tid()
    altitude = errors_in[world, 0]
    yaw = errors_in[world, 1]
    if running[world] != 0 and armed[world] != 0:
        pose = body[world].pose
        position = enu_to_ned(wp.transform_get_translation(pose) - ned_origin[world])
        goal = setpoint[world]
        # A landing's goal sinks below the ground to press the gear down: it counts only to ground level.
        altitude = wp.max(altitude, wp.abs(position[2] - wp.min(goal.position[2], 0.0)))
        turn = heading_ned(wp.transform_get_rotation(pose)) - goal.yaw
        turn = wp.atan2(wp.sin(turn), wp.cos(turn))
        yaw = wp.max(yaw, wp.abs(turn) * wp.float32(180.0 / wp.pi))
    errors_out[world, 0] = altitude
    errors_out[world, 1] = yaw


class WorldSummary(Component):
    """Keeps each world's largest altitude [m] and yaw [deg] errors against the setpoint while it flies."""

    spec = Spec(name="WorldSummary", doc="Each world's largest altitude and yaw errors while it flies.",
                state=(StateVar("errors", wp.float32, (2,), 0.0, "largest altitude error [m] and yaw error [deg]"),))

    def __init__(self, plant, name: str = "/worlds/summary"):
        super().__init__(name)
        self.plant = plant
        self.worlds = 1
        self._store = None

    def stages(self) -> list[Stage]:
        reads = (
            Read(f"body/{self.plant.body_label(self.plant.base_path)}", BodyState, (1,)),
            Read("setpoint", Setpoint, (1,), default=Setpoint()),
            Read("armed", wp.int32, (1,), default=1),
            Read("running", wp.int32, (1,), default=1),
        )
        return [Stage("summary", "record", self._run, reads=reads)]

    def prepare(self, ctx) -> None:
        self.worlds = ctx.worlds
        self._store = ctx.states
        self._body = f"body/{self.plant.body_label(self.plant.base_path)}"

    def _run(self, io) -> None:
        wp.launch(
            track_errors, self.worlds,
            inputs=[io[self._body], io["setpoint"], io["armed"], io["running"], self.plant.ned_origin,
                    io.state_in["errors"], io.state_out["errors"]],
            device=io.device,
        )

    def errors(self) -> np.ndarray:
        """(worlds, 2): largest altitude error [m] and yaw error [deg] of each world so far."""
        return self._store.of(self)["errors"].numpy()


def _landing_points(guidance, worlds: int) -> np.ndarray | None:
    """Where each world's mission lands [m, NED] (horizontal), or None without a planned mission."""
    plans = getattr(guidance, "plans", None)
    if not plans:
        return None
    return np.array([[plan.legs[-1].end[0], plan.legs[-1].end[1]] for plan in plans[:worlds]], dtype=np.float64)


def summary_columns(flight) -> dict[str, np.ndarray]:
    """The summary's columns of a flight (``nexus.runtime.flight.Flight``) that flew, one row per world (see the
    module doc for what each holds)."""
    loop, plant, variation = flight.loop, flight.vehicle.plant, flight.variation
    seed, first_world = flight.options.seed, flight.options.first_world
    worlds, vehicles = loop.worlds, loop.vehicles  # slots: with several vehicles a world, one row per vehicle
    if vehicles > 1:  # each vehicle's own values (nexus.worlds.vehicle_draws)
        variation = flight.slot_values
    done = loop.world_done()
    ticks = loop.world_ticks()
    dt = loop.dt_ns * 1e-9
    failed_tick = flight.vehicle.physics.failed_tick.numpy()
    final = plant.base_positions()
    origin = plant.ned_origin.numpy().astype(np.float64)
    errors = flight.summary.errors().astype(np.float64)
    final_ned = np.stack([final[:, 1] - origin[:, 1], final[:, 0] - origin[:, 0]], axis=1)
    guidance = next((c for c in loop.components if getattr(c, "is_guidance", False)), None)
    landing = _landing_points(guidance, worlds)
    landing_error = np.linalg.norm(final_ned - (landing if landing is not None else 0.0), axis=1)
    landing_error = np.where(done == BATTERY_EMPTY, np.nan, landing_error)  # it did not land (module doc)
    columns: dict[str, np.ndarray] = {
        "world": first_world + np.arange(worlds, dtype=np.int32) // vehicles,
        **({"vehicle": np.arange(worlds, dtype=np.int32) % vehicles} if vehicles > 1 else {}),
        "seed": np.full(worlds, seed, dtype=np.int64),
        "exit_reason": np.array([EXITS.get(int(flag), "failed") for flag in done], dtype=object),
        "done_time": np.where(done == DONE, ticks * dt, np.nan),
        "failed_tick": np.where(done == FAILED, failed_tick, -1).astype(np.int64),
        "max_altitude_error": errors[:, 0],
        "max_yaw_error": errors[:, 1],
        "landing_error": landing_error,
        "final_x": final[:, 0], "final_y": final[:, 1], "final_z": final[:, 2],
    }
    names: list[str] = []
    for values in variation:
        names += [name for name in values if name not in names]
    for name in names:
        sample = next(values[name] for values in variation if name in values)
        if isinstance(sample, (list, tuple)):
            for k in range(len(sample)):
                columns[f"vary.{name}[{k}]"] = np.array([
                    float(v[name][k]) if name in v else np.nan for v in variation], dtype=np.float64)
        elif isinstance(sample, str):
            columns[f"vary.{name}"] = np.array([str(v.get(name, "")) for v in variation], dtype=object)
        else:
            columns[f"vary.{name}"] = np.array([float(v.get(name, math.nan)) for v in variation], dtype=np.float64)
    return columns


def summary_counts(columns: dict[str, np.ndarray]) -> dict:
    """What run.json keeps of a summary: the worlds that ended done, failed or still flying (``duration``), and
    the distribution lines of the key figures (:func:`distribution_lines`, printed, not kept)."""
    reasons = list(columns["exit_reason"])
    return {"worlds_done": reasons.count("done"), "worlds_failed": reasons.count("failed"),
            "worlds_flying": reasons.count("duration"), "distribution": distribution_lines(columns)}


def distribution_lines(columns: dict[str, np.ndarray]) -> list[str]:
    """One line per key figure: min, median, p95 and max over the worlds (a fleet's: vehicles) that have it."""
    lines = []
    fleet = "vehicle" in columns and len(np.unique(columns["vehicle"])) > 1
    one, many = ("vehicle", "vehicles") if fleet else ("world", "worlds")
    for name in KEY_FIGURES:
        values = np.asarray(columns[name], dtype=np.float64)
        values = values[np.isfinite(values)]
        if not len(values):
            lines.append(f"  {name:<20} (no {one} has it)")
            continue
        low, median, p95, high = np.min(values), np.median(values), np.percentile(values, 95), np.max(values)
        lines.append(f"  {name:<20} min {low:9.4g}  median {median:9.4g}  p95 {p95:9.4g}  max {high:9.4g}"
                     f"  ({len(values)} {one if len(values) == 1 else many})")
    return lines
