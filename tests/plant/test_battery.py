"""The battery's equivalent circuit, tick by tick, against numbers worked out by hand.

The pack's stage runs on a stand-in plant of one rotor whose speed the test
sets: ``kQ = 5e-5 N·m/(rad/s)²`` at 200 rad/s is a shaft power of
``5e-5 · 200³ = 400 W``; efficiency 1 makes that the electrical load. Ten
cells on a curve from 3.9 V (empty) to 4.1 V (full), full, and a capacity of
1e5 Ah (the charge barely moves) give ``E = 41 V``. R0 = 0.05 ohm, R1 = 0.03
ohm, C1 = 1000 F (tau = 30 s), ticks of 0.01 s.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.core.stage_io import StageIO
from nexus.plant.battery import BATTERY_SPEC, Battery, BatterySample

DT = 0.01
PARAMS = {"cells": 10, "capacity": 1.0e5, "resistance": 0.05, "rc_resistance": 0.03, "rc_capacitance": 1000.0,
          "open_circuit_voltage": [(0.0, 3.9), (1.0, 4.1)], "efficiency": 1.0, "initial_charge": 1.0}


class Pack:
    """One battery stage on a one-rotor stand-in plant (ESC: 1000 rad/s at 50 V), stepped by hand."""

    def __init__(self, **changes):
        rotor = SimpleNamespace(index=0, dof=0, spin=1, torque_coefficient=5.0e-5,
                                esc={"max_speed": 1000.0, "voltage": 50.0})
        zeros = lambda dtype=wp.float32: wp.zeros(1, dtype=dtype, device="cpu")  # noqa: E731
        self.plant = SimpleNamespace(rotors=[rotor], worlds=1, dofs_per_world=1, state=SimpleNamespace(joint_qd=zeros()),
                                     control=SimpleNamespace(joint_target_qd=zeros(), joint_act=zeros()),
                                     esc_speed_out=zeros())
        self.battery = Battery("/vehicle/battery", self.plant, **(PARAMS | changes))
        self.battery.prepare(SimpleNamespace(dt=DT, device="cpu"))
        self.pack = wp.array(np.array([[self.battery.initial_charge, 0.0]]), dtype=wp.float64, device="cpu")
        self.sample = wp.zeros(1, dtype=BatterySample, device="cpu")
        self.done = zeros(wp.int32)
        self.running = wp.ones(1, dtype=wp.int32, device="cpu")
        buffers = {"battery": self.sample, "running": self.running}
        self.io = StageIO("battery", buffers, "cpu", self.done, None, state_in={"pack": self.pack})

    def tick(self, speed: float, ticks: int = 1):
        self.plant.state.joint_qd.assign(np.array([speed], dtype=np.float32))
        for _ in range(ticks):
            self.battery.run(self.io)
        s = self.sample.numpy()[0]
        return float(s["voltage"]), float(s["current"]), float(s["state_of_charge"])


def test_an_idle_pack_reads_its_open_circuit_voltage():
    voltage, current, charge = Pack().tick(0.0)
    assert current == 0.0 and charge == 1.0
    assert voltage == pytest.approx(41.0, abs=1e-5)  # 10 cells at 4.1 V


def test_a_load_step_sags_by_the_ir_drop_then_the_rc_pair():
    pack = Pack()
    pack.tick(0.0, 10)
    # The step: 400 W from E = 41 V behind R0 = 0.05 ohm (V1 still 0).
    # 0.05 I² - 41 I + 400 = 0: I = (41 - √(41² - 4·0.05·400)) / 0.1 = (41 - √1601) / 0.1 = 9.87502 A,
    # V = 41 - 0.05 · 9.87502 = 40.50625 V (and V·I = 400 W).
    voltage, current, _ = pack.tick(200.0)
    assert current == pytest.approx(9.87502, abs=2e-4)
    assert voltage == pytest.approx(40.50625, abs=2e-4)
    assert voltage * current == pytest.approx(400.0, rel=1e-5)
    # Steady state after 20 tau (600 s): V1 = R1·I, so 0.08 I² - 41 I + 400 = 0:
    # I = (41 - √(41² - 4·0.08·400)) / 0.16 = (41 - √1553) / 0.16 = 9.94924 A, V = 41 - 0.08 · 9.94924 = 40.20406 V.
    # (The charge drawn, 9.95 A · 600 s = 1.66 Ah of 1e5, lowers E by 10 · 0.2 V · 1.66e-5 = 3e-5 V.)
    at_tau = pack.tick(200.0, 2999)[0]  # 30 s after the step
    settled, settled_current, _ = pack.tick(200.0, 57000)
    assert settled_current == pytest.approx(9.94924, abs=2e-4)
    assert settled == pytest.approx(40.20406, abs=3e-4)
    # At one time constant the RC pair has made 1 - 1/e = 63.2 % of its sag (the current creeps up 0.7 % on the
    # way, so within 1 %).
    share = (40.50625 - at_tau) / (40.50625 - 40.20406)
    assert share == pytest.approx(1.0 - math.exp(-1.0), abs=0.01)


def test_the_charge_falls_by_the_current_over_the_capacity():
    # Capacity 0.01 Ah = 36 C: the charge falls by the sum of I·dt over 36 C.
    pack = Pack(capacity=0.01)
    drawn = 0.0
    for _ in range(100):
        _, current, charge = pack.tick(200.0)
        drawn += current * DT
    assert charge == pytest.approx(1.0 - drawn / 36.0, abs=1e-5)
    assert 1.0 - charge == pytest.approx(100 * DT * 9.9 / 36.0, rel=0.01)  # about 9.9 A for 1 s: 0.0275


def test_an_empty_pack_sets_the_done_flag_to_battery_empty():
    # 400 W from a 0.001 Ah (3.6 C) pack at about 40 V: about 10 A, so empty after about 0.36 s (36 ticks).
    pack = Pack(capacity=0.001)
    for tick in range(1, 100):
        _, _, charge = pack.tick(200.0)
        if pack.done.numpy()[0] != 0:
            break
    assert pack.done.numpy()[0] == 3 and charge == 0.0
    assert 34 <= tick <= 38
    # Stopped (its world no longer running), the pack keeps its state.
    pack.running.assign(np.zeros(1, dtype=np.int32))
    before = pack.pack.numpy().copy()
    pack.tick(200.0, 5)
    assert np.array_equal(pack.pack.numpy(), before)


def test_the_voltage_caps_the_rotor_speed():
    # The ESC makes 1000 rad/s at 50 V: at 40.50625 V the motor turns at most 1000 · 40.50625 / 50 = 810.125 rad/s.
    pack = Pack()
    pack.plant.esc_speed_out.assign(np.array([950.0], dtype=np.float32))
    voltage, _, _ = pack.tick(200.0)
    assert voltage == pytest.approx(40.50625, abs=2e-4)
    assert pack.plant.esc_speed_out.numpy()[0] == pytest.approx(810.125, abs=5e-3)
    assert pack.plant.control.joint_target_qd.numpy()[0] == pytest.approx(810.125, abs=5e-3)
    # Feed-forward drag torque at the cap: 5e-5 · 810.125² = 32.815 N·m.
    assert pack.plant.control.joint_act.numpy()[0] == pytest.approx(32.815, abs=2e-3)
    # Below the cap the ESC's target stands.
    pack.plant.esc_speed_out.assign(np.array([300.0], dtype=np.float32))
    pack.tick(200.0)
    assert pack.plant.esc_speed_out.numpy()[0] == 300.0


def test_the_open_circuit_voltage_is_linear_between_points():
    # Curve (0, 3.3), (0.5, 3.8), (1, 4.2), one cell: at charge 0.75, 3.8 + 0.5 · 0.4 = 4.0 V.
    pack = Pack(cells=1, open_circuit_voltage=[(0.0, 3.3), (0.5, 3.8), (1.0, 4.2)], initial_charge=0.75)
    assert pack.tick(0.0)[0] == pytest.approx(4.0, abs=1e-6)
    pack = Pack(cells=1, open_circuit_voltage=[(0.0, 3.3), (0.5, 3.8), (1.0, 4.2)], initial_charge=0.25)
    assert pack.tick(0.0)[0] == pytest.approx(3.55, abs=1e-6)  # 3.3 + 0.5 · 0.5


def test_the_spec_declares_the_recorded_battery_signal():
    assert [o.signal for o in BATTERY_SPEC.outputs if o.recorded] == ["battery"]
