"""Tape gradients of the figure eight (1 s, 250 ticks) against central finite differences.

The figure eight moves the vehicle sideways, so its loss goes through the tilt, the body rates and the
rotors' moments: what the altitude loss barely touches. Newton's Featherstone step converts the applied
wrenches in place (``eval_rigid_tau`` writes the solve-frame wrench over ``body_f_ext``, the array it read
it from), and Warp's adjoint runs a kernel's forward code again, so it read the converted wrench and gave
the rotors' moments the wrong derivative with respect to the pose. The rollout puts the wrench back before
that adjoint (:meth:`nexus.plant.physics.TapedPlant._restorer`). Without it, at 250 ticks, rotor1.kt's
gradient was -305 against a slope of -66 and the lateral gains, the mass and the start velocity were 15 %
to 65 % off.

The loss is computed in float32 and its first ticks saturate the mixer (the eight starts at 0.79 m/s), so
one central difference scatters by about 1 to 4 % for some parameters (rotor1.kt at 0.5 %, 1 % and 2 %:
-63.5, -67.0, -65.8). The reference is therefore the least-squares slope through central differences at
0.5, 1, 1.5 and 2 % of the value (their mean weighted by the squared step), which scatters by well under 1 %.
"""

import pytest

#: Largest relative error of a tape gradient against the central differences.
TOLERANCE = 0.02
#: Steps, as fractions of the parameter's value.
STEPS = (0.005, 0.01, 0.015, 0.02)
#: The scale of the steps for a parameter whose value is 0 [m/s]: steps of 0.025 to 0.1 m/s.
ZERO_SCALE = {"init.vy": 5.0}

#: One parameter of each kind the figure eight's gradient had wrong: a rotor's thrust coefficient, the mass,
#: the lateral position and velocity gains, the start velocity.
PARAMS = ["rotor1.kt", "mass", "pid.position_p.x", "pid.velocity_p.y", "init.vy"]


def central_difference_slope(rollout, name: str) -> float:
    """The least-squares slope of the loss through central differences at each of :data:`STEPS`."""
    value = rollout.get(name)
    scale = abs(value) or ZERO_SCALE[name]
    num = den = 0.0
    for step in STEPS:
        h = step * scale
        rollout.set(name, value + h)
        plus = rollout.forward()
        rollout.set(name, value - h)
        minus = rollout.forward()
        num += h * (plus - minus)
        den += 2.0 * h * h
    rollout.set(name, value)
    return num / den


@pytest.fixture(scope="module")
def eight_gradients(eight):
    return eight.value_and_gradients(PARAMS)


@pytest.mark.parametrize("name", PARAMS)
def test_figure_eight_gradient_matches_central_differences_within_2_percent(eight, eight_gradients, name):
    _, grads = eight_gradients
    assert grads[name] == pytest.approx(central_difference_slope(eight, name), rel=TOLERANCE)
