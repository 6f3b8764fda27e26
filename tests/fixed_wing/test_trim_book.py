"""Nexus's straight-and-level trim (a root of its own force stages' output) against the book's trim equations.

:func:`nexus.aero.trim.straight_and_level` evaluates the wing's and the propeller's kernels; the reference is
``tests/fixed_wing/book_model.py``, Beard and McLain's ch. 4 forces and ch. 5.3 trim written from the book with
no Nexus code, root-solved by Newton's method (elevator lift and drag included). Both read the Aerosonde's
numbers, Nexus from vehicles/aerosonde.usda and the reference from its own table, with the book's g = 9.81.
The bar (issue 48): angle of attack within 0.05°, elevator within 0.1°, throttle within 0.005.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC
from nexus.aero.trim import straight_and_level
from nexus.core.errors import NexusError
from nexus.plant.loading import open_stage
from nexus.schemas.reader import read_prim
from tests.fixed_wing import book_model
from tests.fixed_wing.wing_stage import AEROSONDE, aerosonde_wing

G = 9.81  # the book's gravity [m/s²]
DATA = Path(__file__).resolve().parents[1] / "data" / "jsbsim"


@pytest.fixture(scope="module")
def aerosonde():
    stage = open_stage(AEROSONDE)
    propeller = read_prim(stage.GetPrimAtPath("/vehicle/body/base/Propeller"), ADVANCE_RATIO_PROPELLER_SPEC, AEROSONDE)
    mass = float(stage.GetPrimAtPath("/vehicle/body/base").GetAttribute("physics:mass").Get())
    return aerosonde_wing(), propeller, mass


@pytest.mark.parametrize("airspeed", [25.0, 20.0, 30.0])
def test_trim_matches_the_books_trim_equations(aerosonde, airspeed):
    wing, propeller, mass = aerosonde
    nexus = straight_and_level(wing, propeller, mass, G, airspeed)
    book = book_model.trim(airspeed, p=dataclasses.replace(book_model.AEROSONDE, g=G))
    assert math.degrees(abs(nexus.alpha - book.alpha)) < 0.05
    assert math.degrees(abs(nexus.elevator - book.elevator)) < 0.1
    assert abs(nexus.throttle - book.throttle) < 0.005


def test_trim_at_25_m_s_is_mavsims_published_trim(aerosonde):
    # mavsim's own trim of its Aerosonde at 25 m/s, level (design_projects/model_coef.py, as book_model.py
    # cites it): alpha 0.050107 rad, elevator -0.125044 rad, throttle 0.676775.
    wing, propeller, mass = aerosonde
    nexus = straight_and_level(wing, propeller, mass, G, 25.0)
    assert nexus.alpha == pytest.approx(0.050107, abs=2e-4)
    assert nexus.elevator == pytest.approx(-0.125044, abs=5e-4)
    assert nexus.throttle == pytest.approx(0.676775, abs=1e-3)
    # The lateral trim only balances the propeller's torque: a hundredth of a degree of sideslip and rudder.
    assert abs(nexus.beta) < 1e-3 and abs(nexus.rudder) < 1e-3 and 0.0 < nexus.aileron < 0.01


def test_trim_is_refused_where_the_propeller_cannot_hold_the_speed(aerosonde):
    wing, propeller, mass = aerosonde
    weak = {**propeller, "voltage": 5.0}  # a 5 V pack: the propeller cannot pull 25 m/s
    with pytest.raises(NexusError, match="no straight-and-level trim at 25 m/s"):
        straight_and_level(wing, weak, mass, G, 25.0)


def test_trim_at_25_m_s_matches_jsbsims_trim_of_the_same_coefficients(aerosonde):
    # JSBSim 1.3.3 trimming the same Aerosonde (tools/jsbsim/aerosonde, traces committed in tests/data/jsbsim;
    # its apparent gravity there is the book's 9.81 m/s²): alpha, elevator and throttle within the bars.
    rows = dict(line.split(",")[:2] for line in (DATA / "trim.csv").read_text().splitlines()[1:])
    wing, propeller, mass = aerosonde
    nexus = straight_and_level(wing, propeller, mass, G, float(rows["Va"]))
    assert math.degrees(abs(nexus.alpha - float(rows["alpha"]))) < 0.05
    assert math.degrees(abs(nexus.elevator - float(rows["elevator"]))) < 0.1
    assert abs(nexus.throttle - float(rows["throttle"])) < 0.005
