"""The checked-in USD schema files are what the component specs generate, and ``nexus schema`` keeps them so."""

from __future__ import annotations

from click.testing import CliRunner

from nexus.cli import main
from nexus.schemas import generate

GENERATED = ["generatedSchema.usda", "plugInfo.json", "components.json"]


def test_the_checked_in_schema_files_match_the_specs():
    stale = generate.stale_files()
    assert stale == [], (f"{', '.join(stale)} in nexus/schemas no longer match the component specs; "
                         "run `nexus schema --write` and commit the result")


def test_schema_check_names_stale_files_and_write_regenerates_them(tmp_path, monkeypatch):
    monkeypatch.setattr(generate, "FOLDER", tmp_path)  # an empty folder: every file is missing
    runner = CliRunner()
    checked = runner.invoke(main, ["schema", "--check"])
    assert checked.exit_code == 1
    assert all(name in checked.output for name in GENERATED) and "nexus schema --write" in checked.output
    written = runner.invoke(main, ["schema", "--write"])
    assert written.exit_code == 0 and all(name in written.output for name in GENERATED)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(GENERATED)
    again = runner.invoke(main, ["schema", "--write"])
    assert again.exit_code == 0 and "nothing changed" in again.output
    assert runner.invoke(main, ["schema", "--check"]).exit_code == 0
    (tmp_path / "plugInfo.json").write_text("{}\n")  # an edit by hand
    edited = runner.invoke(main, ["schema", "--check"])
    assert edited.exit_code == 1 and "plugInfo.json" in edited.output and "components.json" not in edited.output


def test_schema_needs_one_of_write_or_check():
    assert CliRunner().invoke(main, ["schema"]).exit_code == 2


def test_every_shipped_spec_is_well_formed():
    from nexus.schemas.catalog import discover

    problems = [problem for entry in discover() for problem in entry.spec.check()]
    assert problems == []
