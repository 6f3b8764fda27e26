"""The checked-in USD schema files are what the component specs generate, and ``nexus schema`` keeps them so;
``nexus schema`` (or ``--list``) lists every attribute as those files declare it."""

from __future__ import annotations

import ast
import json

import numpy as np
import pytest
from click.testing import CliRunner
from pxr import Sdf

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


def _listed(*args) -> dict:
    """``nexus schema --json [args]``: schema name -> its object."""
    done = CliRunner().invoke(main, ["schema", "--json", *args])
    assert done.exit_code == 0, done.output
    return {item["schema"]: item for item in map(json.loads, done.output.splitlines())}


def _read_default(text: str, usd_type: str):
    if usd_type == "bool":
        return {"true": True, "false": False}[text]
    return ast.literal_eval(text)


def test_schema_lists_every_attribute_as_the_generated_schema_file_declares_it():
    """Each class of generatedSchema.usda (read with Sdf), its attributes and those of the schemas it builds on,
    is listed with the file's type, fallback, unit and bounds; and nothing else is listed."""
    layer = Sdf.Layer.FindOrOpen(str(generate.FOLDER / "generatedSchema.usda"))
    classes = {prim.name: prim for prim in layer.rootPrims}
    listed = _listed()
    assert sorted(listed) == sorted(classes)
    for name, prim in classes.items():
        bases = list(prim.GetInfo("apiSchemas").prependedItems)
        assert listed[name]["bases"] == bases
        expected = {}  # attribute -> (spec, the schema that declares it); a schema's own overrides its base's
        for owner in [*bases, name]:
            for spec in classes[owner].properties:
                if isinstance(spec, Sdf.AttributeSpec):
                    expected[spec.name] = (spec, owner)
        rows = {row["name"]: row for row in listed[name]["attributes"]}
        assert sorted(rows) == sorted(expected), name
        for attr, (spec, owner) in expected.items():
            row, data = rows[attr], dict(spec.customData)
            where = f"{name} {attr}"
            assert row["type"] == str(spec.typeName) and row["unit"] == data["unit"] and row["from"] == owner, where
            default = _read_default(row["default"], row["type"])
            if isinstance(spec.default, str):
                assert default == spec.default, where
            else:
                fallback = [tuple(v) for v in spec.default] if row["type"].endswith("[]") else spec.default
                assert np.asarray(default, dtype=float) == pytest.approx(np.asarray(fallback, dtype=float),
                                                                          rel=1e-6, abs=1e-12), where
            for bound in ("minimum", "maximum"):
                if bound in data:
                    assert f"{data[bound]:g}" in row["allowed"], where
        relationships = sorted(row["name"] for row in listed[name]["relationships"])
        assert relationships == sorted(s.name for owner in [*bases, name] for s in classes[owner].properties
                                       if isinstance(s, Sdf.RelationshipSpec)), name


def test_bare_schema_prints_the_listing_one_line_per_attribute():
    done = CliRunner().invoke(main, ["schema"])
    assert done.exit_code == 0, done.output
    assert done.output == CliRunner().invoke(main, ["schema", "--list"]).output
    sections = {block.splitlines()[0].split()[0]: block.splitlines() for block in done.output.split("\n\n")}
    assert sorted(sections) == sorted(_listed())
    wind = sections["NexusWindAPI"]
    assert wind[0] == "NexusWindAPI (component nexus.air.wind_field:WindField)"
    assert wind[2].split() == ["attribute", "type", "unit", "default", "allowed", "from"]
    speed = next(line.split() for line in wind if line.split()[:1] == ["nexus:speed"])
    assert speed[:7] == ["nexus:speed", "float", "m/s", "0", ">=", "0", "NexusWindAPI"]
    assert " ".join(speed[7:]) == "Mean wind speed at the reference height"
    capacity = next(line.split() for line in sections["NexusBatteryAPI"] if "nexus:battery:capacity" in line)
    assert capacity[:7] == ["nexus:battery:capacity", "float", "Ah", "16", ">", "0", "NexusBatteryAPI"]
    assert "  rel nexus:joint (required): The rotor's revolute joint (one target)" in sections["NexusEscAPI"]


def test_schema_api_picks_schemas_and_refuses_unknown_names():
    assert list(_listed("--api", "wind", "--api", "NexusImuAPI")) == ["NexusWindAPI", "NexusImuAPI"]
    imu = _listed("--api", "imu")["NexusImuAPI"]
    noise = next(row for row in imu["attributes"] if row["name"] == "nexus:noise")
    assert (noise["from"], noise["default"], noise["allowed"]) == ("NexusSensorAPI", "true", "true or false")
    unknown = CliRunner().invoke(main, ["schema", "--api", "windy"])
    assert unknown.exit_code == 2 and "no API schema named windy" in unknown.output and "NexusWindAPI" in unknown.output
    mixed = CliRunner().invoke(main, ["schema", "--list", "--write"])
    assert mixed.exit_code == 2 and "give one of" in mixed.output


def test_every_shipped_spec_is_well_formed():
    from nexus.schemas.catalog import discover

    problems = [problem for entry in discover() for problem in entry.spec.check()]
    assert problems == []
