"""``--shards``: a run's worlds flown in several processes give the record and summary of one process, bit for bit,
joined while they fly; ``auto`` picks the count; the run prints one progress line for all shards and run.log says
when each started and ended; a shard that dies ends the run with one line naming it and a readable folder; a
killed parent leaves a valid run.json, readable parts and no shard flying."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.record.parts import part_paths
from nexus.runtime.config import RunConfig
from nexus.runtime.run_folder import RunFolder
from nexus.runtime.shard_join import RecordJoin
from nexus.runtime.shard_reports import ShardReporter, ShardReports, run_sim_time
from nexus.runtime.shards import _Shard, _join_frames, shard_count, shard_ranges, sharded
from tests.worlds.flights import Flown, bits_differ, fly

SHORT = ("--mission", "short", "--seed", "7", "--duration", "2", "--worlds", "4")


def test_ranges_are_contiguous_even_and_two_worlds_at_least():
    assert shard_ranges(4, 2) == [(0, 2), (2, 2)]
    assert shard_ranges(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert shard_ranges(256, 2) == [(0, 128), (128, 128)]
    assert shard_ranges(3, 2) == [(0, 3)]  # a shard of one world would lose its world column: one process
    assert shard_ranges(5, 1) == [(0, 5)]
    assert shard_ranges(7, 0, cores=2) == [(0, 4), (4, 3)]  # 0: one per core
    assert shard_ranges(7, 0, cores=1) == [(0, 7)]


def test_auto_takes_a_process_per_2_million_world_ticks_at_most_one_per_core():
    assert RunConfig().shards == "auto"
    assert not sharded(RunConfig())  # the default run: one world, one process
    assert not sharded(RunConfig(worlds=1024, duration=4.0))  # 1024 x 1000 ticks: one process
    assert shard_count(1, "auto", ticks=10**9, cores=2) == 1
    assert shard_count(1024, "auto", ticks=3906, cores=2) == 1  # 3,999,744 world-ticks: under 2 x 2 M
    assert shard_count(1024, "auto", ticks=3907, cores=2) == 2  # 4,000,768
    assert shard_count(256, "auto", ticks=15_000, cores=2) == 1  # the default 60 s at 250 Hz: 3.84 M, one process
    assert shard_count(4096, "auto", ticks=15_000, cores=2) == 2  # never more than the cores
    assert shard_count(4096, "auto", ticks=15_000, cores=64) == 30  # 61.44 M / 2 M
    assert shard_count(4, "auto", ticks=10**9, cores=64) == 2  # two worlds a shard at least
    assert shard_ranges(1000, "auto", ticks=5000, cores=2) == [(0, 500), (500, 500)]
    assert shard_count(64, 1, cores=2) == 1 and shard_count(64, 2, cores=2) == 2  # a count is itself


def test_the_command_line_takes_a_count_or_auto():
    runner = CliRunner()
    help_text = " ".join(runner.invoke(main, ["run", "--help"]).output.split())
    assert "auto (a process per 2 M world-ticks, worlds x the duration's ticks, at most one per core" in help_text
    assert "[default: auto]" in help_text
    refused = runner.invoke(main, ["run", "--shards", "many"])
    assert refused.exit_code == 2
    assert "'many': give a whole number of processes (0: one per core) or auto" in refused.output


def test_reports_give_the_world_weighted_sim_time():
    read, write = os.pipe()
    reports, reporter = ShardReports(read), ShardReporter(write, every_s=0.0)
    assert reports.read() is False and reports.started is None
    reporter.started()
    reporter.update(1.5)
    reporter.update(3.0)
    assert reports.read() is True and reports.sim_s == 3.0  # the latest
    os.close(write)
    assert reports.read() is False and reports.fd == -1  # the shard's end closed
    other = ShardReports(os.pipe()[0])
    other.sim_s = 1.0
    assert run_sim_time([reports, other], [6, 2]) == 2.5  # (6 x 3.0 + 2 x 1.0) / 8


def _ticks(first: int, last: int, worlds: int) -> pa.Table:
    """A shard's rows for ticks first..last [time = tick x 0.5 s], worlds 0..worlds-1 within each tick."""
    ticks = np.repeat(np.arange(first, last + 1), worlds)
    return pa.table({"time": ticks * 0.5, "world": np.tile(np.arange(worlds, dtype=np.int32), last - first + 1),
                     "x": ticks * 10.0})


def _part(folder: Path, index: int, table: pa.Table) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / f"part-{index:06d}.parquet")


def test_the_join_writes_only_rows_no_flying_shard_can_precede(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    join = RecordJoin(tmp_path / "out", [(a, 0), (b, 2)], part_rows=8, every_s=1e9)
    _part(a, 0, _ticks(1, 1, 2).slice(0, 0))
    _part(a, 1, _ticks(1, 3, 2))
    _part(a, 2, _ticks(4, 5, 2))  # shard a flies ahead
    assert join.pull([False, False]) is False  # shard b has drained nothing: no row is final
    assert join.read == [2, 0] and sum(t.num_rows for t in join.held[0]) == 6  # a's part 2 stays on disk
    assert [p.name for p in part_paths(tmp_path / "out")] == ["part-000000.parquet"]  # the columns, no row
    _part(b, 0, _ticks(1, 1, 2).slice(0, 0))
    _part(b, 1, _ticks(1, 2, 2))
    assert join.pull([False, False]) is True  # ticks 1 and 2 of all four worlds: 8 rows, one full part
    first = pq.read_table(tmp_path / "out" / "part-000001.parquet").to_pydict()
    assert first["time"] == [0.5] * 4 + [1.0] * 4
    assert first["world"] == [0, 1, 2, 3] * 2  # shard b's worlds counted from 2
    assert join.ready_rows == 0 and sum(t.num_rows for t in join.held[0]) == 2  # a's tick 3 waits for b's
    assert join.read == [2, 2]  # a's part 2 not read while its tick 3 is held
    _part(b, 2, _ticks(3, 5, 2))
    assert join.pull([True, False]) is True  # a ended: b's last row (tick 5) bounds; 12 rows, one full part
    assert join.ready_rows == 4 and join.written_time == 2.0
    join.finish()
    whole = pq.read_table(tmp_path / "out").to_pydict()
    assert whole["time"] == list(np.repeat(np.arange(1, 6) * 0.5, 4))
    assert whole["world"] == [0, 1, 2, 3] * 5 and whole["x"] == list(np.repeat(np.arange(1, 6) * 10.0, 4))
    assert join.rows == 20 and join.parts == 4  # columns, 8, 8, 4


def _fly_with_progress(out: Path, *args: str) -> Flown:
    """``nexus run ARGS --out OUT`` on the CPU with its progress line (``fly`` passes --quiet)."""
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--out", str(out), *args])
    assert result.exit_code == 0, result.output
    return Flown(out, json.loads((out / "run.json").read_text()), pd.read_parquet(out / "record.parquet"),
                 pd.read_parquet(out / "summary.parquet"), result.exit_code, result.output)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    return fly(root / "one", *SHORT), _fly_with_progress(root / "two", *SHORT, "--shards", "2")


def test_two_shards_give_the_record_and_summary_of_one_process(both):
    one, two = both
    assert len(one.record) == 2000  # 500 ticks of 4 worlds
    assert list(two.record.columns) == list(one.record.columns)
    assert bits_differ(two.record, one.record) == []
    assert list(two.summary.world) == [0, 1, 2, 3]
    text = ["exit_reason"]  # words, compared as words; every other column by its bits
    assert list(two.summary.exit_reason) == list(one.summary.exit_reason) == ["duration"] * 4
    assert bits_differ(two.summary.drop(columns=text), one.summary.drop(columns=text)) == []


def test_the_sharded_run_json_is_the_run_of_all_worlds(both):
    one, two = both
    assert two.info["status"] == "finished" and two.info["exit_reason"] == "duration"
    assert two.info["worlds"] == 4 and two.info["ticks"] == 500 and two.info["record_rows"] == 2000
    assert two.info["options"]["shards"] == 2 and "shards" not in one.info["options"]
    assert two.info["stage_plan"] == one.info["stage_plan"]
    assert two.info["world_values"] == one.info["world_values"]
    assert two.info["ned_origins_enu_m"] == one.info["ned_origins_enu_m"]
    assert two.info["crash"] == one.info["crash"]
    assert [(s["name"], s["first_world"], s["worlds"], s["exit_code"]) for s in two.info["shards"]] == [
        ("shard 0", 0, 2, 0), ("shard 1", 2, 2, 0)]
    assert not (two.out / ".shards").exists()


def test_the_shards_frames_join_into_one_dataset_per_sensor(tmp_path):
    shards = [_Shard(0, 0, 2, tmp_path / ".shards"), _Shard(1, 2, 2, tmp_path / ".shards")]
    for shard in shards:
        dataset = shard.folder / "out" / "frames" / "cam.parquet"
        dataset.mkdir(parents=True)
        table = pa.table({"tick": [5, 5], "world": np.array([0, 1], dtype=np.int32), "color": [b"a", b"b"]})
        pq.write_table(table.replace_schema_metadata({"shape": "[1]"}), dataset / "part-000000.parquet")
        (shard.folder / "out" / "frames" / "cam.mp4").write_bytes(b"preview %d" % shard.index)
    _join_frames(tmp_path, shards)
    joined = pq.read_table(tmp_path / "frames" / "cam.parquet")
    assert joined.column("world").to_pylist() == [0, 1, 2, 3] and joined.column("color").to_pylist() == [b"a", b"b"] * 2
    assert pq.read_schema(tmp_path / "frames" / "cam.parquet" / "part-000001.parquet").metadata[b"shape"] == b"[1]"
    assert (tmp_path / "frames" / "shard-1-cam.mp4").read_bytes() == b"preview 1"


def test_run_log_says_when_each_shard_flew_and_ended(both):
    _, two = both
    text = (two.out / "run.log").read_text()
    for name, worlds in (("shard 0", "worlds 0-1"), ("shard 1", "worlds 2-3")):
        assert f"{name} ({worlds}) flying, " in text
        assert f"{name} ({worlds}) ended after " in text and "exit status 0, duration, 500 ticks" in text


def test_a_sharded_run_prints_the_one_progress_line(both):
    _, two = both
    lines = [line for line in two.output.splitlines() if line.startswith("[")]
    assert lines, two.output  # the bar one process prints, for both shards together
    assert lines[-1].startswith("[" + "#" * 30 + "] sim    2.00 s / 2.00 s   RTF")  # every world flew 2 s
    shares = [line.count("#") for line in lines]
    assert shares == sorted(shares)  # it only grows


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as status:
            return not any(line.split()[1:2] == ["Z"] for line in status if line.startswith("State:"))
    except OSError:
        return False


KILLED_PARENT = """
import sys
from pathlib import Path
from nexus.core.warp_setup import init_warp
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
init_warp(False)
run_flight(RunConfig(mission="short", seed=7, duration=60.0, worlds=4, shards=2, device="cpu", record_capacity=64),
           Path(sys.argv[1]), progress=False)
"""


def _rows_said(out: Path) -> int:
    """run.json's record_rows now (0 while it is missing or being replaced)."""
    try:
        return int(json.loads((out / "run.json").read_text()).get("record_rows", 0))
    except (OSError, ValueError):
        return 0


def test_a_killed_run_leaves_run_json_joined_parts_and_no_shard(tmp_path, both):
    one, _ = both
    out = tmp_path / "killed"
    parent = subprocess.Popen([sys.executable, "-c", KILLED_PARENT, str(out)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    # Two parts of rows joined, and run.json rewritten after at least one (the part is written first, run.json
    # after it: a kill between the two is fair, so the test waits for both rather than race them).
    while not ((out / "record.parquet" / "part-000002.parquet").exists() and _rows_said(out) > 0):
        assert parent.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    parent.kill()
    parent.wait()
    info = json.loads((out / "run.json").read_text())  # whole: written by replacing, part after part
    assert info["status"] == "running" and info["options"]["shards"] == 2
    pids = [row["pid"] for row in info["shards"]]
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in pids):  # SIGTERM reached each shard when its parent died
        assert time.monotonic() < deadline, "a shard flies on after its parent was killed"
        time.sleep(0.1)
    record = pd.read_parquet(out / "record.parquet")
    rows = len(record)
    assert rows >= 2 * 4 and rows % 4 == 0  # two parts (full, or two seconds' worth): whole ticks of four worlds
    assert info["record_rows"] % 4 == 0 and 0 < info["record_rows"] <= rows  # as of the last part it said
    shown = min(rows, len(one.record))
    assert bits_differ(record.iloc[:shown].reset_index(drop=True), one.record.iloc[:shown]) == []


def test_sigterm_ends_a_sharded_run_143_with_its_parts_joined_and_no_shard(tmp_path, both):
    one, _ = both
    out = tmp_path / "stopped"
    parent = subprocess.Popen([sys.executable, "-m", "nexus.cli", "run", "--device", "cpu", "--quiet", "--out", str(out),
                               "--seed", "7", "--mission", "short", "--duration", "60", "--worlds", "4", "--shards", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while not (out / "record.parquet" / "part-000001.parquet").exists():  # the first rows joined
        assert parent.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    pids = [row["pid"] for row in json.loads((out / "run.json").read_text())["shards"]]
    parent.send_signal(signal.SIGTERM)
    _, err = parent.communicate(timeout=120)
    assert parent.returncode == 143, err
    assert not any(_alive(pid) for pid in pids) and not (out / ".shards").exists()
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "terminated" and info["exit_reason"] == "terminated", info
    record = pd.read_parquet(out / "record.parquet")  # every tick each shard drained, joined
    assert len(record) == info["record_rows"] > 0
    assert (np.diff(record.time.to_numpy()) >= 0).all()  # tick by tick
    for world in range(4):  # each shard stopped at a tick of its own: the record's last ticks may lack some worlds
        rows = record[record.world == world].reset_index(drop=True)
        mine = one.record[one.record.world == world].reset_index(drop=True)
        shown = min(len(rows), len(mine))
        assert shown > 0 and bits_differ(rows.iloc[:shown], mine.iloc[:shown]) == []


def _kill_shard_one(out, killed: list) -> None:
    """SIGKILL shard 1's process as soon as run.json names it and it has begun its run."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            info = json.loads((out / "run.json").read_text())
        except (OSError, ValueError):
            info = {}
        if len(info.get("shards", [])) == 2 and (out / ".shards" / "shard-1" / "out" / "run.json").exists():
            pid = info["shards"][1]["pid"]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
            return
        time.sleep(0.01)


def test_a_killed_shard_ends_the_run_naming_it(tmp_path):
    out = tmp_path / "killed"
    killed: list = []
    watcher = threading.Thread(target=_kill_shard_one, args=(out, killed))
    watcher.start()
    flown = fly(out, "--seed", "7", "--duration", "60", "--worlds", "4", "--shards", "2", expect=1)
    watcher.join()
    assert len(killed) == 1
    line = "error: shard 1 (worlds 2-3 of 4) was killed by SIGKILL; the run stopped there"
    assert line in flown.output.splitlines()
    folder = RunFolder(out).require(record=True)
    assert folder.info["status"] == "failed" and folder.info["exit_reason"] == "shard-failed"
    assert folder.info["error"] == line.removeprefix("error: ")
    assert folder.info["shards"][1]["pid"] == killed[0] and folder.info["shards"][1]["exit_code"] == -9
    record = folder.record()  # what shard 0 drained before it was stopped: readable, and only its worlds
    if record.num_rows:
        assert set(np.unique(record.column("world").to_numpy())) <= {0, 1}
    assert not (out / ".shards").exists()
