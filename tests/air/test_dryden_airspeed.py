"""Dryden turbulence on a body that flies into the wind: the filters' time scale is the length scale over the
airspeed (the air's velocity relative to the body), not over the wind speed.

A 5 m/s mean wind at its reference height (10 m), the body flying 15 m/s straight into it: the airspeed is
|5 - (-15)| = 20 m/s, where the wind alone is 5 m/s (and a body velocity taken with the wrong sign gives
|5 + (-15)| = 10 m/s). Custom turbulence, sigma 1 m/s and L = 4 m on every axis, so T = L / V = 4 / 20 = 0.2 s
(10 m/s would give 0.4 s, 5 m/s 0.8 s).

Autocorrelations of the frozen field carried past at V (MIL-F-8785C), with tau the lag:

* longitudinal u (first-order filter): rho(tau) = exp(-tau / T); one tick (4 ms at 250 Hz) a = exp(-0.02) =
  0.980199, so T = -dt / ln(a); rho(T) = exp(-1) = 0.3679, rho(2T) = exp(-2) = 0.1353;
* lateral v and vertical w: rho(tau) = (1 - tau / (2T)) exp(-tau / T); rho(T) = exp(-1) / 2 = 0.1839,
  rho(2T) = 0 (the correlation crosses zero at twice the time scale).

With T = 0.4 s (the sign error) these would be rho_u(0.2 s) = exp(-0.5) = 0.6065 and rho_v(0.2 s) =
0.75 exp(-0.5) = 0.4549, rho_v(0.4 s) = 0.5 exp(-1) = 0.1839.

64 worlds x 10 s (2,500 ticks, T is 50 ticks): the estimates scatter by about 0.02 (seed 5, a CPU run, is the
same bits every time).
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.air.wind_field import WindField
from tests.air.conftest import wind_series

TICK_S = 0.004
WIND = 5.0  # [m/s] at the reference height, where the body flies
LAG_T = 50  # ticks in T = 0.2 s
#: (where the wind blows from [deg], the body's velocity [m/s, ENU] into it, the ENU axis u lies on)
CASES = {"from_west": (270.0, (-15.0, 0.0, 0.0), 0), "from_south": (180.0, (0.0, -15.0, 0.0), 1)}


def correlation(x: np.ndarray, lag: int) -> float:
    """The normalised autocorrelation at ``lag`` ticks of zero-mean series (rows: ticks, columns: worlds)."""
    head, tail = x[:-lag], x[lag:]
    return float((head * tail).sum() / np.sqrt((head**2).sum() * (tail**2).sum()))


@pytest.fixture(scope="module", params=list(CASES))
def flying_into_the_wind(request):
    """(u, the horizontal cross component, w) with the mean wind taken off: each (ticks, worlds)."""
    direction, velocity, axis = CASES[request.param]
    field = WindField(speed=WIND, direction=direction, reference_height=10.0, turbulence="custom",
                      turbulence_intensity=(1.0, 1.0, 1.0), turbulence_length_scale=(4.0, 4.0, 4.0))
    # From tick 2 on: the body is published after the wind field, so tick 1 sees it at rest at the origin.
    wind = wind_series(field, 2501, worlds=64, seed=5, position=(0.0, 0.0, 10.0), velocity=velocity)[1:]
    wind[..., axis] -= WIND
    return wind[..., axis], wind[..., 1 - axis], wind[..., 2]


def test_the_longitudinal_correlation_time_is_the_length_over_the_airspeed(flying_into_the_wind):
    u, _, _ = flying_into_the_wind
    # Least squares of u(k+1) on u(k) over every world: the first-order filter's a = exp(-dt / T).
    a = float((u[1:] * u[:-1]).sum() / (u[:-1] ** 2).sum())
    assert -TICK_S / np.log(a) == pytest.approx(0.2, rel=0.10)  # T = 4 m / 20 m/s; 10 m/s would give 0.4 s
    assert correlation(u, LAG_T) == pytest.approx(0.3679, abs=0.05)
    assert correlation(u, 2 * LAG_T) == pytest.approx(0.1353, abs=0.05)


def test_the_lateral_and_vertical_correlations_cross_zero_at_twice_the_length_over_the_airspeed(flying_into_the_wind):
    _, v, w = flying_into_the_wind
    for series in (v, w):
        assert correlation(series, LAG_T) == pytest.approx(0.1839, abs=0.05)
        assert correlation(series, 2 * LAG_T) == pytest.approx(0.0, abs=0.05)


def test_the_intensities_stay_those_given_whatever_the_airspeed(flying_into_the_wind):
    # The filters keep unit variance at every time scale: sigma 1 m/s on each axis.
    for series in flying_into_the_wind:
        assert series.std() == pytest.approx(1.0, rel=0.05)
