"""``nexus replay`` checks what it is given before it flies, compares what it says, and cleans up.

One short PID run (shortened mission, 0.5 s) flies a copy of the shipped vehicle and scene,
so a test can change those files on disk; every other check tampers with a copy of its folder.
"""

import json
import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.config import RunConfig
from nexus.runtime.replay import ReplayError, compare, replay
from nexus.runtime.run import run_flight

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def pid_run(tmp_path_factory):
    assets = tmp_path_factory.mktemp("assets")
    vehicle = shutil.copy(ROOT / "vehicles" / "astro_max_base.usda", assets / "astro_max_base.usda")
    scene = shutil.copy(ROOT / "scenes" / "empty.usda", assets / "empty.usda")
    out = tmp_path_factory.mktemp("pid") / "run"
    options = RunConfig(vehicle=str(vehicle), scene=str(scene), mission="short", seed=4, device="cpu", duration=0.5)
    summary = run_flight(options, out, progress=False)
    assert summary.ticks == 125  # 0.5 s at 250 Hz
    return out, Path(vehicle), Path(scene)


def copy_of(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(run, target)
    return target


def test_a_pid_replay_compares_all_but_the_guidance_columns_and_leaves_no_scratch(pid_run, tmp_path, monkeypatch):
    out, _, _ = pid_run
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))  # where mkdtemp puts the replay's folder
    result = replay(out)
    assert result.identical, result.first_difference
    # Open loop the recorded controls replace the controller and the guidance is dropped, so
    # nothing writes the setpoint (position goal NED, heading), the armed flag or the mission's phase:
    # exactly these six columns go uncompared, and the replay produces no column the record lacks.
    assert result.not_compared == [
        "setpoint.position[0]", "setpoint.position[1]", "setpoint.position[2]", "setpoint.yaw", "armed",
        "mission_phase",
    ]
    assert result.not_recorded == []
    assert "controls[0]" in result.compared and "estimate.position[2]" in result.compared
    assert list(scratch.iterdir()) == []  # the scratch folder is gone


def test_compare_reports_columns_only_the_replay_produced():
    recorded = {"time": np.arange(3.0), "armed": np.zeros(3, np.float32)}
    replayed = {"time": np.arange(3.0), "imu.accel[0]": np.ones(3, np.float32)}
    result = compare(recorded, replayed)
    assert result.compared == ["time"] and result.not_compared == ["armed"]
    assert result.not_recorded == ["imu.accel[0]"] and result.identical


def rewrite_record(out: Path, table) -> None:
    """Replace the record folder by one part holding ``table``."""
    shutil.rmtree(out / "record.parquet")
    (out / "record.parquet").mkdir()
    pq.write_table(table, out / "record.parquet" / "part-000001.parquet")


def test_a_record_cut_short_is_refused_with_both_counts(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    rewrite_record(out, pq.read_table(out / "record.parquet").slice(0, 100))  # 100 of 125 rows
    with pytest.raises(ReplayError, match=r"holds 100 rows but .*run.json says the run flew 125 ticks and recorded 125"):
        replay(out)


def test_a_record_with_a_row_more_than_run_json_says_is_refused(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    table = pq.read_table(out / "record.parquet")
    rewrite_record(out, pa.concat_tables([table, table.slice(124, 1)]))  # a row appended: 126 rows
    with pytest.raises(ReplayError, match=r"holds 126 rows but .*run.json says the run flew 125 ticks and recorded 125"):
        replay(out)


def test_a_run_json_that_counts_fewer_ticks_than_the_record_is_refused(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    info = json.loads((out / "run.json").read_text())
    info["ticks"] = info["record_rows"] = 124
    (out / "run.json").write_text(json.dumps(info))
    with pytest.raises(ReplayError, match=r"holds 125 rows but .*run.json says the run flew 124 ticks and recorded 124"):
        replay(out)


def test_a_killed_run_replays_the_ticks_its_record_holds(pid_run, tmp_path):
    # What SIGKILL between a part's rename and run.json's rewrite leaves: run.json says running, a drain behind.
    out = copy_of(pid_run[0], tmp_path)
    rewrite_record(out, pq.read_table(out / "record.parquet").slice(0, 90))
    info = json.loads((out / "run.json").read_text())
    info.update(status="running", ticks=64, record_rows=64, pid=2**22 + 1)  # no such process
    (out / "run.json").write_text(json.dumps(info))
    result = replay(out)
    assert result.identical, result.first_difference
    assert result.ticks == 90
    assert result.note == "the run was killed (its run.json still says running): using the 90 ticks its record holds so far"


def test_a_killed_run_whose_record_is_short_of_run_json_is_refused(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    rewrite_record(out, pq.read_table(out / "record.parquet").slice(0, 50))
    info = json.loads((out / "run.json").read_text())
    info.update(status="running", ticks=64, record_rows=64)
    (out / "run.json").write_text(json.dumps(info))
    with pytest.raises(ReplayError, match=r"holds 50 rows but .*run.json says the killed run had recorded 64"):
        replay(out)


def test_a_half_written_part_is_a_clear_error(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    part = out / "record.parquet" / "part-000001.parquet"
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    with pytest.raises(ReplayError, match=r"record.parquet cannot be read .*cut short"):
        replay(out)


def test_a_broken_run_json_is_a_clear_error(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    text = (out / "run.json").read_text()
    (out / "run.json").write_text(text[: len(text) // 2])
    with pytest.raises(ReplayError, match=r"run.json is not valid JSON \(.*line \d+"):
        replay(out)


def test_a_run_of_no_tick_has_nothing_to_replay(tmp_path):
    with pytest.raises(Exception, match="astro_mini"):
        run_flight(RunConfig(vehicle="astro_mini", device="cpu", duration=1.0), tmp_path / "failed", progress=False)
    with pytest.raises(ReplayError, match=r"a run of 0 ticks \(exit_reason 'build-error'\): nothing to replay"):
        replay(tmp_path / "failed")


@pytest.mark.parametrize("role", ["vehicle", "scene"])
def test_a_changed_vehicle_or_scene_file_is_named(pid_run, role):
    out, vehicle, scene = pid_run
    path = {"vehicle": vehicle, "scene": scene}[role]
    original = path.read_bytes()
    try:
        path.write_bytes(original + b"\n# edited after the run\n")
        with pytest.raises(ReplayError, match=rf"the {role} file {path} changed since the run \(sha256 then "):
            replay(out)
    finally:
        path.write_bytes(original)


def test_cli_replay_of_a_cut_record_exits_2_without_a_traceback(pid_run, tmp_path):
    out = copy_of(pid_run[0], tmp_path)
    info = json.loads((out / "run.json").read_text())
    info["record_rows"] = info["ticks"] = 2267  # the record now holds fewer rows than run.json says
    (out / "run.json").write_text(json.dumps(info))
    result = CliRunner().invoke(main, ["replay", str(out)])
    assert result.exit_code == 2, result.output
    assert "holds 125 rows" in result.output and "2267 ticks" in result.output
    assert "Traceback" not in result.output and result.output.count("error:") == 1
