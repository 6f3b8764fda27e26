"""vehicles/aerosonde.usda holds the book's Aerosonde, and a bad fixed-wing file fails before any stage runs.

Numbers: Beard and McLain's Aerosonde as mavsim publishes it (randybeard/mavsim_public,
mavsim_python/parameters/aerosonde_parameters.py; docs/fixed_wing.md cites each). Bad input: a one-line
BuildError naming the file, the prim and the attribute; a warning naming the prim for an unstable pitch slope
or a falling lift slope.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.runtime.assembly import assemble
from tests.fixed_wing.wing_stage import AEROSONDE, aerosonde_wing

VOID = "tests/data/void.usda"
#: The published derivatives, as literals (mavsim aerosonde_parameters.py).
PUBLISHED = {
    "C_L_0": 0.23, "C_D_0": 0.043, "C_m_0": 0.0135, "C_L_alpha": 5.61, "C_D_alpha": 0.03, "C_m_alpha": -2.74,
    "C_L_q": 7.95, "C_D_q": 0.0, "C_m_q": -38.21, "C_L_delta_e": 0.13, "C_D_delta_e": 0.0135, "C_m_delta_e": -0.99,
    "C_D_p": 0.0, "C_Y_0": 0.0, "C_ell_0": 0.0, "C_n_0": 0.0, "C_Y_beta": -0.98, "C_ell_beta": -0.13,
    "C_n_beta": 0.073, "C_Y_p": 0.0, "C_ell_p": -0.51, "C_n_p": 0.069, "C_Y_r": 0.0, "C_ell_r": 0.25, "C_n_r": -0.095,
    "C_Y_delta_a": 0.075, "C_ell_delta_a": 0.17, "C_n_delta_a": -0.011, "C_Y_delta_r": 0.19,
    "C_ell_delta_r": 0.0024, "C_n_delta_r": -0.069, "wing_area": 0.55, "wing_span": 2.8956, "chord": 0.18994,
    "air_density": 1.2682, "oswald": 0.9, "sharpness": 50.0, "stall_angle": 0.47,
}


def test_the_wing_holds_the_published_derivatives():
    wing = aerosonde_wing()
    for key, value in PUBLISHED.items():
        assert wing[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


@pytest.fixture(scope="module")
def plane():
    return assemble("aerosonde", VOID, controller="hold")


def test_newton_loads_the_books_mass_and_inertia(plane):
    # Book (FRD): Jx 0.8244, Jy 1.135, Jz 1.759, Jxz 0.1204 with J = [[Jx, 0, -Jxz], [0, Jy, 0], [-Jxz, 0, Jz]];
    # in FLU (y and z flipped) the off-diagonal term is +0.1204.
    plant = plane.plant
    assert plant.mass == pytest.approx(11.0)
    inertia = plant.model.body_inertia.numpy()[plant.base]
    np.testing.assert_allclose(inertia, [[0.8244, 0.0, 0.1204], [0.0, 1.135, 0.0], [0.1204, 0.0, 1.759]], atol=2e-6)


def test_the_plane_is_built_from_its_wing_propeller_three_surfaces_and_its_sensors(plane):
    kinds = sorted(type(c).__name__ for c in plane.components)
    assert kinds == ["AdvanceRatioPropeller", "Airspeed", "Barometer", "ControlSurface", "ControlSurface",
                     "ControlSurface", "FixedWingAero", "Gps", "HoldControls", "Imu", "Magnetometer", "Physics"]
    assert plane.plant.rotors == []


def variant(tmp_path, old: str, new: str):
    text = AEROSONDE.read_text()
    assert old in text, old
    path = tmp_path / "aerosonde_variant.usda"
    path.write_text(text.replace(old, new))
    return path


def one_line_error(path) -> str:
    with pytest.raises(BuildError) as caught:
        assemble(path, VOID, controller="hold")
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_derivative_of_the_wrong_type_is_refused(tmp_path):
    path = variant(tmp_path, "float nexus:C_m_alpha = -2.74", "double nexus:C_m_alpha = -2.74")
    message = one_line_error(path)
    assert "/vehicle/body/base/Aero" in message and "nexus:C_m_alpha" in message and "float" in message


@pytest.mark.parametrize("area", ["0", "-0.55"])
def test_a_wing_area_of_zero_or_less_is_refused(tmp_path, area):
    path = variant(tmp_path, "float nexus:wingArea = 0.55", f"float nexus:wingArea = {area}")
    message = one_line_error(path)
    assert "/vehicle/body/base/Aero" in message and "nexus:wingArea" in message and "> 0" in message


def test_a_surface_the_derivatives_use_without_its_actuator_is_refused(tmp_path):
    path = variant(tmp_path, 'token nexus:role = "elevator"', 'token nexus:role = "flap"')
    message = one_line_error(path)
    assert "/vehicle/body/base/Aero" in message and "nexus:C_L_delta_e" in message and '"elevator"' in message


def test_a_wing_without_a_propeller_is_refused(tmp_path):
    path = variant(tmp_path, 'prepend apiSchemas = ["NexusAdvanceRatioPropellerAPI"]', "")
    text = path.read_text()
    start = text.index('def Scope "Propeller"')
    path.write_text(text[:start] + text[text.index('def Scope "Aileron"'):])
    message = one_line_error(path)
    assert "/vehicle/body/base/Aero" in message and "NexusAdvanceRatioPropellerAPI" in message


@pytest.mark.parametrize(("old", "new", "named"), [
    ("float nexus:C_m_alpha = -2.74", "float nexus:C_m_alpha = 0.1", "nexus:C_m_alpha"),
    ("float nexus:C_L_alpha = 5.61", "float nexus:C_L_alpha = -1", "nexus:C_L_alpha"),
])
def test_an_unstable_pitch_or_falling_lift_slope_is_a_warning_naming_the_prim(tmp_path, caplog, old, new, named):
    path = variant(tmp_path, old, new)
    with caplog.at_level(logging.WARNING, logger="nexus"):
        assemble(path, VOID, controller="hold")
    warned = [r.getMessage() for r in caplog.records if named in r.getMessage()]
    assert len(warned) == 1 and "/vehicle/body/base/Aero" in warned[0]
