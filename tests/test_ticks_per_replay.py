"""Many ticks per replay change nothing a run writes: K = 1 and the loop's own K fly the same bits.

The short mission ends on tick 2257 (9.028 s), which 16 and 7 do not divide, so
with either K the tick that ends the run falls inside a replay, and the
replay's later ticks must leave no trace in the record or in run.json.
"""

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight

ROOT = Path(__file__).resolve().parents[1]


def fly(out: Path, duration: float = 20.0, **options) -> dict:
    run_flight(RunConfig(mission="short", **options, device="cpu", duration=duration), out, progress=False)
    return json.loads((out / "run.json").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("k")
    found = {}
    for name, k in (("one", 1), ("default", None), ("seven", 7)):
        found[name] = (root / name, fly(root / name, ticks_per_replay=k))
    return found


def test_the_loop_chooses_16_ticks_per_replay_for_the_pid_flight(runs):
    assert runs["one"][1]["stage_plan"].endswith("-> mission -> pid -> record)")
    assert runs["default"][1]["stage_plan"].endswith("-> mission -> pid -> record) x16")
    assert runs["seven"][1]["stage_plan"].endswith(" x7")
    assert "host(" not in runs["default"][1]["stage_plan"]


def test_done_falls_inside_a_replay_and_every_run_reports_the_same_end(runs):
    ends = {name: (info["exit_reason"], info["ticks"], info["sim_time_s"], info["record_rows"]) for name, (_, info) in runs.items()}
    assert ends["one"][0] == "done"
    assert ends["one"] == ends["default"] == ends["seven"]
    ticks = ends["one"][1]
    assert ticks % 16 != 0 and ticks % 7 != 0  # the run ended mid-replay for both K
    assert ends["one"][2] == pytest.approx(ticks * 0.004)


def _column_bytes(out: Path) -> dict[str, bytes]:
    table = pq.read_table(out / "record.parquet")
    return {name: table.column(name).to_numpy().tobytes() for name in table.column_names}


def test_records_are_identical_bit_for_bit(runs):
    # Parts may split where the wall clock says (a drain at least every 2 s); the ticks they hold may not differ.
    one = _column_bytes(runs["one"][0])
    assert len(next(iter(one.values()))) > 0
    assert _column_bytes(runs["default"][0]) == one
    assert _column_bytes(runs["seven"][0]) == one


def test_a_run_stops_exactly_at_its_duration_and_a_small_table_drains_between_replays(runs, tmp_path):
    # 253 ticks (1.012 s) is 15 replays of 16 and 13 single ticks; a 40-row table (not a multiple of 16)
    # drains before a replay could overwrite rows, wrapping around its end.
    info = fly(tmp_path / "short", duration=253 * 0.004, record_capacity=40)
    assert (info["exit_reason"], info["ticks"], info["record_rows"]) == ("duration", 253, 253)
    assert info["stage_plan"].endswith(" x16")
    cut = pq.read_table(tmp_path / "short" / "record.parquet")
    full = pq.read_table(runs["one"][0] / "record.parquet").slice(0, 253)
    assert cut.equals(full)


@pytest.mark.parametrize("name", ["one", "default"])
def test_both_replay_identically_in_a_process_of_their_own(runs, name):
    done = subprocess.run([sys.executable, "-m", "nexus.cli", "replay", str(runs[name][0])], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"replay identical: {runs[name][1]['ticks']} ticks" in done.stdout


def test_plan_verbose_counts_the_graph_nodes_of_a_tick():
    from click.testing import CliRunner

    from nexus.cli import main

    result = CliRunner().invoke(main, ["plan", "--device", "cpu", "--verbose"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "ticks per replay: 16" in lines
    counted = [line for line in lines if line.startswith("kernels per tick: ")]
    # At least one node per stage of the ring (20 stages) plus the solver's own dozens of kernels.
    assert counted and int(counted[0].split()[3]) > 20 + 50
