"""What a run leaves in OUT, whatever happens: refused folders, failed builds, warnings, exit reasons."""

import json
import logging
import shutil
from dataclasses import replace
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.runtime.config import RunConfig
from nexus.runtime.run import DurationError, OutputError, run_flight

HOLD = RunConfig(controller="hold", device="cpu")


@pytest.fixture(scope="module")
def held_run(tmp_path_factory):
    """A real 0.2 s hold run (50 ticks at 250 Hz) whose folder tests copy."""
    out = tmp_path_factory.mktemp("held") / "run"
    summary = run_flight(replace(HOLD, duration=0.2), out, progress=False)
    assert summary.exit_reason == "duration" and summary.ticks == 50
    return out


def test_an_out_that_holds_a_run_is_refused_and_left_alone(held_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(held_run, out)
    before = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert "record.parquet/part-000001.parquet" in before
    with pytest.raises(OutputError, match=r"already holds a run \(run.json, record.parquet, run.log\).*--overwrite"):
        run_flight(replace(HOLD, duration=0.2), out, progress=False)
    assert {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_overwrite_clears_the_old_run_even_when_the_new_build_fails(held_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(held_run, out)
    (out / "mission.json").write_text("{}")
    (out / "notes.txt").write_text("mine")
    with pytest.raises(BuildError, match="astro_mini"):
        run_flight(RunConfig(vehicle="astro_mini", device="cpu", duration=0.2), out, progress=False, overwrite=True)
    # The old 50-row record is gone, not left beside the new run.json (nor the hidden reserve); the user's own file stays.
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "record.parquet", "run.json", "run.log"]
    assert pq.read_table(out / "record.parquet").num_rows == 0
    assert (out / "notes.txt").read_text() == "mine"


def test_a_failed_build_leaves_run_json_log_and_an_empty_valid_record(tmp_path, caplog):
    out = tmp_path / "failed"
    with caplog.at_level(logging.INFO):
        with pytest.raises(BuildError, match="unknown vehicle 'astro_mini'"):
            run_flight(RunConfig(vehicle="astro_mini", device="cpu", duration=0.2), out, progress=False)
    info = json.loads((out / "run.json").read_text())
    assert info["exit_reason"] == "build-error" and "unknown vehicle 'astro_mini'" in info["error"]
    assert info["ticks"] == 0 and info["record_rows"] == 0 and info["record_columns"] == []
    # The build failed before the recorder existed: no columns are known, so the record is a
    # folder of one valid part of no rows and no columns.
    assert [p.name for p in (out / "record.parquet").iterdir()] == ["part-000000.parquet"]
    table = pq.read_table(out / "record.parquet")
    assert table.num_rows == 0 and table.num_columns == 0
    # run.log has the error once; the console (the root logger) does not: the caller prints it.
    assert (out / "run.log").read_text().count("unknown vehicle 'astro_mini'") == 1
    assert "astro_mini" not in caplog.text


@pytest.mark.parametrize("bad", ["/proc/nexus-out", "under-a-file"])
def test_an_unusable_out_is_a_clear_error_before_anything_is_built(tmp_path, bad):
    (tmp_path / "a-file").write_text("x")
    out = tmp_path / "a-file" / "run" if bad == "under-a-file" else bad
    expected = r"a-file is a file, not a folder" if bad == "under-a-file" else r"cannot create the output folder /proc/nexus-out"
    with pytest.raises(OutputError, match=expected):
        run_flight(replace(HOLD, duration=0.2), out, progress=False)


@pytest.mark.parametrize("duration, tick_hz, words", [
    (0.001, 250.0, "0 ticks of 4 ms (the tick at 250 Hz)"),  # 0.001 s / 4 ms = 0.25 tick
    (0.004, 100.0, "0 ticks of 10 ms (the tick at 100 Hz)"),  # 0.004 s / 10 ms = 0.4 tick
])
def test_a_duration_under_one_tick_is_an_error_naming_the_tick(tmp_path, duration, tick_hz, words):
    with pytest.raises(DurationError, match=words.replace("(", r"\(").replace(")", r"\)")):
        run_flight(RunConfig(controller="hold", tick_hz=tick_hz, device="cpu", duration=duration), tmp_path / "run",
                   progress=False)
    assert not (tmp_path / "run").exists()  # refused before anything was written


class Grumbles(Component):
    """Logs a warning while the ring is built and another on its first tick."""

    def __init__(self):
        super().__init__("/test/grumbles")
        self.calls = 0

    def stages(self):
        return [Stage("grumble", "guide", self._run, host=True)]

    def prepare(self, ctx):
        logging.getLogger("nexus.test").warning("built with a grumble")

    def _run(self, io):
        self.calls += 1
        if self.calls == 2:  # call 1 is start-up's; call 2 is tick 1
            logging.getLogger("nexus").warning("grumbling on tick 1")
        logging.getLogger("nexus").info("not a warning")


def test_warnings_of_the_build_and_the_run_reach_run_json(tmp_path):
    out = tmp_path / "run"
    summary = run_flight(replace(HOLD, duration=0.02), out, progress=False, extra_components=[Grumbles()])
    info = json.loads((out / "run.json").read_text())
    assert summary.ticks == 5 and info["exit_reason"] == "duration" and info["error"] is None
    assert info["warnings"] == ["built with a grumble", "grumbling on tick 1"]
    assert "grumbling on tick 1" in (out / "run.log").read_text()


def test_the_configuration_is_the_only_source_of_device_and_duration(tmp_path):
    # The old call run_flight(options, device, out, duration) overrode the configuration: it is gone.
    with pytest.raises(TypeError):
        run_flight(HOLD, "cpu", tmp_path / "old", 0.2, progress=False)
    assert not (tmp_path / "old").exists()
    out = tmp_path / "run"
    summary = run_flight(replace(HOLD, duration=0.12), out, progress=False)
    info = json.loads((out / "run.json").read_text())
    # 0.12 s at 250 Hz (4 ms a tick): 30 ticks, the configuration's duration and nothing else.
    assert summary.ticks == 30 and info["ticks"] == 30
    assert info["options"]["duration"] == 0.12 and info["duration_requested_s"] == 0.12
    assert info["options"]["device"] == "cpu" and info["device"] == "cpu"


def test_no_duration_flies_the_controllers_default_and_run_json_says_which(tmp_path, monkeypatch):
    monkeypatch.setattr("nexus.core.device.cuda_available", lambda: False)  # auto: the CPU, on any machine
    out = tmp_path / "run"
    summary = run_flight(RunConfig(controller="hold", device="auto"), out, progress=False)
    info = json.loads((out / "run.json").read_text())
    # hold registers 10 s as its default: 10 s at 250 Hz is 2500 ticks; run.json holds the config as flown.
    assert summary.ticks == 2500 and info["options"]["duration"] == 10.0
    assert info["options"]["device"] == "cpu" and info["device"] == "cpu"


class BreaksAt(Component):
    """Breaks while the ring is built (``prepare``) or at start-up (its host stage's first call); counts its closes."""

    def __init__(self, when: str):
        super().__init__("/test/breaks")
        self.when, self.closed = when, 0

    def stages(self):
        return [Stage("break", "guide", self._run, host=True)]

    def prepare(self, ctx):
        if self.when == "build":
            raise RuntimeError("broke while built")

    def _run(self, io):
        if self.when == "start-up":
            raise RuntimeError("broke at start-up")

    def close(self):
        self.closed += 1


@pytest.mark.parametrize("when", ["build", "start-up"])
def test_a_flight_that_breaks_before_its_first_tick_leaves_a_valid_run_json_and_is_closed_once(tmp_path, when):
    out = tmp_path / "run"
    breaks = BreaksAt(when)
    with pytest.raises(Exception, match=f"broke {'while built' if when == 'build' else 'at start-up'}"):
        run_flight(replace(HOLD, duration=0.2), out, progress=False, extra_components=[breaks])
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["exit_reason"]) == ("failed", "error")
    assert f"broke {'while built' if when == 'build' else 'at start-up'}" in info["error"]
    assert info["ticks"] == 0 and info["record_rows"] == 0 and info["options"]["duration"] == 0.2
    table = pq.read_table(out / "record.parquet")
    assert table.num_rows == 0
    if when == "build":  # no ring: no plan, no columns
        assert "stage_plan" not in info and table.num_columns == 0
    else:  # built: run.json has the plan and the record its columns, and the ring was closed
        assert "host(break)" in info["stage_plan"] and "time" in info["record_columns"] and "time" in table.column_names
        assert breaks.closed == 1
