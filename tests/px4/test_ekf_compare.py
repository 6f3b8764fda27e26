"""``tools/px4_ekf_compare.py`` (Nexus's EKF beside PX4's EKF2) without PX4: the ULog reading, the alignment of
PX4's samples with the record's ticks, the window and the statistics on a hand-made ULog and record; the EKF2
parameters from the EKF's tuning; and the EKF flying as a recorded observer beside the (scripted) PX4."""

import importlib.util
import math
import struct
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pxr import Sdf, Usd

from nexus.estimation.ekf import EKF_SPEC
from nexus.px4.ekf2_params import ekf2_parameters, vehicle_ekf2_parameters
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.record.parts import read_record
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import build_flight
from nexus.runtime.run import run_flight

ROOT = Path(__file__).resolve().parents[2]
TICK = 0.004
TICKS = 500  # 0.004 ... 2.000 s


def load_tool():
    spec = importlib.util.spec_from_file_location("px4_ekf_compare", ROOT / "tools" / "px4_ekf_compare.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["px4_ekf_compare"] = module
    spec.loader.exec_module(module)
    return module


tool = load_tool()


# ---- a hand-made flight: truth, Nexus's EKF in the record, PX4's estimate in a ULog ------------------------------
#
# Truth: the base rests at ENU (10, 20, 0) until 1.0 s, then climbs at 1 m/s (1.0 m up at 2.0 s), nose east
# (ENU/FLU identity: NED heading 90 deg). From the start, NED: (0, 0, -(t - 1)) after 1.0 s.
# Nexus's EKF (valid from 0.5 s): position off by (-0.1, 0, +0.05) m, velocity by (0.2, 0, 0) m/s, heading 91 deg.
# PX4 (valid from 0.8 s, logged every 0.1 s; attitude at 0.02 + 0.1 j s): position off by (0.3, 0.4, 0.2) m except
# down 0.6 m at 1.5 s, velocity by (0, 0, 0.1) m/s, heading 92 deg. Before they are valid both are 50-100 m off.


def times():
    return np.arange(1, TICKS + 1) * TICK


def truth_ned(t):
    return np.stack([np.zeros_like(t), np.zeros_like(t), -np.clip(t - 1.0, 0.0, None)], axis=1)


def truth_velocity_ned(t):
    return np.stack([np.zeros_like(t), np.zeros_like(t), np.where(t > 1.0, -1.0, 0.0)], axis=1)


def write_record(path: Path):
    t = times()
    up = np.clip(t - 1.0, 0.0, None)
    columns = {"time": t}
    for i, v in enumerate((np.full_like(t, 10.0), np.full_like(t, 20.0), up, 0 * t, 0 * t, 0 * t, 1 + 0 * t)):
        columns[f"body/base.pose[{i}]"] = v
    for i, v in enumerate((0 * t, 0 * t, np.where(t > 1.0, 1.0, 0.0))):
        columns[f"body/base.velocity[{i}]"] = v
    valid = t >= 0.5 - 1e-9
    position = truth_ned(t) + np.array([-0.1, 0.0, 0.05])
    position[~valid] += 100.0
    velocity = truth_velocity_ned(t) + np.array([0.2, 0.0, 0.0])
    half = math.radians(91.0) / 2
    for i in range(3):
        columns[f"estimate.position[{i}]"] = position[:, i]
        columns[f"estimate.velocity[{i}]"] = velocity[:, i]
    for i, v in enumerate((0.0, 0.0, math.sin(half), math.cos(half))):  # x, y, z, w
        columns[f"estimate.attitude[{i}]"] = np.full_like(t, v)
    columns["estimate_status"] = np.where(valid, 1 | 2 | 4 | 8 | 16 | 64 | 128, 1 | 2).astype(np.int32)
    path.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path / "record.parquet")
    return path


def _message(kind: str, body: bytes) -> bytes:
    return struct.pack("<HB", len(body), ord(kind)) + body


LOCAL_FORMAT = ("vehicle_local_position:uint64_t timestamp;float x;float y;float z;float vx;float vy;float vz;"
                "bool xy_valid;bool z_valid;bool v_xy_valid;uint8_t xy_reset_counter;uint8_t z_reset_counter;")
ATTITUDE_FORMAT = "vehicle_attitude:uint64_t timestamp;float[4] q;"


def write_ulog(path: Path, shift_us: int = 0):
    """A ULog (format version 1) with PX4's two topics, as PX4's logger writes them."""
    data = b"ULog\x01\x12\x35\x01" + struct.pack("<Q", 0)
    data += _message("B", bytes(16) + bytes(24))
    data += _message("F", LOCAL_FORMAT.encode()) + _message("F", ATTITUDE_FORMAT.encode())
    data += _message("A", struct.pack("<BH", 0, 1) + b"vehicle_local_position")
    data += _message("A", struct.pack("<BH", 0, 2) + b"vehicle_attitude")
    for j in range(1, 21):
        t = np.array([0.1 * j])
        valid = j >= 8
        p = truth_ned(t)[0] + (np.array([0.3, 0.4, 0.6 if j == 15 else 0.2]) if valid else 50.0)
        v = truth_velocity_ned(t)[0] + np.array([0.0, 0.0, 0.1])
        data += _message("D", struct.pack("<HQ6f3?2B", 1, 100_000 * j + shift_us, *p, *v, valid, valid, valid, 0, 0))
    for j in range(20):
        heading = 92.0 if j >= 8 else 180.0
        half = math.radians(heading) / 2
        data += _message("D", struct.pack("<HQ4f", 2, 100_000 * j + 20_000 + shift_us, math.cos(half), 0.0, 0.0,
                                          math.sin(half)))
    path.write_bytes(data)
    return path


@pytest.fixture(scope="module")
def flight(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    return write_record(folder / "run"), write_ulog(folder / "px4.ulg")


def test_both_estimators_are_measured_on_the_same_ticks_from_when_both_are_valid(flight):
    run, ulog = flight
    result = tool.compare(tool.read_run(run), tool.read_ulog(ulog))
    valid = result["windows"]["valid"]
    assert valid["start_s"] == pytest.approx(0.8) and valid["end_s"] == pytest.approx(2.0)
    px4, nexus = valid["px4"], valid["nexus"]
    assert px4["samples"] == nexus["samples"] == 13  # 0.8, 0.9, ..., 2.0 s
    assert px4["attitude_samples"] == nexus["attitude_samples"] == 12  # 0.82, 0.92, ..., 1.92 s
    # PX4: (0.3, 0.4) m horizontally; down 0.2 m on 12 samples and 0.6 m on one: sqrt((12 * 0.04 + 0.36) / 13).
    assert px4["horizontal_rms"] == pytest.approx(0.5, abs=1e-6)
    assert px4["horizontal_max"] == pytest.approx(0.5, abs=1e-6)
    assert px4["vertical_rms"] == pytest.approx(0.254196, abs=1e-5)
    assert px4["vertical_max"] == pytest.approx(0.6, abs=1e-6)
    assert px4["velocity_rms"] == pytest.approx(0.1, abs=1e-6)
    assert px4["attitude_rms"] == pytest.approx(2.0, abs=1e-4) and px4["attitude_max"] == pytest.approx(2.0, abs=1e-4)
    assert nexus["horizontal_rms"] == pytest.approx(0.1, abs=1e-6)
    assert nexus["vertical_rms"] == pytest.approx(0.05, abs=1e-6)
    assert nexus["velocity_max"] == pytest.approx(0.2, abs=1e-6)
    assert nexus["attitude_rms"] == pytest.approx(1.0, abs=1e-4)
    assert valid["px4_resets_in_window"] == 0


def test_the_airborne_window_is_where_the_truth_is_above_half_a_metre(flight):
    run, ulog = flight
    airborne = tool.compare(tool.read_run(run), tool.read_ulog(ulog))["windows"]["airborne"]
    # 0.5 m above the start at 1.5 s: the first tick above it is 1.504 s; PX4's samples 1.6 ... 2.0 s.
    assert airborne["start_s"] == pytest.approx(1.504) and airborne["px4"]["samples"] == 5
    assert airborne["px4"]["vertical_rms"] == pytest.approx(0.2, abs=1e-5)  # the 0.6 m sample at 1.5 s is outside
    assert airborne["px4"]["vertical_max"] == pytest.approx(0.2, abs=1e-5)


def test_a_given_start_widens_the_window_onto_the_invalid_samples(flight):
    run, ulog = flight
    early = tool.compare(tool.read_run(run), tool.read_ulog(ulog), start_s=0.7)["windows"]["valid"]
    assert early["px4"]["samples"] == 14
    assert early["px4"]["horizontal_max"] == pytest.approx(math.hypot(50.0, 50.0), abs=1e-4)


def test_a_log_whose_samples_fall_between_ticks_is_not_this_flight(flight, tmp_path):
    run, _ = flight
    shifted = write_ulog(tmp_path / "shifted.ulg", shift_us=2000)
    with pytest.raises(SystemExit, match="no tick of the record within"):
        tool.compare(tool.read_run(run), tool.read_ulog(shifted))


def test_the_table_has_a_row_per_figure_and_a_column_per_estimator_and_window(flight):
    run, ulog = flight
    text = tool.table(tool.compare(tool.read_run(run), tool.read_ulog(ulog)))
    assert "| Nexus EKF (valid) | PX4 EKF2 (valid) | Nexus EKF (airborne) | PX4 EKF2 (airborne) |" in text
    assert "| vertical position max [m] | 0.050 | 0.600 | 0.050 | 0.200 |" in text


# ---- PX4's EKF2 parameters from the EKF's tuning ----------------------------------------------------------------


def test_ekf2_parameters_carry_the_tuning_over_by_name_and_translate_the_rest():
    values = {**EKF_SPEC.defaults(), "gyro_noise": 0.02, "gps_delay": 0.11, "fuse_mag": False, "fuse_range": True,
              "no_aid_timeout": 2.5}
    params = ekf2_parameters(values)
    assert params["EKF2_GYR_NOISE"] == 0.02 and params["EKF2_BARO_NOISE"] == 3.5 and params["EKF2_HDG_GATE"] == 2.6
    assert params["EKF2_NOAID_NOISE"] == 10.0
    assert params["EKF2_GPS_DELAY"] == 110.0  # ms
    assert params["EKF2_NOAID_TOUT"] == 2_500_000  # us
    assert params["EKF2_MAG_TYPE"] == 5 and params["EKF2_RNG_CTRL"] == 2
    assert params["EKF2_GPS_CTRL"] == 7 and params["EKF2_BARO_CTRL"] == 1
    assert ekf2_parameters(EKF_SPEC.defaults())["EKF2_MAG_TYPE"] == 1  # heading fusion, as Nexus fuses


def test_the_vehicle_files_estimator_prim_gives_the_values():
    stage = Usd.Stage.CreateInMemory()
    prim = stage.DefinePrim("/vehicle/estimator", "Xform")
    prim.SetMetadata("apiSchemas", Sdf.TokenListOp.CreateExplicit(["NexusTruthEstimatorAPI"]))
    prim.CreateAttribute("nexus:EKF2_BARO_NOISE", Sdf.ValueTypeNames.Float).Set(1.5)
    params = vehicle_ekf2_parameters(stage, "mem.usda")
    assert params["EKF2_BARO_NOISE"] == 1.5 and params["EKF2_ACC_NOISE"] == 0.35


# ---- the EKF as a recorded observer beside PX4 -------------------------------------------------------------------


def fly_px4(tmp_path, estimator, seconds=0.5):
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    flight = build_flight(RunConfig(controller="px4", controller_options=options, estimator=estimator), "cpu")
    plan = flight.loop.plan.text()
    row = lambda n: None if n <= 10 else [0.0] * 16  # noqa: E731 (PX4's boot silence, then motors off)
    with ScriptedPx4(flight.vehicle.controller.link.port, row).running():
        run_flight(replace(flight.options, device="cpu", duration=seconds), tmp_path, progress=False, flight=flight)
    return plan, read_record(tmp_path / "record.parquet")


def test_the_ekf_flies_beside_px4_as_a_recorded_observer(tmp_path):
    plan, table = fly_px4(tmp_path / "ekf", "ekf")
    assert "-> gps -> ekf_estimate -> px4_row) host(exchange)" in plan
    assert table.num_rows == 125
    # At rest on the ground: aligned from the first samples, its height within a metre of the start.
    status = table["estimate_status" if "estimate_status" in table.column_names else "ekf_status"].to_numpy()
    assert (status[-1] & 3) == 3
    assert abs(table["estimate.position[2]"].to_numpy()[-1]) < 1.0
    # (Without --estimator ekf the vehicle file's estimator is still skipped on a PX4 run: test_lockstep's plan.)
