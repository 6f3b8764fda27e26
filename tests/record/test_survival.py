"""A run's record survives the process: SIGKILL, SIGTERM (twice), a full disk.

Each test flies a real ``nexus run`` in a child process (the hold controller,
a 3000 s run it never finishes), stops it at a seeded moment, and checks what
any reader is promised: run.json parses; the record reads whole, its ticks in
order one tick apart with none missing; it holds at least the ticks run.json
counts; and those ticks replay bit for bit.
"""

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.runtime.replay import replay

ROOT = Path(__file__).resolve().parents[2]
RUN = ["run", "--controller", "hold", "--duration", "3000", "--device", "cpu", "--quiet"]
#: The default record table: a drain every 40,960 ticks, or sooner after 2 s of wall time.
CAPACITY = 40960


def start(out: Path, slow: tuple[Path, float] | None = None, extra: tuple[str, ...] = ()) -> subprocess.Popen:
    prefix = [sys.executable, "-m", "nexus.cli"]
    if slow is not None:
        prefix = [sys.executable, str(ROOT / "tests" / "record" / "slow_writes.py"), str(slow[0]), str(slow[1])]
    return subprocess.Popen([*prefix, *RUN, "--out", str(out), *extra], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_until(check, child: subprocess.Popen, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if child.poll() is not None:
            raise AssertionError(f"the run ended early ({child.returncode}): {child.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            child.kill()
            raise AssertionError("the run never got there")
        time.sleep(0.02)


def flying(out: Path) -> bool:
    """run.json says the ring is built: the plan is in (a reader may see it at any moment)."""
    try:
        return "stage_plan" in json.loads((out / "run.json").read_text())
    except (OSError, ValueError):
        return False


def drained(out: Path) -> bool:
    """run.json counts ticks on disk: the first drain is done."""
    try:
        return json.loads((out / "run.json").read_text()).get("record_rows", 0) > 0
    except (OSError, ValueError):
        return False


def check_record(out: Path) -> tuple[dict, int]:
    """The invariants every stopped run keeps; returns run.json and the ticks its record holds."""
    info = json.loads((out / "run.json").read_text())  # whole, whatever the moment
    parts = sorted((out / "record.parquet").glob("part-*.parquet"))
    assert parts and parts[0].name == "part-000000.parquet"
    assert [p.name for p in parts] == [f"part-{i:06d}.parquet" for i in range(len(parts))]
    for part in parts:
        pq.read_metadata(part)  # every visible part is a whole Parquet file
    table = pq.read_table(out / "record.parquet")
    rows = table.num_rows
    # Every tick from the first, in order, none missing: tick k is at k * 4 ms.
    np.testing.assert_array_equal(table.column("time").to_numpy(), np.arange(1, rows + 1) * 4_000_000 / 1e9)
    assert rows >= info["record_rows"]
    return info, rows


def check_replays(out: Path, rows: int) -> None:
    result = replay(out)
    assert result.identical, result.first_difference
    assert result.ticks == rows


@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_at_a_random_moment_leaves_every_drained_tick_readable(tmp_path, seed):
    out = tmp_path / "run"
    child = start(out)
    wait_until(lambda: drained(out), child)
    time.sleep(random.Random(seed).uniform(0.0, 3.0))
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    info, rows = check_record(out)
    assert info["status"] == "running"  # nobody wrote the end: the process was killed
    # What was lost is at most one drain: the table's rows, or 2 s of wall time.
    assert 0 < rows <= info["record_rows"] + CAPACITY
    check_replays(out, rows)


def test_sigkill_during_a_drain_leaves_no_half_part_visible(tmp_path):
    out, marker = tmp_path / "run", tmp_path / "draining"
    child = start(out, slow=(marker, 30.0))  # the first data part's fsync waits 30 s
    wait_until(marker.exists, child)
    hidden = [p.name for p in (out / "record.parquet").iterdir() if p.name.startswith(".")]
    assert hidden == [".part-000001.parquet.tmp"]  # written, not yet renamed
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    info, rows = check_record(out)
    assert (info["status"], info["record_rows"], rows) == ("running", 0, 0)  # nothing drained yet; schema intact
    assert pq.read_table(out / "record.parquet").column_names[0] == "time"


def test_sigterm_ends_the_run_like_ctrl_c_with_exit_143_and_closes_the_live_view(tmp_path):
    out = tmp_path / "run"
    child = start(out, extra=("--view", "--view-port", "0"))
    wait_until(lambda: drained(out), child)
    time.sleep(random.Random(3).uniform(0.0, 3.0))
    child.send_signal(signal.SIGTERM)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 143, stderr[-2000:]
    info, rows = check_record(out)
    assert (info["status"], info["exit_reason"]) == ("terminated", "terminated")
    assert rows == info["ticks"] == info["record_rows"] > 0  # every tick flown is in the record
    assert f"terminated after {rows} ticks" in stderr and "exit_reason terminated" in stderr
    closing = [line for line in stderr.splitlines() if "exit_reason terminated" in line]
    assert len(closing) == 1 and closing[0].endswith(f"the run's files are in {out}: run.json, record.parquet, run.log")
    assert stderr.splitlines()[-1].startswith("live view: ")  # the viewer's last word: its server was closed
    check_replays(out, rows)


def test_signals_during_the_last_flush_wait_and_corrupt_nothing(tmp_path):
    out, marker = tmp_path / "run", tmp_path / "draining"
    child = start(out, slow=(marker, 1.0))  # every drain's part takes 1 s to sync
    wait_until(marker.exists, child)  # the first drain is under way
    marker.unlink()
    wait_until(lambda: drained(out), child)  # and done: the next is 10,240 ticks or 2 s of wall time away
    first = json.loads((out / "run.json").read_text())["record_rows"]
    time.sleep(0.2)
    child.send_signal(signal.SIGTERM)  # stops the run between drains; its last drain starts
    wait_until(marker.exists, child)
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGTERM):  # all during that last flush
        child.send_signal(number)
        time.sleep(0.1)
    _, stderr = child.communicate(timeout=60)
    assert child.returncode == 143, stderr[-2000:]
    assert stderr.count("received while the record is being written: finishing that first") == 3
    info, rows = check_record(out)
    assert (info["status"], info["exit_reason"]) == ("terminated", "terminated")
    assert rows == info["ticks"] == info["record_rows"] > first  # the last drain's ticks are in
    assert info["record_parts"] == 3  # part 0, the first drain, the last
    check_replays(out, rows)


def mount_small_disk(where: Path, size: str) -> bool:
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
    return done.returncode == 0


def test_a_full_disk_ends_the_run_disk_full_and_keeps_what_was_written(tmp_path):
    disk = tmp_path / "disk"
    if not mount_small_disk(disk, "12m"):
        pytest.skip("cannot mount a 12 MB tmpfs here (needs root and mount); tests/record/test_full_disk.py "
                    "covers a full disk with an injected ENOSPC")
    try:
        out = disk / "run"
        done = subprocess.run([sys.executable, "-m", "nexus.cli", *RUN, "--out", str(out)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr[-2000:]
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and f"the disk holding {out}/record.parquet is full" in errors[0]
        assert " bytes" in errors[0] and "needed" in errors[0] and "unexpected" not in done.stderr
        info, rows = check_record(out)
        assert (info["status"], info["exit_reason"]) == ("failed", "disk-full")
        assert rows == info["record_rows"] > 0 and info["ticks"] > rows  # flew on past the last whole part
        assert done.stderr.splitlines()[-1].endswith(f"its files are in {out}: run.json, record.parquet, run.log")
        assert not (out / ".nexus-reserve").exists()
        local = tmp_path / "copy"  # the replay reads it from a disk with room
        shutil.copytree(out, local)
        check_replays(local, rows)
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)
