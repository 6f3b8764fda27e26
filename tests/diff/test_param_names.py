"""The rollout and ``nexus params`` agree: every name the table gives to the gradient is a rollout parameter, and
each alias reads the value of the vehicle attribute the table says it sets (values from astro_max_base.usda)."""

import pytest

from nexus.runtime.params import parameters

# alias -> (the attribute the table says it sets, its value in vehicles/astro_max_base.usda)
ATTRIBUTES = {
    "pid.kp_z": ("/vehicle/controller nexus:positionP[2]", 1.0),
    "pid.kd_z": ("/vehicle/controller nexus:velocityP[2]", 4.0),
    "pid.ki_z": ("/vehicle/controller nexus:velocityI[2]", 1.0),
    "pid.kp_yaw": ("/vehicle/controller nexus:attitudeP[2]", 5.0),
    "pid.kd_yaw": ("/vehicle/controller nexus:rateP[2]", 3.0),
    "pid.position_p.x": ("/vehicle/controller nexus:positionP[0]", 0.95),
    "pid.rate_d.roll": ("/vehicle/controller nexus:rateD[0]", 0.003),
    "mass": ("/vehicle/body/base physics:mass", 5.031),
    "inertia.xx": ("/vehicle/body/base physics:diagonalInertia[0]", 0.178),
    "inertia.zz": ("/vehicle/body/base physics:diagonalInertia[2]", 0.291),
    "rotor1.kt": ("/vehicle/propeller_1 nexus:thrustCoefficient", 0.000226),
}


@pytest.mark.parametrize("alias", list(ATTRIBUTES))
def test_an_alias_reads_the_attribute_the_table_says_it_sets(climb, alias):
    name, value = ATTRIBUTES[alias]
    assert parameters("astro_max_base").resolve(alias, "gradient").name == name
    assert climb.get(alias) == pytest.approx(value, rel=1e-6)  # float32 on the device


def test_the_shared_esc_lags_read_every_esc_s_time_constant(climb):
    table = parameters("astro_max_base")
    assert table.resolve("esc.tau_up").targets == tuple(f"/vehicle/esc_{i} nexus:motor:timeConstantUp"
                                                         for i in (1, 2, 3, 4))
    assert climb.get("esc.tau_up") == pytest.approx(0.05, rel=1e-6)
    assert climb.get("esc.tau_down") == pytest.approx(0.07, rel=1e-6)


def test_every_gradient_name_of_the_table_is_a_rollout_parameter(climb):
    names = parameters("astro_max_base").names("gradient")
    # 24 PID components x 3 names (the attribute's, pid.<gain>.<x|y|z>, pid.<gain>.<roll|pitch|yaw>) and the 5
    # short PID names, mass 2 names, inertia 3 x 2, rotors 4 x 2, the ESC lags 2, the start state 6, and the drag
    # prim's rotor drag coefficient (2 names) and body drag coefficient's 3 components (2 names each).
    assert len(names) == 24 * 3 + 5 + 2 + 3 * 2 + 4 * 2 + 2 + 6 + 2 + 3 * 2
    for name in names:
        climb.slot(name)  # raises for a name the rollout does not hold
