"""The wind field's mean wind, gusts and ``--wind`` option, worked out by hand on a body held in place.

Directions are where the wind blows from, degrees clockwise from north; the world is ENU
(x east, y north), so a wind from 270 (the west) blows along +x.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.air.gust import Gust
from nexus.air.wind_field import WindField, parse_wind
from nexus.core import BuildError
from tests.air.conftest import wind_series


def test_wind_8_at_270_blows_east_at_8_m_s_at_the_reference_height():
    speed, direction = parse_wind("8@270")
    field = WindField(speed=speed, direction=direction, reference_height=10.0)
    wind = wind_series(field, 3, position=(0.0, 0.0, 10.0))[-1, 0]
    assert wind == pytest.approx([8.0, 0.0, 0.0], abs=1e-6)


def test_a_wind_from_the_north_blows_south():
    wind = wind_series(WindField(speed=5.0, direction=0.0), 2)[-1, 0]
    assert wind == pytest.approx([0.0, -5.0, 0.0], abs=1e-6)


def test_power_law_profile_at_two_heights():
    # 10 m/s at 10 m, alpha = 1/7: at 2.5 m 10 * 0.25^(1/7) = 8.2034 m/s; at 40 m 10 * 4^(1/7) = 12.1901 m/s.
    field = dict(speed=10.0, direction=270.0, reference_height=10.0, shear_exponent=1.0 / 7.0)
    low = wind_series(WindField(**field), 2, position=(0.0, 0.0, 2.5))[-1, 0, 0]
    high = wind_series(WindField(**field), 2, position=(0.0, 0.0, 40.0))[-1, 0, 0]
    assert low == pytest.approx(8.2034, abs=1e-4)
    assert high == pytest.approx(12.1901, abs=1e-4)


def test_logarithmic_profile_at_two_heights():
    # 10 m/s at 10 m, z0 = 0.1 m: ln(h/0.1)/ln(100); at 1 m 10 * ln(10)/ln(100) = 5 m/s; at 100 m 10 * 3/2 = 15 m/s.
    field = dict(speed=10.0, direction=270.0, reference_height=10.0, profile="logarithmic", roughness_length=0.1)
    low = wind_series(WindField(**field), 2, position=(0.0, 0.0, 1.0))[-1, 0, 0]
    high = wind_series(WindField(**field), 2, position=(0.0, 0.0, 100.0))[-1, 0, 0]
    assert low == pytest.approx(5.0, abs=1e-4)
    assert high == pytest.approx(15.0, abs=1e-4)


def test_a_gust_peaks_at_its_midpoint_and_is_zero_outside_it():
    # A 6 m/s gust from the south (blowing north, +y) from 0.2 s for 0.4 s, at 250 Hz (tick k at k * 4 ms):
    # 0 before 0.2 s and after 0.6 s, 6 m/s at 0.4 s, 3 m/s at 0.3 s (1 - cos(pi/2) = 1).
    field = WindField(gusts=(Gust(0.2, 0.4, 6.0, (0.0, 1.0)),))
    north = wind_series(field, 200)[:, 0, 1]
    time = np.arange(1, 201) * 0.004
    assert north[np.argmax(north)] == pytest.approx(6.0, abs=1e-5)
    assert time[np.argmax(north)] == pytest.approx(0.4, abs=1e-9)
    assert north[np.isclose(time, 0.3)][0] == pytest.approx(3.0, abs=1e-5)
    assert np.all(north[(time < 0.2) | (time > 0.6)] == 0.0)


@pytest.mark.parametrize("text", ["8", "8@", "-1@90", "8@400", "fast@north"])
def test_a_bad_wind_option_is_one_line_naming_the_option(text):
    with pytest.raises(BuildError, match=r"^--wind .*SPEED@FROM") as caught:
        parse_wind(text)
    assert "\n" not in str(caught.value)
