"""``--shards``: a run's worlds flown in several processes give the record and summary of one process, bit for bit,
and a shard that dies ends the run with one line naming it and a readable folder."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from nexus.runtime.run_folder import RunFolder
from nexus.runtime.shards import shard_ranges
from tests.worlds.flights import bits_differ, fly

SHORT = ("--mission", "short", "--seed", "7", "--duration", "2", "--worlds", "4")


def test_ranges_are_contiguous_even_and_two_worlds_at_least(monkeypatch):
    assert shard_ranges(4, 2) == [(0, 2), (2, 2)]
    assert shard_ranges(10, 3) == [(0, 4), (4, 3), (7, 3)]
    assert shard_ranges(256, 2) == [(0, 128), (128, 128)]
    assert shard_ranges(3, 2) == [(0, 3)]  # a shard of one world would lose its world column: one process
    assert shard_ranges(5, 1) == [(0, 5)]
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert shard_ranges(7, 0) == [(0, 4), (4, 3)]  # 0: one per core


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    return fly(root / "one", *SHORT), fly(root / "two", *SHORT, "--shards", "2")


def test_two_shards_give_the_record_and_summary_of_one_process(both):
    one, two = both
    assert one.record.shape == (2000, 85)  # 500 ticks of 4 worlds
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
