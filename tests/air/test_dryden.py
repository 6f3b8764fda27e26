"""Dryden turbulence against MIL-F-8785C's closed forms: intensities, length scales, variance and spectrum.

Moderate turbulence at 10 m (32.81 ft) in a 20 m/s mean wind from the west, by hand:
W20 = 30 kt = 15.4333 m/s; sigma_w = 0.1 W20 = 1.5433 m/s; 0.177 + 0.000823 h = 0.204001;
sigma_u = sigma_v = sigma_w / 0.204001^0.4 = 2.9148 m/s; L_w = h = 10.0 m;
L_u = L_v = 32.81 ft / 0.204001^1.2 = 67.366 m. The field passes at V = 20 m/s: T_u = L_u / V = 3.368 s,
T_w = 0.5 s. Spectra (one-sided, per Hz): G_u = 4 sigma^2 T / (1 + (2 pi f T)^2),
G_v,w = 2 sigma^2 T (1 + 3 (2 pi f T)^2) / (1 + (2 pi f T)^2)^2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nexus.air.dryden import low_altitude_scales
from nexus.air.wind_field import WindField
from tests.air.conftest import wind_series

TICK_HZ = 250.0
SIGMA = np.array([2.9148, 2.9148, 1.5433])  # u, v, w [m/s]
LENGTH = np.array([67.366, 67.366, 10.0])  # [m]
AIRSPEED = 20.0  # [m/s]


def moderate() -> WindField:
    return WindField(speed=AIRSPEED, direction=270.0, reference_height=10.0, turbulence="moderate")


@pytest.fixture(scope="module")
def turbulence() -> np.ndarray:
    """128 worlds x 120 s of the turbulence (the mean wind taken off): (ticks, worlds, 3), u east, v north, w up."""
    wind = wind_series(moderate(), 30_001, worlds=128, seed=3, position=(0.0, 0.0, 10.0))[1:]  # from tick 2 on
    wind[..., 0] -= AIRSPEED
    return wind


def test_the_host_formulas_give_the_hand_worked_intensities_and_length_scales():
    sigma, length = low_altitude_scales(10.0, 30 * 1852 / 3600)
    assert sigma == pytest.approx(SIGMA, rel=1e-4)
    assert length == pytest.approx(LENGTH, rel=1e-4)


def test_each_component_has_the_standard_deviation_of_mil_f_8785c(turbulence):
    # 128 worlds x 120 s: the estimate of sigma_u (correlation time 3.4 s) scatters by about 1 %.
    got = turbulence.reshape(-1, 3).std(axis=0)
    assert got == pytest.approx(SIGMA, rel=0.03)
    assert np.abs(turbulence.reshape(-1, 3).mean(axis=0)) == pytest.approx([0, 0, 0], abs=0.1)


def welch(x: np.ndarray, fs: float, nperseg: int) -> tuple[np.ndarray, np.ndarray]:
    """Welch's one-sided spectral density of each column of ``x`` averaged over columns: Hann window, 50 % overlap."""
    window = np.hanning(nperseg)
    scale = 1.0 / (fs * (window**2).sum())
    starts = range(0, x.shape[0] - nperseg + 1, nperseg // 2)
    total = np.zeros(nperseg // 2 + 1)
    count = 0
    for s in starts:
        segment = x[s:s + nperseg]
        segment = segment - segment.mean(axis=0)
        spectrum = np.abs(np.fft.rfft(segment * window[:, None], axis=0)) ** 2 * scale
        spectrum[1:-1] *= 2.0
        total += spectrum.sum(axis=1)
        count += segment.shape[1]
    return np.fft.rfftfreq(nperseg, 1.0 / fs), total / count


def closed_form(f: np.ndarray, axis: int) -> np.ndarray:
    t = LENGTH[axis] / AIRSPEED
    x = (2 * math.pi * f * t) ** 2
    if axis == 0:
        return 4 * SIGMA[0] ** 2 * t / (1 + x)
    return 2 * SIGMA[axis] ** 2 * t * (1 + 3 * x) / (1 + x) ** 2


@pytest.mark.parametrize("axis", [0, 1, 2], ids=["u", "v", "w"])
def test_welch_spectrum_matches_the_dryden_closed_form_within_10_percent(turbulence, axis):
    # Segments of 8192 ticks (32.8 s, 0.03 Hz apart: the Hann window leaks under 1 % into 0.25 Hz); the band 0.25 to 25 Hz (a tenth of the tick rate, where the
    # aliased part of a 1/f^2 tail is under 3 %), in 10 log-spaced bands.
    f, psd = welch(turbulence[..., axis], TICK_HZ, 8192)
    edges = np.geomspace(0.25, 25.0, 11)
    ratios = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (f >= lo) & (f < hi)
        ratios.append(psd[inside].mean() / closed_form(f[inside], axis).mean())
    assert np.array(ratios) == pytest.approx(np.ones(10), rel=0.10), np.round(ratios, 3)

