"""One reader of a run folder: every command that reads a run meets a broken one with the same words."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from nexus.cli import main

#: The commands that read a run folder, with the arguments that make them read FOLDER.
READERS = {
    "replay": lambda folder: ["replay", str(folder)],
    "plot": lambda folder: ["plot", str(folder)],
    "view": lambda folder: ["view", str(folder), "--port", "0"],
    "world-of": lambda folder: ["run", "--world-of", f"{folder}:0"],
}


def _errors(folder) -> dict[str, str]:
    """Each reader's one-line error for FOLDER (exit status 2, no traceback)."""
    found = {}
    for name, args in READERS.items():
        result = CliRunner().invoke(main, args(folder))
        assert result.exit_code == 2, (name, result.output)
        assert "Traceback" not in result.output, (name, result.output)
        found[name] = result.output.strip().splitlines()[-1]
    return found


def _record(folder) -> None:
    (folder / "record.parquet").mkdir()
    pq.write_table(pa.table({"time": [0.004]}), folder / "record.parquet" / "part-00000.parquet")


def test_a_cut_run_json_is_the_same_error_naming_the_file_in_every_command(tmp_path):
    (tmp_path / "run.json").write_text('{"status": "running", "ticks": 3')  # cut mid-write by hand
    _record(tmp_path)
    errors = _errors(tmp_path)
    for name, line in errors.items():
        assert f"{tmp_path / 'run.json'} is not valid JSON (" in line, (name, line)
        assert "it was cut or edited" in line, (name, line)


def test_a_folder_without_run_json_is_no_run_folder_in_every_command(tmp_path):
    _record(tmp_path)
    for name, line in _errors(tmp_path).items():
        assert f"{tmp_path} is not a run folder: it has no run.json" in line, (name, line)


@pytest.mark.parametrize("command", ["replay", "plot", "view"])
def test_a_record_part_that_is_no_parquet_is_named_with_the_same_words(tmp_path, command):
    (tmp_path / "run.json").write_text('{"status": "finished", "ticks": 1, "worlds": 1}')
    (tmp_path / "record.parquet").mkdir()
    (tmp_path / "record.parquet" / "part-00000.parquet").write_bytes(b"PAR1 this is not parquet")
    result = CliRunner().invoke(main, READERS[command](tmp_path))
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'record.parquet'} cannot be read (" in result.output
    assert "it was cut short or is no Parquet file" in result.output
