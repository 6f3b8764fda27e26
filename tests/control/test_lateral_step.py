"""The PID flies sideways too: a 3.6 m diagonal step settles without exceeding its tilt limit."""

import numpy as np
import pytest
import warp as wp

from nexus.runtime.assembly import assemble
from nexus.core import Component, Loop, Stage, Write
from nexus.guidance.setpoint import Setpoint
from nexus.plant.frames import quat_to_matrix_np
from nexus.runtime.startup import start

GOAL = (3.0, 2.0, -3.0)  # NED [m]: 3 north, 2 east, 3 up; |(3, 2)| = 3.6 m sideways


class StepGoal(Component):
    """A guidance that asks for one fixed position, once, facing east."""

    def __init__(self):
        super().__init__("/test/step_goal")
        self.sent = False

    def stages(self):
        return [Stage("step_goal", "guide", self._run, host=True, writes=(Write("setpoint", Setpoint, (1,)),))]

    def _run(self, io):
        if not self.sent:
            goal = Setpoint()
            goal.position = wp.vec3(*GOAL)
            goal.yaw = float(np.pi / 2)
            io["setpoint"].write(goal)
            self.sent = True


@pytest.fixture(scope="module")
def trace():
    vehicle = assemble("astro_max_base", "empty", estimator="truth")  # the controller's step: the true state
    ring = [c for c in vehicle.components if not getattr(c, "is_guidance", False)]
    loop = Loop([*ring, StepGoal()], device="cpu").build()
    start(loop, vehicle.plant)
    estimate = loop.output("estimate")
    rows = []
    for _ in range(10 * 250):
        loop.tick()
        e = estimate.numpy()[0]
        rows.append((*e["position"], np.degrees(np.arccos(np.clip(quat_to_matrix_np(e["attitude"])[2, 2], -1, 1)))))
    return np.array(rows), vehicle.controller  # the controller, for a test that wants its gains


def test_reaches_the_goal_within_ten_seconds(trace):
    rows, _ = trace
    np.testing.assert_allclose(rows[-1, :3], GOAL, atol=0.1)


def test_overshoots_by_less_than_a_quarter_of_the_step(trace):
    rows, _ = trace
    along = rows[:, :2] @ (np.array(GOAL[:2]) / np.linalg.norm(GOAL[:2]))
    assert along.max() - np.linalg.norm(GOAL[:2]) < 0.25 * np.linalg.norm(GOAL[:2])


def test_never_tilts_beyond_the_limit(trace):
    rows, _ = trace
    # The tilt goal is capped at maxTilt (45°); the attitude loop may overshoot it a little.
    assert rows[:, 3].max() < 45.0 + 5.0
