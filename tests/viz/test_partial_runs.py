"""``nexus plot`` and ``nexus view`` show what a killed or terminated run left: its ticks, and one line saying so."""

import json
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main


def stopped_copy(run: Path, folder: Path, rows: int, **run_json) -> Path:
    """A copy of ``run`` cut to its first ``rows`` ticks, with run.json fields changed as a stop leaves them."""
    out = folder / "stopped"
    shutil.copytree(run, out, ignore=shutil.ignore_patterns("plots", "report*", "*.png"))
    table = pq.read_table(out / "record.parquet").slice(0, rows)
    shutil.rmtree(out / "record.parquet")
    (out / "record.parquet").mkdir()
    pq.write_table(table.slice(0, 0), out / "record.parquet" / "part-000000.parquet")
    pq.write_table(table, out / "record.parquet" / "part-000001.parquet")
    info = json.loads((out / "run.json").read_text())
    info.update(run_json)
    (out / "run.json").write_text(json.dumps(info))
    return out


def test_plot_of_a_killed_run_draws_the_ticks_present_and_says_so(short_run, tmp_path):
    out = stopped_copy(short_run, tmp_path, 1000, status="running", exit_reason=None, ticks=640, record_rows=640,
                       pid=2**22 + 1)
    result = CliRunner().invoke(main, ["plot", str(out)])
    assert result.exit_code == 0, result.output
    note = "the run was killed (its run.json still says running): using the 1000 ticks its record holds so far"
    assert f"note: {note}" in result.output
    assert note in (out / "report.html").read_text()


def test_view_of_a_terminated_run_replays_the_ticks_it_recorded(short_run, tmp_path):
    from nexus.viz.replay_view import open_replay

    out = stopped_copy(short_run, tmp_path, 700, status="terminated", exit_reason="terminated", ticks=700,
                       record_rows=700)
    replay = open_replay(out, "127.0.0.1", 0)
    try:
        assert len(replay.time) == 700 and replay.t1 == pytest.approx(700 * 0.004)
        assert replay.run.note == "the run was terminated after 700 ticks: using the 700 ticks it recorded"
    finally:
        replay.view.close()
