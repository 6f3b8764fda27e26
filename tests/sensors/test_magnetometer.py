"""The magnetometer: the World Magnetic Model's field at the origin, turned into the body."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pygeomag import GeoMag

from nexus.sensors import Magnetometer
from tests.sensors.conftest import ORIGIN, place, ring, sample, vec

NANOTESLA = 1e-9


@pytest.mark.parametrize("heading_deg", [0.0, 90.0, 180.0, -45.0])
def test_mag_equals_wmm_at_origin_and_rotates_with_heading(void_vehicle, heading_deg):
    # pygeomag gives the field (north, east, down) [nT] at the origin (altitude in km) for the
    # plant's date. A level body at heading ψ (0 north, +90° east) reads, in FRD,
    #   x = Bn·cos ψ + Be·sin ψ,  y = -Bn·sin ψ + Be·cos ψ,  z = Bd.
    # Newton's body x points east at yaw 0 (ENU), so the ENU yaw of heading ψ is 90° - ψ.
    latitude, longitude, altitude = ORIGIN
    wmm = GeoMag().calculate(glat=latitude, glon=longitude, alt=altitude / 1000.0, time=void_vehicle.plant.decimal_year)
    north, east, down = wmm.x, wmm.y, wmm.z  # [nT]
    psi = math.radians(heading_deg)
    expected = np.array([
        north * math.cos(psi) + east * math.sin(psi),
        -north * math.sin(psi) + east * math.cos(psi),
        down,
    ])
    mag = Magnetometer("/test/mag", plant=void_vehicle.plant, noise=False, rate=0.0)
    loop = ring(void_vehicle, [mag])
    place(void_vehicle, (0.0, 0.0, 50.0), yaw=math.radians(90.0 - heading_deg))
    loop.tick()
    measured = vec(sample(loop, "mag").field) / NANOTESLA
    np.testing.assert_allclose(measured, expected, atol=1.0)  # within 1 nT
    # The magnitude is the field's total intensity F whatever the heading.
    assert abs(np.linalg.norm(measured) - wmm.f) < 1.0
