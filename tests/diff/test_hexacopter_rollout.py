"""The differentiable rollout of the hexacopter: the PID's allocation over six rotors on the tape.

One second (250 ticks) of the altitude loss (hover, then a 1 m climb). The tape's gradients agree with
central differences (±1 % of the mass, ±1 % of rotor 1's kT): measured 0.01456 against 0.01445 for the mass,
−770.5 against −768.1 for rotor1.kt (2-core x86-64 VM, 2026-12-03).
"""

import pytest

from nexus.diff import Rollout


@pytest.fixture(scope="module")
def rollout():
    return Rollout(250, loss="altitude", vehicle="hexa_f550")


@pytest.mark.parametrize("name, step", [("mass", 0.02), ("rotor1.kt", 6.3e-6 * 0.02)])
def test_the_tape_gradient_matches_central_differences(rollout, name, step):
    _, gradients = rollout.value_and_gradients([name])
    value = rollout.get(name)
    rollout.set(name, value + step)
    above = rollout.forward()
    rollout.set(name, value - step)
    below = rollout.forward()
    rollout.set(name, value)
    assert gradients[name] == pytest.approx((above - below) / (2 * step), rel=0.03)


def test_every_rotor_of_the_symmetric_frame_pulls_alike(rollout):
    # The six rotors hold the hover alike, so each one's kT moves the loss alike (within 1 %).
    names = [f"rotor{i}.kt" for i in range(1, 7)]
    _, gradients = rollout.value_and_gradients(names)
    values = [gradients[n] for n in names]
    assert max(values) < 0.0 and min(values) == pytest.approx(max(values), rel=0.01)


def test_the_trajectory_holds_all_six_rotors_commands(rollout):
    # Not the first four: the trajectory has a column per rotor, each driven (the hover is at about 0.54).
    rollout.forward(record=True)
    controls = rollout.trajectory().controls
    assert controls.shape[1:] == (1, 6)
    assert (controls[-1] > 0.3).all()
