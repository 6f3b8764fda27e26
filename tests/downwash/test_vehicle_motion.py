"""A climbing rotor loses thrust: ``nexus:inflow:vehicleMotion`` counts the rotor's own axial velocity as inflow.

The Crazyflie climbs to 8 m on the truth estimator and PID (no source in the scene). Where its climb speed
peaks (its acceleration 0, no drag on this vehicle), the rotors carry exactly its weight, a quarter each:
kT ω² + ΔT(ω, w) = 0.0661949 N with w the climb speed. By bisection on the closed form (rotor_inflow's module
docstring; C_T0 0.0267415, s 0.573, θ₇₅ 0.4534631 rad):
  w = 1.80 m/s: ω² = 2582068.0; 1.85 m/s: 2591184.0; 1.90 m/s: 2600370.5 (ω0² = 2298487.1 in still air),
about 12.7 % more than without the climb's inflow. Without the attribute the same peak needs ω0².
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.core import Loop
from nexus.guidance import MissionGuidance, MissionProfile
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start
from tests.downwash.flying import EMPTY, VEHICLE

MOTION_LAYER = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{base}@]
    upAxis = "Z"
)

over "vehicle"
{{
{overs}
}}
"""


def peak_climb(vehicle) -> tuple[float, float, list[str]]:
    """Climb to 8 m; at the tick of the highest climb speed: that speed [m/s], the rotors' mean ω², the stages."""
    built = assemble(str(vehicle), str(EMPTY), estimator="truth")
    profile = MissionProfile(altitude=8.0, climb_speed=1.0, hold_time=1000.0)
    components = [MissionGuidance(c.name, profile) if isinstance(c, MissionGuidance) else c for c in built.components]
    loop = Loop(components, device="cpu", mode="captured")
    loop.build()
    plant = built.plant
    start(loop, plant)
    dofs = [r.dof for r in plant.rotors]
    best = (-1.0, 0.0)
    for _ in range(6 * 250):
        loop.tick()
        climb = float(plant.state.body_qd.numpy()[plant.base, 2])
        if climb > best[0]:
            best = (climb, float(np.mean(plant.state.joint_qd.numpy()[dofs].astype(np.float64) ** 2)))
    return best[0], best[1], [s.name for c in components for s in c.stages()]


def test_a_climbing_rotor_needs_the_hand_worked_speed(tmp_path):
    layer = tmp_path / "climbing.usda"
    overs = "\n".join(f'    over "propeller_{k}"\n    {{\n        bool nexus:inflow:vehicleMotion = 1\n    }}'
                      for k in range(1, 5))
    layer.write_text(MOTION_LAYER.format(base=VEHICLE, overs=overs))
    climb, speed_squared, stages = peak_climb(layer)
    assert "downwash" in stages  # the stage runs without a source: the rotors count their own climb
    assert 1.80 <= climb <= 1.90  # flown: 1.858 m/s
    expected = np.interp(climb, [1.80, 1.85, 1.90], [2582068.0, 2591184.0, 2600370.5])
    assert speed_squared == pytest.approx(expected, rel=1e-3)  # flown 2592360 against 2592654


def test_without_the_attribute_the_climb_needs_the_still_air_speed():
    climb, speed_squared, stages = peak_climb(VEHICLE)
    assert "downwash" not in stages
    assert speed_squared == pytest.approx(2298487.1, rel=1e-3)  # flown 2298079 at 1.876 m/s
