"""Fly a vehicle file up to a hover with the PID controller and a mission that holds, and sample the hover."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.core import Loop
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start

DATA = Path(__file__).resolve().parents[1] / "data"
#: The control tick of these flights [Hz] (the default).
TICK_HZ = 250


@dataclass
class Hover:
    """Per-tick samples of the hover window: time [s], rotor speeds [rad/s], rotor heights [m], controls, battery."""

    time: np.ndarray
    speeds: np.ndarray  # (ticks, rotors), magnitudes
    heights: np.ndarray  # (ticks, rotors), rotor body origin above z = 0
    controls: np.ndarray  # (ticks, rotors)
    battery: np.ndarray | None  # (ticks,) structured: voltage, current, state_of_charge
    done: int  # the world's done flag at the end

    @property
    def mean_square_speed(self) -> float:
        """Mean of ω² over rotors and ticks [(rad/s)²]: proportional to the thrust they make."""
        return float(np.mean(self.speeds.astype(np.float64) ** 2))


def hover(vehicle: Path | str, altitude: float, settle_s: float, sample_s: float, solver: str = "mujoco") -> Hover:
    """Take off to ``altitude`` [m above the start], wait ``settle_s``, then sample every tick for ``sample_s``.

    The mission holds (hold time 1000 s); sampling stops early when a stage ends the world (an empty pack).
    """
    vehicle = assemble(str(vehicle), "empty", solver=solver, estimator="truth")  # the rotors' physics: the true state
    profile = MissionProfile(altitude=altitude, climb_speed=1.0, hold_time=1000.0)
    components = [MissionGuidance(c.name, profile) if isinstance(c, MissionGuidance) else c for c in vehicle.components]
    loop = Loop(components, device="cpu", mode="captured")
    loop.build()
    plant = vehicle.plant
    start(loop, plant)
    climb = altitude / profile.climb_speed
    loop.run(int((climb + settle_s) * TICK_HZ))
    dofs = [r.dof for r in plant.rotors]
    bodies = [r.body for r in plant.rotors]
    battery = loop.output("battery") if any(getattr(c.spec, "schema", None) == "NexusBatteryAPI"
                                           for c in components) else None
    controls = loop.output("controls")
    rows = []
    for _ in range(int(sample_s * TICK_HZ)):
        ended = loop.tick()
        qd, q = plant.state.joint_qd.numpy(), plant.state.body_q.numpy()
        rows.append((loop.sim_time, np.abs(qd[dofs]), q[bodies, 2], controls.numpy()[0, :len(dofs)].copy(),
                     battery.numpy()[0].copy() if battery is not None else None))
        if ended:
            break
    columns = list(zip(*rows))
    return Hover(np.array(columns[0]), np.array(columns[1]), np.array(columns[2]), np.array(columns[3]),
                 np.array(columns[4]) if battery is not None else None, int(loop.world_done()[0]))
