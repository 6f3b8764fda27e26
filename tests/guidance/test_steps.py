"""The step mission on a vehicle that follows its goal exactly (no simulator): when each step ends, and why."""

import math
from types import SimpleNamespace

import pytest

from nexus.guidance.steps import StepMission

TICK_S = 0.01


class Port:
    def __init__(self, value=None):
        self.value = value
        self.writes = []

    def read(self):
        return self.value

    def write(self, value):
        self.value = value
        self.writes.append((NOW[0], value))


NOW = [0.0]


class FakeIo(dict):
    finished = False

    def finish(self):
        self.finished = True


def fly(steps, seconds: float):
    """Call the stage every tick; the estimate is the goal it wrote on the tick before (the ground: down <= 0)."""
    mission = StepMission(steps)
    estimate = SimpleNamespace(position=[0.0, 0.0, 0.0], velocity=[0.0, 0.0, 0.0], attitude=[0.0, 0.0, 0.0, 1.0])
    io = FakeIo(time=Port(), estimate=Port(estimate), setpoint=Port(), armed=Port(), mission_step=Port(0),
                mission_timeouts=Port(0), mission_phase=Port(-1),
                # What the engine binds when no estimator writes them: trusted (aligned, origin set, valid), no reset.
                estimate_status=Port(1 | 2 | 256 | 64 | 128), estimate_reset=Port((0.0, 0.0, 0.0)))
    for k in range(int(round(seconds / TICK_S)) + 1):
        NOW[0] = k * TICK_S
        io["time"].value = NOW[0]
        mission.run(io)
        if io.finished:
            break
        goal = io["setpoint"].value
        yaw = goal.yaw  # heading_of(x, y, z, w) of a yaw-only quaternion about down
        estimate.position = [goal.position[0], goal.position[1], min(goal.position[2], 0.0)]
        estimate.attitude = [0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)]
    return io


STEPS = [
    {"do": "takeoff", "to": [0.0, 0.0, 1.0], "keep_xy": True, "speed": 1.0, "tolerance": 0.1},  # 1 m at 1 m/s: 1 s
    {"do": "turn", "heading": 90.0, "rate": 90.0, "tolerance": 5.0},  # 90 deg at 90 deg/s: 1 s
    {"do": "goto", "to": [1.0, 0.0, 1.0], "speed": 1.0, "tolerance": 0.1, "time_limit": 0.5},  # 1 s leg, 0.5 s limit
    {"do": "wait", "until_time": 3.0},
    {"do": "land", "speed": 1.0},
]


def test_each_step_ends_on_its_condition_or_its_time_limit_and_the_landing_ends_the_run():
    io = fly(STEPS, 8.0)
    changes = [(pytest.approx(t), step) for t, step in io["mission_step"].writes]
    # takeoff ends at 1.0 s, the turn at 2.0 s, the goto by its 0.5 s limit at 2.5 s, the wait at 3.0 s.
    assert changes[:5] == [(0.0, 0), (1.0, 1), (2.0, 2), (2.5, 3), (3.0, 4)]
    assert [value for _, value in io["mission_timeouts"].writes] == [1]  # the goto, at 2.5 s
    assert io["mission_timeouts"].writes[0][0] == pytest.approx(2.5)
    # The landing goal sinks 1.3 m (to 0.3 m below the start) in 1.3 s; the vehicle is on the ground (within
    # 0.1 m) before 3.0 + 1.3 s and must rest there 0.5 s: the run ends between 3.5 s and 4.8 s (+ a tick).
    landed_at, last = io["mission_step"].writes[-1]
    assert last == 5 and io.finished
    assert 3.5 <= landed_at <= 4.81
    assert io["armed"].writes[0][1] == 1 and io["armed"].writes[-1] == (landed_at, 0)


def test_a_turn_turns_the_setpoint_heading_from_the_start_heading():
    io = fly(STEPS[:2], 2.5)
    assert io["setpoint"].value.yaw == pytest.approx(math.pi / 2)


def test_a_wait_for_slow_speed_ends_at_once_when_still():
    io = fly([{"do": "wait", "until_speed_below": 0.5}, {"do": "hold", "time": 10.0}], 1.0)
    assert [(pytest.approx(t), s) for t, s in io["mission_step"].writes] == [(0.0, 0), (0.0, 1)]
