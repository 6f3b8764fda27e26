"""The Dryden turbulence model in its low-altitude form (MIL-F-8785C, MIL-HDBK-1797), as Warp functions.

Below 1,000 ft, with the height ``h`` in feet (MIL-F-8785C, 3.7.2.3):

* length scales ``L_w = h``, ``L_u = L_v = h / (0.177 + 0.000823 h)^1.2`` [ft];
* intensities ``sigma_w = 0.1 W20``, ``sigma_u = sigma_v = sigma_w / (0.177 + 0.000823 h)^0.4``, where
  ``W20`` is the wind at 20 ft: 15, 30 and 45 knots for light, moderate and severe turbulence.

A frozen field carried past the vehicle at airspeed ``V`` gives, with ``T = L / V`` [s], the
time spectra (one-sided, per hertz; :func:`dryden_psd`)

* longitudinal ``G_u(f) = 4 sigma^2 T / (1 + (2 pi f T)^2)`` (the first-order filter
  ``1 / (1 + T s)``),
* lateral and vertical ``G(f) = 2 sigma^2 T (1 + 3 (2 pi f T)^2) / (1 + (2 pi f T)^2)^2``
  (the filter ``(1 + sqrt(3) T s) / (1 + T s)^2``).

Each filter is stepped exactly for the tick: its states are kept at unit variance, and
their transition and the covariance of the noise each tick adds are the closed forms of
the continuous filter over ``dt`` (worked out in ``docs/air.md``), so the sampled process has
exactly the continuous one's variance and autocorrelation at every tick length.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

#: One foot [m] and one knot [m/s].
FOOT = 0.3048
KNOT = 1852.0 / 3600.0
#: The wind at 20 ft [m/s] of each turbulence level (MIL-HDBK-1797: 15, 30 and 45 knots).
W20 = {"none": 0.0, "light": 15.0 * KNOT, "moderate": 30.0 * KNOT, "severe": 45.0 * KNOT}
#: The heights the low-altitude form holds for [m]: 10 ft to 1,000 ft; outside, the nearest.
LOW_HEIGHT, HIGH_HEIGHT = 10.0 * FOOT, 1000.0 * FOOT
#: The slowest the frozen field is carried past the vehicle [m/s] (a hover in still air would freeze it).
MIN_AIRSPEED = 1.0


def low_altitude_scales(height: float, w20: float) -> tuple[np.ndarray, np.ndarray]:
    """Intensities (sigma_u, sigma_v, sigma_w) [m/s] and length scales (L_u, L_v, L_w) [m] at ``height`` [m]
    for the wind ``w20`` [m/s] at 20 ft (host twin of :func:`dryden_scales`, for checks and docs)."""
    h = min(max(height, LOW_HEIGHT), HIGH_HEIGHT) / FOOT
    base = 0.177 + 0.000823 * h
    sigma_w = 0.1 * w20
    sigma_uv = sigma_w / base ** 0.4
    length_uv = h / base ** 1.2 * FOOT
    return np.array([sigma_uv, sigma_uv, sigma_w]), np.array([length_uv, length_uv, h * FOOT])


def dryden_psd(f: np.ndarray, sigma: float, length: float, airspeed: float, longitudinal: bool) -> np.ndarray:
    """The closed-form one-sided spectrum [(m/s)^2/Hz] at frequencies ``f`` [Hz] of one component."""
    t = length / airspeed
    x = (2.0 * math.pi * np.asarray(f) * t) ** 2
    if longitudinal:
        return 4.0 * sigma**2 * t / (1.0 + x)
    return 2.0 * sigma**2 * t * (1.0 + 3.0 * x) / (1.0 + x) ** 2


@wp.func
def dryden_scales(height: wp.float64, w20: wp.float64) -> wp.vec4d:
    """(sigma_uv, sigma_w, L_uv, L_w) [m/s, m/s, m, m] at ``height`` [m] for the wind ``w20`` [m/s] at 20 ft."""
    h = wp.min(wp.max(height, wp.float64(LOW_HEIGHT)), wp.float64(HIGH_HEIGHT)) / wp.float64(FOOT)
    base = wp.float64(0.177) + wp.float64(0.000823) * h
    sigma_w = wp.float64(0.1) * w20
    return wp.vec4d(sigma_w / wp.pow(base, wp.float64(0.4)), sigma_w,
                    h / wp.pow(base, wp.float64(1.2)) * wp.float64(FOOT), h * wp.float64(FOOT))


@wp.func
def first_order_step(z: wp.float64, tau: wp.float64, n: wp.float64) -> wp.float64:
    """One tick of the unit-variance first-order filter: ``tau`` = dt / T, ``n`` a standard normal draw."""
    a = wp.exp(-tau)
    return a * z + wp.sqrt(wp.float64(1.0) - a * a) * n


@wp.func
def second_order_step(z: wp.vec2d, tau: wp.float64, n1: wp.float64, n2: wp.float64) -> wp.vec2d:
    """One tick of two unit-variance lags in cascade (``z[1]`` follows ``z[0]``), exact for ``tau`` = dt / T.

    Transition ``[[a, 0], [sqrt(2) tau a, a]]``; the noise's covariance ``1 - a^2``,
    ``(1 - a^2 (1 + 2 tau)) / sqrt(2)``, ``1 - a^2 (1 + 2 tau + 2 tau^2)`` (with ``a = exp(-tau)``),
    drawn through its Cholesky factor.
    """
    a = wp.exp(-tau)
    a2 = a * a
    one = wp.float64(1.0)
    q11 = one - a2
    q12 = (one - a2 * (one + wp.float64(2.0) * tau)) / wp.sqrt(wp.float64(2.0))
    q22 = one - a2 * (one + wp.float64(2.0) * tau + wp.float64(2.0) * tau * tau)
    l11 = wp.sqrt(q11)
    l21 = q12 / l11
    l22 = wp.sqrt(wp.max(q22 - l21 * l21, wp.float64(0.0)))
    return wp.vec2d(a * z[0] + l11 * n1,
                    a * z[1] + wp.sqrt(wp.float64(2.0)) * tau * a * z[0] + l21 * n1 + l22 * n2)


@wp.func
def second_order_output(z: wp.vec2d) -> wp.float64:
    """The unit-variance output of ``(1 + sqrt(3) T s) / (1 + T s)^2`` from the cascade's states."""
    return wp.sqrt(wp.float64(1.5)) * z[0] + (wp.float64(1.0) - wp.sqrt(wp.float64(3.0))) * wp.float64(0.5) * z[1]
