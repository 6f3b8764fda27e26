"""Assemble the Astro Max with the truth estimator, the PID controller and a mission, fly it, keep every tick."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nexus.runtime.assembly import assemble
from nexus.core import Loop
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.plant.frames import yaw_ned_np
from nexus.runtime.startup import start


@dataclass
class Flight:
    time: np.ndarray  # [s]
    phase: np.ndarray
    position: np.ndarray  # estimate [m, NED]
    attitude: np.ndarray  # estimate, FRD→NED (x, y, z, w)
    goal: np.ndarray  # setpoint [m, NED]
    yaw_goal: np.ndarray  # [rad]
    controls: np.ndarray  # first four
    guidance: MissionGuidance
    reason: str
    profile: MissionProfile

    def during(self, *phases) -> np.ndarray:
        return np.isin(self.phase, phases)

    @property
    def yaw(self) -> np.ndarray:
        return np.array([yaw_ned_np(q) for q in self.attitude])

    @property
    def yaw_error_deg(self) -> np.ndarray:
        return np.degrees((self.yaw - self.yaw_goal + np.pi) % (2 * np.pi) - np.pi)


def build_ring(profile: MissionProfile | None = None, mode: str = "captured"):
    """The default ring as assembly wires it (estimator, mission, PID), with ``profile`` flown if given."""
    vehicle = assemble("astro_max_base", "empty", estimator="truth")  # the guidance's precision: the true state
    guidance = next(c for c in vehicle.components if isinstance(c, MissionGuidance))
    components = list(vehicle.components)
    if profile is not None:
        replacement = MissionGuidance(guidance.name, profile)
        components = [replacement if c is guidance else c for c in components]
        guidance = replacement
    loop = Loop(components, device="cpu", mode=mode)
    return vehicle, loop, guidance, vehicle.controller


def fly(profile: MissionProfile, max_seconds: float = 12.0) -> Flight:
    vehicle, loop, guidance, _ = build_ring(profile)
    loop.build()
    start(loop, vehicle.plant)
    estimate, setpoint, controls = loop.output("estimate"), loop.output("setpoint"), loop.output("controls")
    rows = []
    reason = "ticks"
    for _ in range(int(max_seconds * 250)):
        done = loop.tick()
        e, s = estimate.numpy()[0], setpoint.numpy()[0]
        rows.append((loop.sim_time, guidance.phase, e["position"].copy(), e["attitude"].copy(),
                     s["position"].copy(), float(s["yaw"]), controls.numpy()[0, :4].copy()))
        if done:
            reason = "done"
            break
    columns = list(zip(*rows))
    return Flight(
        time=np.array(columns[0]), phase=np.array(columns[1]), position=np.array(columns[2]),
        attitude=np.array(columns[3]), goal=np.array(columns[4]), yaw_goal=np.array(columns[5]),
        controls=np.array(columns[6]), guidance=guidance, reason=reason, profile=profile,
    )
