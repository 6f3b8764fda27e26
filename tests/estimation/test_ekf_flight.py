"""The EKF flying the default mission (``nexus run --estimator ekf``), and its bad input refused in one line."""

from pathlib import Path

import numpy as np
import pyarrow.dataset as ds
import pytest

from nexus.core.errors import BuildError
from nexus.plant.frames import attitude_ned_frd_np, enu_to_ned_np
from nexus.runtime.assembly import assemble
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "vehicles" / "astro_max_base.usda"


def record(out):
    return ds.dataset(out / "record.parquet").to_table().to_pandas()


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    """The default mission flown twice on the EKF (seed 0, CPU)."""
    outs = []
    for name in ("a", "b"):
        out = tmp_path_factory.mktemp("ekf") / name
        summary = run_flight(RunConfig(device="cpu", estimator="ekf"), out, progress=False)
        assert summary.exit_reason == "done", summary.exit_reason
        outs.append(out)
    return outs


def errors(t):
    """Estimate minus truth: position [m] NED (truth from the first row's base position), velocity [m/s], attitude [deg]."""
    pose = t[[f"body/base.pose[{i}]" for i in range(7)]].to_numpy()
    truth = np.array([enu_to_ned_np(p - pose[0, :3]) for p in pose[:, :3]])
    position = t[[f"estimate.position[{i}]" for i in range(3)]].to_numpy() - truth
    v_true = np.array([enu_to_ned_np(v) for v in t[[f"body/base.velocity[{i}]" for i in range(3)]].to_numpy()])
    velocity = t[[f"estimate.velocity[{i}]" for i in range(3)]].to_numpy() - v_true
    q_est = t[[f"estimate.attitude[{i}]" for i in range(4)]].to_numpy()
    q_true = np.array([attitude_ned_frd_np(q) for q in pose[:, 3:]])
    attitude = 2 * np.degrees(np.arccos(np.abs(np.sum(q_est * q_true, axis=1)).clip(0, 1)))
    return truth, position, velocity, attitude


def test_the_default_mission_flies_on_the_ekf_within_its_bounds(flights):
    t = record(flights[0])
    truth, position, velocity, attitude = errors(t)
    # It flew the mission: up to 5 m (within 0.2 m), and landed.
    assert 4.8 < -truth[:, 2].min() < 5.2
    # Bounds: the GPS's own drift (0.3 m horizontal, 0.5 m vertical settled 1σ) dominates the position error;
    # measured on 2026-12-06 (origin at the first good fix): horizontal 0.40 m, vertical 0.28 m, velocity 0.061 m/s,
    # attitude 1.66° (0.70° after 2 s).
    assert np.hypot(position[:, 0], position[:, 1]).max() < 0.6
    assert np.abs(position[:, 2]).max() < 0.5
    assert np.abs(velocity).max() < 0.1
    assert attitude.max() < 2.0 and attitude[500:].max() < 1.0
    # Every aiding on, both positions valid, the origin set (1+2+4+8+16+64+128+256); no sensor faulted (the
    # sensors declare noise, so none repeats a sample), no fake position, no reset; nothing rejected.
    assert set(t["estimate_status"]) == {479}
    assert set(t["ekf_resets"]) == {0}
    assert t[[f"ekf_rejected[{i}]" for i in range(9)]].to_numpy().max() == 0


def test_two_ekf_flights_are_bit_exact(flights):
    a, b = record(flights[0]), record(flights[1])
    assert list(a.columns) == list(b.columns)
    for column in a.columns:
        if column.startswith(("estimate", "ekf_")):
            assert a[column].to_numpy().tobytes() == b[column].to_numpy().tobytes(), column


def layer(tmp_path, body: str) -> Path:
    path = tmp_path / "vehicle.usda"
    path.write_text(f'#usda 1.0\n(\n    defaultPrim = "vehicle"\n    kilogramsPerUnit = 1\n    metersPerUnit = 1\n    upAxis = "Z"\n    subLayers = [@{BASE}@]\n)\n\n'
                    f'over "vehicle"\n{{\n{body}\n}}\n')
    return path


#: The vehicle file's own choice: an EKF prim in place of the truth estimator's, the controller reading it.
EKF_PRIM = ('    over "estimator" (active = false)\n    {\n    }\n'
            '    over "controller"\n    {\n        rel nexus:inputs:estimate = </vehicle/ekf>\n    }\n'
            '    def Scope "ekf" (prepend apiSchemas = ["NexusEkfAPI"])\n')


def refused(path, estimator="vehicle") -> str:
    with pytest.raises(BuildError) as caught:
        assemble(path, "empty", controller="hold", estimator=estimator)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_negative_noise_is_refused_naming_file_prim_and_attribute(tmp_path):
    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:EKF2_GYR_NOISE = -0.01\n    }')
    message = refused(path)
    assert str(path) in message and "/vehicle/ekf" in message and "nexus:EKF2_GYR_NOISE" in message
    assert "-0.01" in message and "> 0" in message


def test_fusing_a_sensor_the_vehicle_lacks_is_refused(tmp_path):
    path = layer(tmp_path, EKF_PRIM + '    {\n        bool nexus:fuseRange = 1\n    }')
    message = refused(path)
    assert "/vehicle/ekf" in message and "nexus:fuseRange" in message and "NexusRangefinderAPI" in message


def test_an_ekf_without_an_imu_is_refused(tmp_path):
    path = layer(tmp_path, '    over "body"\n    {\n        over "base"\n        {\n'
                           '            over "Imu" (active = false)\n            {\n            }\n        }\n    }')
    message = refused(path, estimator="ekf")
    assert str(path) in message and "/vehicle/estimator" in message and "NexusImuAPI" in message


def test_a_vehicle_file_chooses_the_ekf_and_truth_overrides_it(tmp_path):
    from nexus.estimation import TruthEstimator
    from nexus.estimation.ekf import Ekf

    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:EKF2_BARO_NOISE = 1.5\n    }')
    own = [c for c in assemble(path, "empty", controller="hold").components if isinstance(c, (Ekf, TruthEstimator))]
    assert [type(c) for c in own] == [Ekf] and own[0].values["baro_noise"] == 1.5
    forced = assemble(path, "empty", controller="hold", estimator="truth").components
    assert [type(c) for c in forced if isinstance(c, (Ekf, TruthEstimator))] == [TruthEstimator]


def test_a_filter_that_overflows_in_flight_ends_the_run_estimator_diverged_with_its_line_in_run_log(tmp_path):
    # EKF2_ACC_NOISE = 1e30 m/s^2: the first covariance prediction adds (1e30 * T)^2 to the velocity variances,
    # past float32's 3.4e38, so the covariance is infinite on the first tick that predicts it.
    import json

    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:EKF2_ACC_NOISE = 1e30\n    }')
    out = tmp_path / "run"
    summary = run_flight(RunConfig(vehicle=str(path), device="cpu", duration=1.0), out, progress=False)
    assert summary.exit_reason == "estimator-diverged"
    info = json.loads((out / "run.json").read_text())
    assert info["exit_reason"] == "estimator-diverged" and info["status"] == "failed"
    [line] = [x for x in (out / "run.log").read_text().splitlines() if "estimator-diverged: " in x]
    # Aligned at tick 0; IMU samples at ticks 1 and 2 (250 Hz, one a tick); the covariance predicted every 2
    # samples: at tick 2 (0.008 s).
    assert "/vehicle/ekf world 0 at tick 2 (0.008 s): position (" in line and "velocity (" in line and "last innovations: gps_north" in line


def test_a_gps_delay_longer_than_the_history_is_refused(tmp_path):
    # 64 samples kept, 62 usable between two around the delayed time: 62 / 250 Hz = 0.248 s.
    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:gpsDelay = 0.3\n    }')
    message = refused(path)
    assert str(path) in message and "/vehicle/ekf" in message and "nexus:gpsDelay" in message and "0.248" in message


def test_a_non_positive_initial_covariance_is_refused(tmp_path):
    path = layer(tmp_path, EKF_PRIM + '    {\n        float nexus:EKF2_ANGERR_INIT = 0\n    }')
    message = refused(path)
    assert str(path) in message and "/vehicle/ekf" in message and "nexus:EKF2_ANGERR_INIT" in message
    assert "> 0" in message


def test_two_estimators_with_no_connection_choosing_are_refused(tmp_path):
    # A second EKF prim beside the shipped vehicle's own (an EKF at /vehicle/estimator), and the controller's
    # connection deleted: the first estimator built names the other.
    path = layer(tmp_path, '    def Scope "ekf" (prepend apiSchemas = ["NexusEkfAPI"])\n    {\n    }\n'
                           '    over "controller"\n    {\n        delete rel nexus:inputs:estimate = </vehicle/estimator>\n    }')
    message = refused(path)
    assert str(path) in message and "estimator prim /vehicle/estimator: /vehicle/ekf writes the estimate too" in message
    assert "nexus:inputs:estimate" in message
    # A connection choosing one builds (the base file's, to /vehicle/estimator; its own folder: USD keeps a
    # layer it opened by path).
    (tmp_path / "chosen").mkdir()
    chosen = layer(tmp_path / "chosen", '    def Scope "ekf" (prepend apiSchemas = ["NexusEkfAPI"])\n    {\n    }\n')
    assemble(chosen, "empty", controller="hold")
