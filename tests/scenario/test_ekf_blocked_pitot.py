"""scenarios/aerosonde_ekf_blocked_pitot.toml passes on the EKF and fails when its frozen-pitot check is broken.

Flown as ``nexus test`` flies it (its sweep point's configuration, judged from its run folder), in this process so
the filter can be told the pitot declares no noise (its repeated samples are then no freeze: it goes on fusing a
frozen airspeed). Measured 2026-12-07: caught at 40.18 s (the freeze at 40 s; ten identical samples at 50 Hz),
horizontal estimate error at most 0.70 m, stall margin 1.93, touchdown 0.77 m/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nexus.estimation.ekf import Ekf
from nexus.runtime.run import run_flight
from nexus.scenario.runner import PASSED, ScenarioOptions, judge, prepare

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "aerosonde_ekf_blocked_pitot.toml"


def fly(folder: Path):
    cases, points = prepare([SCENARIO], ScenarioOptions(out=folder))
    run_flight(points[0].config, folder / "run", progress=False)
    judge(cases[0], folder / "run")
    return cases[0]


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    flown = {"ekf": fly(tmp_path_factory.mktemp("pitot_ekf"))}
    original = Ekf.from_prim.__func__

    def blind(cls, prim, values, ctx):
        ekf = original(cls, prim, values, ctx)
        ekf.airspeed_noisy = False
        return ekf

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Ekf, "from_prim", classmethod(blind))
        flown["blind"] = fly(tmp_path_factory.mktemp("pitot_blind"))
    return flown


def test_the_blocked_pitot_passes_on_the_ekf(flights):
    case = flights["ekf"]
    assert case.verdict == PASSED, [r.message() for r in case.failed_results()] or case.reason
    worst = {r.check.name: r.worst for r in case.results}
    assert 40.0 < worst["pitot_caught"] < 40.3  # ten frozen samples at 50 Hz: 0.2 s after the freeze
    assert worst["estimate_held"] < 1.0


def test_it_fails_when_the_filter_cannot_tell_a_frozen_pitot(flights):
    failed = {r.check.name for r in flights["blind"].results if not r.passed}
    assert "pitot_caught" in failed
