"""Fly a tracking scene with a chosen controller and keep, every tick, the estimate and the reference's point."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.guidance.tracking import TrackingGuidance
from nexus.runtime.startup import start


@dataclass
class TrackingFlight:
    time: np.ndarray  # [s]
    position: np.ndarray  # estimate [m, NED]
    goal: np.ndarray  # reference point [m, NED]
    reason: str
    guidance: TrackingGuidance
    controller: object
    wall_s: float  # wall time of the ticks [s]

    def rms_error_after(self, since: float) -> float:
        """RMS of the 3D position error [m] from sim time ``since`` [s] on."""
        keep = self.time >= since
        return float(np.sqrt(np.mean(np.sum((self.position[keep] - self.goal[keep]) ** 2, axis=1))))


def fly_tracking(controller: str, scene: str = "figure_eight", max_seconds: float = 40.0, **options) -> TrackingFlight:
    # As a run builds it: the record reads the setpoint (the reference's current point).
    # On the true state: the controller's tracking, not the estimator's errors, is measured.
    flight = build_flight(RunConfig(scene=scene, controller=controller, controller_options=options,
                                    estimator="truth"), "cpu")
    vehicle, loop = flight.vehicle, flight.loop
    guidance = next(c for c in vehicle.components if isinstance(c, TrackingGuidance))
    start(loop, vehicle.plant)
    estimate = loop.output("estimate")
    rows, reason = [], "ticks"
    begin = time.perf_counter()
    for _ in range(int(max_seconds * 250)):
        done = loop.tick()
        rows.append((loop.sim_time, estimate.numpy()[0]["position"].copy()))
        if done:
            reason = "done"
            break
    wall = time.perf_counter() - begin
    times = np.array([r[0] for r in rows])
    goal = guidance.reference.sample(times)[0]
    return TrackingFlight(times, np.array([r[1] for r in rows]), goal, reason, guidance, vehicle.controller, wall)
