"""Fly the opted-in Crazyflie to a hover under a downwash source of the scene, and sample the hover."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nexus.core import Loop
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start

DATA = Path(__file__).resolve().parent / "data"
VEHICLE = DATA / "crazyflie_inflow.usda"
EMPTY = Path(__file__).resolve().parents[2] / "scenes" / "empty.usda"
TICK_HZ = 250

#: The empty scene with one source: the whole Crazyflie (4 discs of radius 0.023 m on a 0.03973 m arm, x-config,
#: its weight 0.027 kg × 9.80665 m/s² = 0.2647796 N) hovering at (x, y, z).
SOURCE_SCENE = """#usda 1.0
(
    defaultPrim = "scene"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{empty}@]
    upAxis = "Z"
)

over "scene"
{{
    def Xform "upper" (prepend apiSchemas = ["NexusDownwashSourceAPI"])
    {{
        double3 xformOp:translate = ({x}, {y}, {z})
        uniform token[] xformOpOrder = ["xformOp:translate"]
        float nexus:downwash:thrust = {thrust}
        float nexus:downwash:rotorRadius = 0.023
        int nexus:downwash:rotors = 4
        float nexus:downwash:armLength = 0.03973
    }}
}}
"""


def source_scene(folder: Path, x: float = 0.0, y: float = 0.0, z: float = 1.34, thrust: float = 0.2647796) -> Path:
    path = folder / f"source_{x:g}_{y:g}_{z:g}_{thrust:g}.usda"
    path.write_text(SOURCE_SCENE.format(empty=EMPTY, x=x, y=y, z=z, thrust=thrust))
    return path


@dataclass
class Hover:
    speeds: np.ndarray  # (ticks, rotors) [rad/s], magnitudes
    heights: np.ndarray  # (ticks, rotors) rotor body origins above z = 0 [m]
    base: np.ndarray  # (ticks, 3) base position [m]
    stages: list[str]

    @property
    def mean_square_speed(self) -> np.ndarray:
        """Mean ω² of each rotor over the samples [(rad/s)²]."""
        return np.mean(self.speeds.astype(np.float64) ** 2, axis=0)


def hover(scene: Path | str, altitude: float = 1.0, settle_s: float = 6.0, sample_s: float = 2.0,
          vehicle: Path | str = VEHICLE) -> Hover:
    """Take off to ``altitude`` [m above the start] on the truth estimator and PID, wait, sample every tick."""
    built = assemble(str(vehicle), str(scene), estimator="truth")
    profile = MissionProfile(altitude=altitude, climb_speed=1.0, hold_time=1000.0)
    components = [MissionGuidance(c.name, profile) if isinstance(c, MissionGuidance) else c for c in built.components]
    loop = Loop(components, device="cpu", mode="captured")
    loop.build()
    plant = built.plant
    start(loop, plant)
    loop.run(int((altitude + settle_s) * TICK_HZ))
    dofs = [r.dof for r in plant.rotors]
    bodies = [r.body for r in plant.rotors]
    rows = []
    for _ in range(int(sample_s * TICK_HZ)):
        loop.tick()
        qd, q = plant.state.joint_qd.numpy(), plant.state.body_q.numpy()
        rows.append((np.abs(qd[dofs]), q[bodies, 2], q[plant.base, :3]))
    speeds, heights, bases = (np.array(c) for c in zip(*rows))
    names = [s.name for c in components for s in c.stages()]
    return Hover(speeds, heights, bases, names)
