"""Faults met in-process: a disk that refuses a part, signals held during a drain, and ``nexus runs``."""

import errno
import json
import os
import shutil
import signal
import time
from dataclasses import replace

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import nexus.record.writer as writer_module
from nexus.cli import main
from nexus.runtime.config import RunConfig
from nexus.record.durable import WriteFailed, write_atomic
from nexus.runtime.replay import replay
from nexus.runtime.run import run_flight
from nexus.runtime.stopping import StopSignals, Terminated

#: 0.4 s of hold at 250 Hz: 100 ticks, drained 32 at a time.
HOLD = RunConfig(controller="hold", record_capacity=32, device="cpu")


def refuse_parts_after(monkeypatch, whole: int, code: int = errno.ENOSPC):
    """Part files past the first ``whole`` fail with ``code`` (ENOSPC: a full disk), after writing half their bytes.

    Drains come only when the table is full, never on the wall clock (a slow machine's first
    replays can take the 2 s that otherwise start a drain of fewer ticks).
    """
    monkeypatch.setattr(writer_module, "DRAIN_EVERY_S", 1e9)
    real = writer_module.write_atomic
    calls = []

    def write(path, data, sync=True):
        calls.append(path.name)
        if len(calls) > whole:
            temporary = path.with_name(f".{path.name}.tmp")
            temporary.write_bytes(bytes(memoryview(data)[: len(data) // 2]))
            temporary.unlink()  # as write_atomic does when the disk refuses
            raise OSError(code, os.strerror(code), str(temporary))
        real(path, data, sync)

    monkeypatch.setattr(writer_module, "write_atomic", write)
    return calls


def test_a_disk_that_fills_ends_the_run_disk_full_and_keeps_the_parts_before(tmp_path, monkeypatch):
    out = tmp_path / "run"
    calls = refuse_parts_after(monkeypatch, whole=3)  # part 0 (columns), two drains of 32 ticks
    with pytest.raises(WriteFailed) as caught:
        run_flight(replace(HOLD, duration=0.4), out, progress=False)
    assert caught.value.reason == "disk-full"
    assert str(caught.value).startswith(f"the disk holding {out / 'record.parquet'} is full: writing record part "
                                        "part-000003.parquet (32 ticks) needed ")
    assert calls == ["part-000000.parquet", "part-000001.parquet", "part-000002.parquet", "part-000003.parquet"]
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["exit_reason"], info["record_rows"]) == ("failed", "disk-full", 64)
    assert info["ticks"] > 64 and "is full" in info["error"]
    assert sorted(p.name for p in (out / "record.parquet").iterdir()) == [
        "part-000000.parquet", "part-000001.parquet", "part-000002.parquet"]  # nothing half-written
    assert pq.read_table(out / "record.parquet").num_rows == 64
    assert sorted(p.name for p in out.iterdir()) == ["record.parquet", "run.json", "run.log"]  # reserve freed
    monkeypatch.undo()
    result = replay(out)
    assert result.identical and result.ticks == 64
    assert result.note.startswith(f"the run flew {info['ticks']} ticks but could write only 64 (disk-full)")


def test_an_io_error_ends_the_run_write_failed_and_keeps_the_parts_before(tmp_path, monkeypatch):
    out = tmp_path / "run"
    refuse_parts_after(monkeypatch, whole=2, code=errno.EIO)
    with pytest.raises(WriteFailed) as caught:
        run_flight(replace(HOLD, duration=0.4), out, progress=False)
    assert caught.value.reason == "write-failed"
    assert str(caught.value).startswith(f"cannot write record part part-000002.parquet (32 ticks) into "
                                        f"{out / 'record.parquet'} (Input/output error)")
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["exit_reason"], info["record_rows"]) == ("failed", "write-failed", 32)
    assert pq.read_table(out / "record.parquet").num_rows == 32


def test_write_atomic_leaves_the_old_file_when_the_new_one_cannot_be_written(tmp_path, monkeypatch):
    target = tmp_path / "run.json"
    write_atomic(target, b'{"status": "running"}\n')

    def no_room(fd, data):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", no_room)
    with pytest.raises(OSError):
        write_atomic(target, b'{"status": "finished"}\n')
    monkeypatch.undo()
    assert target.read_bytes() == b'{"status": "running"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]  # no temporary file left


def test_a_signal_during_a_drain_waits_for_its_end():
    before = signal.getsignal(signal.SIGTERM)  # the default, or a handler a library put in (Ray's does)
    with StopSignals() as signals:
        with pytest.raises(Terminated):
            with signals.held_back():
                os.kill(os.getpid(), signal.SIGTERM)
                finished = True  # reached: the signal is held while the drain writes
        assert finished
        signals.close()
        os.kill(os.getpid(), signal.SIGINT)  # once closing, held for good: no KeyboardInterrupt
        assert signals.held == signal.SIGINT
    assert signal.getsignal(signal.SIGTERM) is before  # the handlers are put back


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "finished"
    run_flight(replace(HOLD, duration=0.2), out, progress=False)
    return out


def test_nexus_runs_lists_status_ticks_reason_and_size(finished_run, tmp_path):
    root = tmp_path / "all"
    shutil.copytree(finished_run, root / "a-finished")
    killed = root / "b-killed"
    shutil.copytree(finished_run, killed)
    info = json.loads((killed / "run.json").read_text())
    info.update(status="running", exit_reason=None, ticks=32, record_rows=32, pid=2**22 + 1)  # no such process
    (killed / "run.json").write_text(json.dumps(info))
    (root / "c-broken").mkdir()
    (root / "c-broken" / "run.json").write_text('{"status": "runn')
    result = CliRunner().invoke(main, ["runs", str(root)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["run", "status", "ticks", "sim", "[s]", "exit", "reason", "size"]
    assert lines[1].split()[:5] == [str(root / "a-finished"), "finished", "50", "0.20", "duration"]
    assert lines[2].split()[:3] == [str(killed), "killed", "50"]  # the ticks its record holds
    assert lines[3].split()[:2] == [str(root / "c-broken"), "unreadable"]
    size = {name: sum(p.stat().st_size for p in (root / name).rglob("*") if p.is_file()) for name in ("a-finished", "b-killed")}
    assert lines[1].split()[-2:] == [f"{size['a-finished'] / 1000:.1f}", "kB"]
    rows = [json.loads(line) for line in CliRunner().invoke(main, ["runs", str(root), "--json"]).output.splitlines()]
    assert [(r["status"], r["ticks"], r["bytes"]) for r in rows][:2] == [
        ("finished", 50, size["a-finished"]), ("killed", 50, size["b-killed"])]


def test_two_stops_exited_out_of_order_still_let_ctrl_c_interrupt():
    # The outer one exits first (objects closed in the order they were opened): the inner one's exit then puts
    # the outer's handler back, exited. Ctrl-C must still raise KeyboardInterrupt, not be held by a dead run.
    before = signal.getsignal(signal.SIGINT)
    outer, inner = StopSignals(), StopSignals()
    outer.__enter__()
    inner.__enter__()
    outer.close()  # the outer run was closing when it was left: a live one would hold the signal for good
    outer.__exit__(None, None, None)
    inner.__exit__(None, None, None)
    try:
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)  # the handler runs at the next bytecode; the sleep is cut short by the raise
    finally:
        signal.signal(signal.SIGINT, before)
