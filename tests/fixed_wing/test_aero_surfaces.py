"""Control surfaces are actuators: a command moves the deflection at no more than the rate limit, within the travel.

The Aerosonde's elevator (vehicles/aerosonde.usda): travel 0.5236 rad (30°), rate limit 6.98 rad/s (400°/s), on
controls channel 1, ticked at 250 Hz: at most 6.98 · 0.004 = 0.02792 rad a tick. The controller's stage runs
last in a tick, so a command held from tick k moves the surface from tick k + 1 on (as it does the ESCs).
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.aero.control_surfaces import CONTROL_SURFACE_SPEC, ControlSurface
from nexus.control.hold import HoldControls
from nexus.core import Loop
from nexus.plant.loading import open_stage
from nexus.schemas.reader import read_prim
from tests.fixed_wing.wing_stage import AEROSONDE

STEP = 0.02792  # [rad per tick]
TRAVEL = 0.5236  # [rad]


@pytest.fixture(scope="module")
def elevator_ring():
    stage = open_stage(AEROSONDE)
    prim = stage.GetPrimAtPath("/vehicle/body/base/Elevator")
    elevator = ControlSurface(str(prim.GetPath()), **read_prim(prim, CONTROL_SURFACE_SPEC, AEROSONDE))
    hold = HoldControls()
    loop = Loop([hold, elevator], device="cpu", mode="captured", seed=0).build()
    yield loop, hold
    loop.close()


def deflections(loop, hold, command: float, ticks: int) -> list[float]:
    row = np.zeros(16)
    row[1] = command
    hold.set(row)
    out = []
    for _ in range(ticks):
        loop.tick()
        out.append(float(loop.output("surface/elevator").numpy()[0]))
    return out


def test_full_command_moves_at_the_rate_limit_then_stops_at_the_travel(elevator_ring):
    loop, hold = elevator_ring
    seen = deflections(loop, hold, 3.0, 23)  # 3 is beyond the servo's range: clamped to 1
    # Tick k (from 0): min(k · 0.02792, 0.5236); tick 19 reaches the travel (18 · 0.02792 = 0.50256).
    assert seen[0] == 0.0
    np.testing.assert_allclose(seen[1:19], [STEP * k for k in range(1, 19)], rtol=1e-5)
    assert seen[19:] == pytest.approx([TRAVEL] * 4, rel=1e-6)


def test_a_new_command_is_reached_at_the_rate_limit(elevator_ring):
    loop, hold = elevator_ring
    seen = deflections(loop, hold, -0.25, 27)  # from 0.5236 to -0.25 · 0.5236 = -0.1309 rad
    # 0.6545 rad at 0.02792 a tick: 23 full steps, the 24th lands on the target.
    assert seen[0] == pytest.approx(TRAVEL, rel=1e-6)
    np.testing.assert_allclose(seen[1:24], [TRAVEL - STEP * k for k in range(1, 24)], rtol=1e-5, atol=1e-6)
    assert seen[24:] == pytest.approx([-0.1309] * 3, rel=1e-5)
    assert max(abs(a - b) for a, b in zip([TRAVEL] + seen, seen)) <= STEP * (1 + 1e-5)
