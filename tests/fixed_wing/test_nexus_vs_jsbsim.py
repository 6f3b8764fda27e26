"""Nexus's Aerosonde beside JSBSim's: the same trim, the same doublet, the same modes and traces.

JSBSim 1.3.3 flew the same coefficients (tools/jsbsim/aerosonde/aerosonde.xml, tools/jsbsim_aerosonde.py;
docs/fixed_wing_jsbsim.md): its trim is tests/data/jsbsim/trim.csv and its stick-fixed doublet (elevator at
trim ± 2° for a second each from 1 s) doublet.csv, sampled at 40 Hz. Nexus flies the same doublet from its own
trim (test_modes_flown.fly_doublet: MuJoCo's step at 250 Hz, the hold controller, the book's 9.81 m/s²), and
both flights are measured by the same mode fit (tests/fixed_wing/mode_fit.py) over the same window.

What may differ, and by how much (the bounds below): the integrators (MuJoCo's semi-implicit Euler at 4 ms
against JSBSim's Adams-Bashforth 4 at 1/240 s; the book's equations stepped the first way and by RK4 part by
0.0018 rad/s in q, 0.0007 m/s in airspeed and 0.003 m in height over 1 s to 8 s), the elevator's rate limit
(Nexus's reaches 2° in two ticks, JSBSim's at once), JSBSim's air thinning with height (0.01 % per metre) and
its thrust a step late, and its rotating, round Earth.
"""

from __future__ import annotations

import csv
import numpy as np
import pytest

from tests.fixed_wing.mode_fit import fit_modes
from tests.fixed_wing.test_jsbsim_reference import DATA, read_trace
from tests.fixed_wing.test_modes_flown import book_gravity_scene, fly_doublet, flown_modes

FIT_WINDOW = (3.0, 35.0)  # [s], as test_jsbsim_reference.py fits JSBSim's trace
LINEAR_WINDOW = (1.0, 8.0)  # [s]: the doublet and the 5 s after it, the short period and the phugoid's first swing


@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    return fly_doublet(book_gravity_scene(tmp_path_factory.mktemp("nexus_vs_jsbsim")))


@pytest.fixture(scope="module")
def jsbsim() -> dict[str, np.ndarray]:
    return read_trace("doublet.csv")


@pytest.fixture(scope="module")
def jsbsim_trim() -> dict[str, float]:
    with (DATA / "trim.csv").open() as f:
        rows = csv.DictReader(f)
        return {row["quantity"]: float(row["value"]) for row in rows if row["quantity"] != "jsbsim_version"}


def jsbsim_modes(trace: dict[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    t = trace["time"]
    window = (t >= FIT_WINDOW[0]) & (t <= FIT_WINDOW[1])
    response = np.column_stack([trace[k][window] - trace[k][0] for k in ("u", "w", "q", "theta")])
    phugoid, short_period = fit_modes(t[window], response)
    return {"phugoid": phugoid, "short_period": short_period}


def test_nexus_trims_and_holds_where_jsbsim_does(flight, jsbsim, jsbsim_trim):
    # Both trim the same balance at 25 m/s and 9.81 m/s²: JSBSim's trim leaves 8e-5 m/s² in wdot (7e-7 rad of α),
    # Nexus's its float32 residual (5.6e-5 N). Measured: α 4e-8 rad apart, elevator 1.4e-7 rad, throttle 5.3e-6.
    # Bounds as test_jsbsim_reference.py holds JSBSim to the book: 1e-5 rad, 2e-5 of throttle.
    trim = flight.trim
    assert trim.alpha == pytest.approx(jsbsim_trim["alpha"], abs=1e-5)
    assert trim.pitch == pytest.approx(jsbsim_trim["theta"], abs=1e-5)
    assert trim.elevator == pytest.approx(jsbsim_trim["elevator"], abs=1e-5)
    assert trim.throttle == pytest.approx(jsbsim_trim["throttle"], abs=2e-5)
    # Flown: the first second, before the doublet, neither moves (Nexus: 6e-9 m/s, 0 m, 3e-7 rad/s; JSBSim:
    # 1.4e-6 m/s, 1.8e-5 m, 3e-6 rad/s); and they start from the same state (u, w to 1.1e-6 m/s, θ to 5e-8 rad).
    for before in ({key: getattr(flight, key)[flight.t <= 1.0] for key in ("Va", "h", "q")},
                   {key: jsbsim[key][jsbsim["time"] <= 1.0] for key in ("Va", "h", "q")}):
        assert np.max(np.abs(before["Va"] - 25.0)) < 1e-4  # [m/s]
        assert np.max(np.abs(before["h"] - 100.0)) < 1e-3  # [m]
        assert np.max(np.abs(before["q"])) < 1e-4  # [rad/s]
    for key in ("u", "w", "theta"):
        assert getattr(flight, key)[0] == pytest.approx(jsbsim[key][0], abs=1e-5), key


def test_nexus_and_jsbsim_fly_the_same_modes(flight, jsbsim):
    nexus, reference = flown_modes(flight), jsbsim_modes(jsbsim)
    # The bound: 10 %. Measured on 2026-12-06: short period 11.221 rad/s, 0.4432 in Nexus against
    # 11.079, 0.4411 in JSBSim (+1.3 %, +0.5 %); phugoid 0.5008, 0.2076 against 0.5015, 0.2073 (−0.1 %, +0.1 %).
    # 3 % holds them there: MuJoCo's 4 ms step alone raises the short period's frequency by 1.0 %
    # (test_modes_flown.py), which JSBSim's Adams-Bashforth 4 does not.
    for name in ("short_period", "phugoid"):
        (wn, zeta), (wn_jsbsim, zeta_jsbsim) = nexus[name], reference[name]
        assert wn == pytest.approx(wn_jsbsim, rel=0.10) and zeta == pytest.approx(zeta_jsbsim, rel=0.10), name
        assert wn == pytest.approx(wn_jsbsim, rel=0.03) and zeta == pytest.approx(zeta_jsbsim, rel=0.03), name


def test_the_doublets_traces_agree_while_the_response_is_linear(flight, jsbsim):
    # Nexus's samples (every 4 ms) read at JSBSim's (every 25 ms) by linear interpolation (its error, q's
    # curvature ωn² A dt² / 8, is 4e-5 of the amplitude), from the doublet's start to 5 s after its end.
    t = jsbsim["time"]
    window = (t >= LINEAR_WINDOW[0]) & (t <= LINEAR_WINDOW[1])
    differences = {key: np.max(np.abs(np.interp(t[window], flight.t, getattr(flight, key)) - jsbsim[key][window]))
                   for key in ("q", "Va", "h")}
    # The response they must agree on: q peaks at 0.149 rad/s, the airspeed swings 0.56 m/s, the height 1.50 m.
    assert np.max(np.abs(jsbsim["q"][window])) == pytest.approx(0.149, abs=0.001)
    assert np.ptp(jsbsim["Va"][window]) == pytest.approx(0.556, abs=0.001)
    assert np.ptp(jsbsim["h"][window]) == pytest.approx(1.50, abs=0.01)
    # Measured on 2026-12-06: 0.0020 rad/s, 0.0043 m/s, 0.014 m (1.3 %, 0.8 % and 0.9 % of those). The bounds,
    # 2.5 to 14 times what the integrators alone part (module doc) and under 3.5 % of each swing: 0.005 rad/s,
    # 0.01 m/s, 0.03 m. Pitch damping 10 % weaker in Nexus's file (C_m_q × 0.9) parts q by 0.0064 rad/s and
    # fails the first.
    assert differences["q"] < 0.005, differences
    assert differences["Va"] < 0.01, differences
    assert differences["h"] < 0.03, differences
