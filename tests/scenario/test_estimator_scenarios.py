"""The estimator's fault scenarios pass on the EKF and fail when the estimator is broken on purpose.

Each scenario in scenarios/ is flown as ``nexus test`` flies it (its sweep point's configuration, judged from its
run folder), in this process so a test can break the filter: fed the truth (``estimator = "truth"``), its bias
states frozen (a vehicle file with their initial sigma 1e-4 and no process noise), or its barometer-freeze
detection skipped. One flight per variant, shared by the module; docs/estimation.md ("Scenarios that can fail")
works out each bound.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from nexus.estimation.ekf import Ekf
from nexus.runtime.run import run_flight
from nexus.scenario.runner import PASSED, ScenarioOptions, judge, prepare

ROOT = Path(__file__).resolve().parents[2]
#: The vehicle's EKF with bias states that cannot move: its own prim in place of the estimator's.
FROZEN_BIAS = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    upAxis = "Z"
    subLayers = [@{base}@]
)

over "vehicle"
{{
    over "estimator" (active = false)
    {{
    }}
    over "controller"
    {{
        rel nexus:inputs:estimate = </vehicle/ekf>
    }}
    def Scope "ekf" (prepend apiSchemas = ["NexusEkfAPI"])
    {{
        float nexus:EKF2_GBIAS_INIT = 0.0001
        float nexus:EKF2_ABIAS_INIT = 0.0001
        float nexus:EKF2_GYR_B_NOISE = 0
        float nexus:EKF2_ACC_B_NOISE = 0
    }}
}}
"""


def fly(folder: Path, name: str, estimator: str | None = None, vehicle: Path | None = None):
    """Scenario ``name`` flown once into ``folder``, its estimator or vehicle replaced; its judged case."""
    text = (ROOT / "scenarios" / f"{name}.toml").read_text()
    if estimator is not None:
        text = re.sub(r'^estimator = ".*"$', f'estimator = "{estimator}"', text, flags=re.M)
    if vehicle is not None:
        text = re.sub(r'^estimator = ".*"$', f'estimator = "vehicle"\nvehicle = "{vehicle}"', text, flags=re.M)
    path = folder / f"{name}.toml"
    path.write_text(text)
    cases, points = prepare([path], ScenarioOptions(out=folder))
    run_flight(points[0].config, folder / "run", progress=False)
    judge(cases[0], folder / "run")
    return cases[0]


def verdicts(case) -> dict[str, bool]:
    return {r.check.name: r.passed for r in case.results}


def failed(case) -> set[str]:
    return {name for name, passed in verdicts(case).items() if not passed}


@pytest.fixture(scope="module")
def gps_lost(tmp_path_factory):
    return {estimator: fly(tmp_path_factory.mktemp(f"gps_lost_{estimator}"), "gps_lost", estimator)
            for estimator in ("ekf", "truth")}


@pytest.fixture(scope="module")
def frozen_baro(tmp_path_factory):
    flights = {estimator: fly(tmp_path_factory.mktemp(f"frozen_baro_{estimator}"), "frozen_baro", estimator)
               for estimator in ("ekf", "truth")}
    original = Ekf.from_prim.__func__

    def blind(cls, prim, values, ctx):
        """The EKF as built, told the barometer declares no noise: its repeated samples are then no freeze."""
        ekf = original(cls, prim, values, ctx)
        ekf.sensor_noisy = (ekf.sensor_noisy[0], False, *ekf.sensor_noisy[2:])
        return ekf

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Ekf, "from_prim", classmethod(blind))
        flights["blind"] = fly(tmp_path_factory.mktemp("frozen_baro_blind"), "frozen_baro")
    return flights


@pytest.fixture(scope="module")
def imu_bias(tmp_path_factory):
    folder = tmp_path_factory.mktemp("imu_bias_frozen")
    vehicle = folder / "frozen_bias.usda"
    vehicle.write_text(FROZEN_BIAS.format(base=ROOT / "vehicles" / "astro_max_base.usda"))
    return {"ekf": fly(tmp_path_factory.mktemp("imu_bias_ekf"), "imu_bias"),
            "frozen": fly(folder, "imu_bias", vehicle=vehicle)}


def test_gps_lost_passes_on_the_ekf(gps_lost):
    case = gps_lost["ekf"]
    assert case.verdict == PASSED, [r.message() for r in case.failed_results()] or case.reason


def test_gps_lost_fails_on_a_filter_fed_the_truth(gps_lost):
    # The truth never drifts (0.4 m needed by 15 s after the loss) and never says its position is invalid.
    assert {"drift_by", "invalid_by"} <= failed(gps_lost["truth"])


def test_frozen_baro_passes_on_the_ekf(frozen_baro):
    case = frozen_baro["ekf"]
    assert case.verdict == PASSED, [r.message() for r in case.failed_results()] or case.reason


def test_frozen_baro_fails_on_the_truth_and_without_the_freeze_detection(frozen_baro):
    assert "baro_fault" in failed(frozen_baro["truth"])
    assert {"baro_fault", "height_holds"} <= failed(frozen_baro["blind"])


def test_imu_bias_passes_on_the_ekf(imu_bias):
    case = imu_bias["ekf"]
    assert case.verdict == PASSED, [r.message() for r in case.failed_results()] or case.reason


def test_imu_bias_fails_when_the_filter_cannot_move_its_bias_states(imu_bias):
    assert {"estimate_holds", "vehicle_holds"} <= failed(imu_bias["frozen"])


def test_nexus_plots_the_filter_of_a_scenario_run(imu_bias):
    from nexus.viz import estimate_figures
    from nexus.viz.run_data import load_run
    from nexus.viz.series import flight_series
    from nexus.viz.vehicle_file import read_vehicle_file

    run = load_run(imu_bias["ekf"].folder)
    series = flight_series(run, read_vehicle_file(run.vehicle_path(), None))
    est = estimate_figures.estimate_series(run, series)
    # The figure's position error is the check's: its largest horizontal value over [8, 22] s.
    error = est.position_error[(est.time >= 8.0 - 1e-9) & (est.time <= 22.0 + 1e-9)]
    [check] = [r for r in imu_bias["ekf"].results if r.check.name == "estimate_holds"]
    assert float(np.hypot(error[:, 0], error[:, 1]).max()) == pytest.approx(check.worst, abs=1e-6)
    assert list(estimate_figures.draw(run, series)) == ["estimate_position", "estimate_velocity", "estimate_attitude",
                                                        "estimate_innovations", "estimate_status"]
