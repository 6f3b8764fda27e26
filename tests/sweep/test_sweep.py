"""``nexus sweep`` on a local Ray instance of 2 CPUs: ordinary run folders, a killed worker, a resume, failures."""

import json
import os
import signal
import threading
import time

import pyarrow.parquet as pq
from click.testing import CliRunner

from nexus.cli import main
from nexus.runtime.runs import whole_files
from nexus.sweep.runner import SweepOptions, run_sweep
from tests.sweep.conftest import write_sweep

#: Seeds x two hover commands: 16 points of 1 s of the short mission each.
SIXTEEN = """
[run]
mission = "short"
duration = 1.0
device = "cpu"

[grid]
seed = [0, 1, 2, 3, 4, 5, 6, 7]
"/vehicle/controller nexus:hoverThrust" = [0.56, 0.572]
"""
GAIN = "/vehicle/controller nexus:hoverThrust"


def _kill_first_running_worker(runs, stop: threading.Event) -> dict:
    """SIGKILL the worker of the first run seen flying (its run.json says running, with its pid)."""
    killed = {}
    while not stop.is_set():
        for path in runs.glob("*/run.json"):
            try:
                info = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if info.get("status") == "running":
                os.kill(info["pid"], signal.SIGKILL)
                killed.update(point=path.parent.name, pid=info["pid"])
                return killed
        time.sleep(0.01)
    return killed


def test_sixteen_points_survive_a_killed_worker_and_a_resume(tmp_path, ray_cpus):
    path = write_sweep(tmp_path, SIXTEEN)
    out = tmp_path / "sweep"
    stop = threading.Event()
    killed: dict = {}
    killer = threading.Thread(target=lambda: killed.update(_kill_first_running_worker(out / "runs", stop)))
    killer.start()
    try:
        result = run_sweep(path, SweepOptions(out=out, progress=False))
    finally:
        stop.set()
        killer.join()

    # Every point once, every run finished: the killed one was flown again by Ray's retry, in a new worker.
    assert killed, "no run was seen flying"
    assert len(result.rows) == 16 and result.failed == 0
    table = pq.read_table(out / "sweep.parquet").to_pylist()
    assert len({row["point"] for row in table}) == 16
    assert sorted((row["seed"], row[GAIN]) for row in table) == [(s, g) for s in range(8) for g in (0.56, 0.572)]
    assert {row["status"] for row in table} == {"finished"}
    again = json.loads((out / "runs" / killed["point"] / "run.json").read_text())
    assert again["status"] == "finished" and again["pid"] != killed["pid"]
    for row in table:
        folder = out / row["folder"]
        # An ordinary run folder: run.json, the record and the log, plus the override layer it flew.
        assert {"run.json", "record.parquet", "run.log"} <= set(whole_files(folder))
        info = json.loads((folder / "run.json").read_text())
        assert info["options"]["seed"] == row["seed"] and info["vehicle"]["path"] == str(folder / "vehicle.usda")
        assert f"nexus:hoverThrust = {row[GAIN]}" in (folder / "vehicle.usda").read_text()
        assert row["sim_time_s"] == 1.0 and row["ticks"] == 250
        assert 0.0 <= row["max_altitude_error"] < 5.0 and row["rtf"] > 0.0

    # Half-written folders: one whose run.json says running (its process gone), one without run.json.
    half, gone = table[3]["folder"], table[9]["folder"]
    info = json.loads((out / half / "run.json").read_text())
    (out / half / "run.json").write_text(json.dumps({**info, "status": "running", "pid": killed["pid"]}))
    (out / gone / "run.json").unlink()
    kept = {row["folder"]: (out / row["folder"] / "run.json").stat().st_mtime_ns
            for row in table if row["folder"] not in (half, gone)}

    resumed = run_sweep(path, SweepOptions(out=out, resume=True, progress=False))
    assert resumed.skipped == 14 and len(resumed.rows) == 16 and resumed.failed == 0
    assert sorted(r["folder"] for r in resumed.rows if not r.get("resumed")) == sorted([half, gone])
    for folder, mtime in kept.items():  # the finished runs were not flown again
        assert (out / folder / "run.json").stat().st_mtime_ns == mtime
    assert json.loads((out / half / "run.json").read_text())["status"] == "finished"
    assert pq.read_table(out / "sweep.parquet").num_rows == 16


def test_a_failing_run_is_recorded_and_the_sweep_goes_on_and_exits_1(tmp_path, ray_cpus):
    # A hover command of 1.5 is outside (0, 1): that point's build fails; the other flies.
    path = write_sweep(tmp_path, '[run]\nmission = "short"\nduration = 0.5\ndevice = "cpu"\n'
                                 '[grid]\n"/vehicle/controller nexus:hoverThrust" = [0.572, 1.5]\n')
    out = tmp_path / "sweep"
    result = CliRunner().invoke(main, ["sweep", str(path), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    rows = {row[GAIN]: row for row in pq.read_table(out / "sweep.parquet").to_pylist()}
    assert rows[0.572]["status"] == "finished"
    assert rows[1.5]["status"] == "failed" and rows[1.5]["exit_reason"] == "build-error"
    assert "hoverThrust" in rows[1.5]["error"]
    assert "1 failed" in result.output
    # nexus plot on the sweep folder: each figure against the varied parameter, the failed point listed.
    plotted = CliRunner().invoke(main, ["plot", str(out)])
    assert plotted.exit_code == 0, plotted.output
    assert (out / "plots" / "sweep_max_altitude_error_vs_0.png").stat().st_size > 0
    page = (out / "report.html").read_text()
    assert "2 points, 1 failed" in page and "build-error" in page


def test_random_draws_are_seeded_and_their_ids_are_their_configuration(tmp_path):
    from nexus.sweep.points import expand
    from nexus.sweep.spec import parse

    text = '[random]\ncount = 6\nrandom_seed = 3\nseed = {low = 0, high = 1000}\ntick_hz = [250.0, 500.0]\n'
    first = expand(parse(write_sweep(tmp_path, text)))
    second = expand(parse(write_sweep(tmp_path, text, "again.toml")))
    assert [p.values for p in first] == [p.values for p in second]
    assert [p.id for p in first] == [p.id for p in second]
    assert len({p.id for p in first}) == len(first)
    assert all(0 <= p.values["seed"] <= 1000 and p.config.tick_hz in (250.0, 500.0) for p in first)


def test_a_cluster_run_sends_its_files_back_to_the_sweep_folder(tmp_path, ray_cpus):
    # ship: as on a cluster whose workers do not share this disk: the run is written in the worker's scratch
    # folder and its files come back through Ray into DIR/runs/<id>/; nothing is left in the scratch folder.
    import tempfile

    path = write_sweep(tmp_path, '[run]\nmission = "short"\nduration = 0.3\ndevice = "cpu"\n[grid]\n'
                                 '"/vehicle/controller nexus:hoverThrust" = [0.572]\n')
    before = set(os.listdir(tempfile.gettempdir()))
    result = run_sweep(path, SweepOptions(out=tmp_path / "sweep", ship=True, progress=False))
    folder = tmp_path / "sweep" / result.rows[0]["folder"]
    assert result.failed == 0
    assert {"run.json", "record.parquet", "run.log"} <= set(whole_files(folder))
    assert (folder / "vehicle.usda").is_file() and (folder / "point.json").is_file()
    assert pq.read_table(folder / "record.parquet").num_rows == 75  # 0.3 s at 250 Hz
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith("nexus-sweep-")}
    assert not left


def test_a_variation_file_per_point_with_worlds_per_run(tmp_path, ray_cpus):
    # Two variation files, two worlds per run: each point is a many-world run, its row the worst world's figures.
    (tmp_path / "light.toml").write_text("mass = 4.9\n")
    (tmp_path / "heavy.toml").write_text("mass = 5.2\n")
    path = write_sweep(tmp_path, '[run]\nmission = "short"\nduration = 0.5\ndevice = "cpu"\nworlds = 2\n'
                                 '[grid]\nvary = ["light.toml", "heavy.toml"]\n')
    result = run_sweep(path, SweepOptions(out=tmp_path / "sweep", progress=False))
    assert result.failed == 0
    for row in pq.read_table(tmp_path / "sweep" / "sweep.parquet").to_pylist():
        summary = pq.read_table(tmp_path / "sweep" / row["folder"] / "summary.parquet").to_pylist()
        assert [world["vary.mass"] for world in summary] == [4.9 if "light" in row["vary"] else 5.2] * 2
        assert row["worlds_failed"] == 0
        assert row["max_altitude_error"] == max(world["max_altitude_error"] for world in summary)


def test_a_variation_file_changed_at_the_same_path_is_flown_again_on_resume(tmp_path, ray_cpus):
    # The point id hashes the variation file's bytes: the same path with other contents is another point.
    vary = tmp_path / "mass.toml"
    vary.write_text("mass = 4.9\n")
    path = write_sweep(tmp_path, '[run]\nmission = "short"\nduration = 0.2\ndevice = "cpu"\nworlds = 2\n'
                                 'vary = "mass.toml"\n[grid]\nseed = [0]\n')
    out = tmp_path / "sweep"
    first = run_sweep(path, SweepOptions(out=out, progress=False))
    assert first.failed == 0
    vary.write_text("mass = 5.2\n")
    again = run_sweep(path, SweepOptions(out=out, resume=True, progress=False))
    assert again.skipped == 0 and again.failed == 0 and len(again.rows) == 1
    assert again.rows[0]["folder"] != first.rows[0]["folder"]
    for result, mass in ((first, 4.9), (again, 5.2)):  # each folder flew the file as it was then
        summary = pq.read_table(out / result.rows[0]["folder"] / "summary.parquet").to_pylist()
        assert [world["vary.mass"] for world in summary] == [mass, mass]
    assert [row["folder"] for row in pq.read_table(out / "sweep.parquet").to_pylist()] == [again.rows[0]["folder"]]
