"""The rollout's forward trajectory equals the eager Featherstone ring's, bit for bit, on the CPU.

The eager ring is the vehicle as ``nexus run --solver featherstone --eager`` builds it (physics
with Newton's collision pipeline, fused ESCs and propellers, IMU, magnetometer, barometer, GPS,
truth estimator, PID), flown from the rollout's start with a guidance that plays the rollout's
setpoint table. Every tick its buffers (base body state, estimate, controls, ESC speeds, PID
state, IMU sample) must hold the same bytes as the rollout's arrays of that tick, though one
steps one state in place and the other writes a new state per tick on a tape.
"""

import numpy as np
import pytest
import warp as wp

from nexus.runtime.assembly import assemble
from nexus.control.pid import PidController
from nexus.core import Component, Loop, Read, Stage, Write
from nexus.guidance.setpoint import Setpoint


@wp.kernel
def play_table(tick: wp.array(dtype=wp.int64), table: wp.array2d(dtype=Setpoint), setpoint: wp.array(dtype=Setpoint),
               armed: wp.array(dtype=wp.int32)):
    world = wp.tid()
    setpoint[world] = table[int(tick[world]) - 1, world]
    armed[world] = 1


class TableGuidance(Component):
    """Writes row ``tick - 1`` of a setpoint table each tick (the rollout's goals)."""

    is_guidance = True

    def __init__(self, name, table):
        super().__init__(name)
        self.table = table

    def stages(self):
        return [Stage("table", "guide", self._run, reads=(Read("tick", wp.int64, (1,)),),
                      writes=(Write("setpoint", Setpoint, (1,)), Write("armed", wp.int32, (1,))))]

    def _run(self, io):
        wp.launch(play_table, io["tick"].shape[0], inputs=[io["tick"], self.table],
                  outputs=[io["setpoint"], io["armed"]], device=io.device)


@pytest.fixture(scope="module")
def flown(climb):
    """Both flights, noise on: the eager ring's buffers and the rollout's arrays, tick by tick."""
    climb.noise = True
    climb.forward()
    # The rollout builds the truth estimator (an EKF's gating and resets have no useful gradient), so the eager
    # ring it is compared with does too.
    vehicle = assemble("astro_max_base", "empty", solver="featherstone", estimator="truth")
    guidance = next(c for c in vehicle.components if getattr(c, "is_guidance", False))
    components = [TableGuidance(guidance.name, climb.setpoint_table) if c is guidance else c
                  for c in vehicle.components]
    loop = Loop(components, device="cpu", mode="eager")
    loop.build()
    plant = vehicle.plant
    plant.reset(base_position=climb.start, rotor_speed=climb.hover_speed)
    plant.ned_origin.assign(climb.start.astype(np.float32))
    loop.output("controls").assign(climb.controls[0].numpy())
    pid = next(c for c in components if isinstance(c, PidController))
    buffers = {"body": loop.output("body/base"), "estimate": loop.output("estimate"),
               "controls": loop.output("controls"), "speed": plant.esc_speed, "pid": loop.states.of(pid)["pid"],
               "imu": loop.output("imu")}
    mine = {"body": climb.bodies, "estimate": climb.estimates, "controls": climb.controls[1:],
            "speed": climb.speeds[1:], "pid": climb.pid_states[1:], "imu": climb.imu_samples}
    rows = {name: [] for name in buffers}
    for _ in range(climb.ticks):
        loop.tick()
        for name, buffer in buffers.items():
            rows[name].append(buffer.numpy().tobytes())
    expected = {name: [array.numpy().tobytes() for array in arrays] for name, arrays in mine.items()}
    climb.noise = False
    return rows, expected


@pytest.mark.parametrize("signal", ["body", "estimate", "controls", "speed", "pid", "imu"])
def test_every_tick_of_the_rollout_equals_the_eager_featherstone_ring_bit_for_bit(flown, signal):
    eager, rollout = flown
    first_difference = next((k for k, (a, b) in enumerate(zip(eager[signal], rollout[signal])) if a != b), None)
    assert first_difference is None, f"{signal} differs first at tick {first_difference}"
    assert len(eager[signal]) == len(rollout[signal]) == 500
