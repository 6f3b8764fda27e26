"""A build that fails on bad input blocks no later run, and leaves no folder in runs/ (issue 43, point 3).

``nexus run --vehicle x501 --out D`` fails before anything is built. D then holds only the failed build's
run.json (``failed``, 0 ticks, no stage plan), run.log and an empty record: the corrected command takes D
without ``--overwrite``. Without ``--out`` the failed build's folder in ``runs/`` is removed. A run that
was built and then failed is a run: it keeps its files and still blocks ``--out``.
"""

import json

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core import Component, Stage
from nexus.core.errors import RunError
from nexus.runtime.config import RunConfig
from nexus.runtime.run import OutputError, run_flight

HOLD = ["--controller", "hold", "--device", "cpu", "--quiet", "--duration", "0.2"]


def nexus(*args):
    return CliRunner().invoke(main, list(args))


def test_the_corrected_command_takes_the_folder_a_failed_build_left(tmp_path):
    out = tmp_path / "D"
    failed = nexus("run", "--vehicle", "x501", *HOLD, "--out", str(out))
    assert failed.exit_code == 2, failed.output
    assert failed.output.count("error: unknown vehicle 'x501'") == 1
    assert f"its files are in {out}: run.json, record.parquet, run.log (nothing flew: a run into {out} replaces " \
           "them)" in failed.output
    info = json.loads((out / "run.json").read_text())
    assert (info["status"], info["exit_reason"], info["ticks"]) == ("failed", "build-error", 0)
    (out / "notes.txt").write_text("mine")
    again = nexus("run", "--vehicle", "x500", *HOLD, "--out", str(out))
    assert again.exit_code == 0, again.output
    info = json.loads((out / "run.json").read_text())
    # 0.2 s at 250 Hz: 50 ticks, the new run's; its log holds no word of the failed build
    assert (info["status"], info["ticks"], info["options"]["vehicle"]) == ("finished", 50, "x500")
    assert "x501" not in (out / "run.log").read_text()
    assert (out / "notes.txt").read_text() == "mine"
    # and a folder that holds a finished run is still refused
    refused = nexus("run", "--vehicle", "x500", *HOLD, "--out", str(out))
    assert refused.exit_code == 2 and "already holds a run" in refused.output


def test_without_out_a_failed_build_leaves_no_folder_in_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    failed = nexus("run", "--vehicle", "x501", *HOLD)
    assert failed.exit_code == 2, failed.output
    assert failed.output.count("error: unknown vehicle 'x501'") == 1
    assert "nothing flew: no run folder was kept" in failed.output
    assert list((tmp_path / "runs").iterdir()) == []


class BreaksOnTickOne(Component):
    """A host stage that raises on its first call after start-up: the run was built and started."""

    def __init__(self):
        super().__init__("/test/breaks")
        self.calls = 0

    def stages(self):
        return [Stage("breaks", "guide", self._run, host=True)]

    def _run(self, io):
        self.calls += 1
        if self.calls == 2:  # call 1 is start-up's; call 2 is tick 1
            raise RuntimeError("broken on tick 1")


def test_a_run_that_was_built_then_failed_keeps_its_files_and_blocks_out(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(RunError, match="broken on tick 1"):
        run_flight(RunConfig(controller="hold", device="cpu", duration=0.2), out, progress=False,
                   extra_components=[BreaksOnTickOne()])
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed" and "stage_plan" in info
    before = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    with pytest.raises(OutputError, match=r"already holds a run \(run.json, record.parquet, run.log\)"):
        run_flight(RunConfig(controller="hold", device="cpu", duration=0.2), out, progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == before
