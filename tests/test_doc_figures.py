"""tools/doc_figures.py: every declared figure is found once in its doc; --check names a stale figure with its doc,
line, the doc's value and the command's, and --write puts the command's value in its place; and the figures of the
cheap commands (seconds of flight: the battery's end, the MCAP export's counts, the short mission with drag) match
what those commands give now."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("doc_figures", ROOT / "tools" / "doc_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["doc_figures"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("doc_figures", None)


def test_every_figure_is_found_once_in_its_doc(tool):
    problems = [found.problem for found in map(tool.locate, tool.FIGURES) if found.problem]
    assert problems == []
    assert {figure.command for figure in tool.FIGURES} <= set(tool.COMMANDS)
    assert len({figure.name for figure in tool.FIGURES}) == len(tool.FIGURES)


@pytest.fixture
def fake(tool, tmp_path, monkeypatch):
    """A doc quoting 41 where its command prints 42, declared as the tool's only figure."""
    doc = tmp_path / "page.md"
    doc.write_text("# A page\n\nThe answer\nis 41 here,\nand 7 stays.\n")
    command = tool.Command("answer", ("{python} -c \"print('the answer: 42')\"",), "cheap")
    figure = tool.Figure("the_answer", str(doc), r"The answer\s+is (\d+) here", "answer",
                         tool.printed(r"the answer: (\d+)"))
    monkeypatch.setitem(tool.COMMANDS, "answer", command)
    monkeypatch.setattr(tool, "FIGURES", [figure])
    return doc


def test_check_names_a_stale_figure_and_write_fixes_it(tool, fake, capsys):
    assert tool.main(["--check"]) == 1
    printed = capsys.readouterr().out
    assert f"{fake}:4: the_answer: the doc says '41', the command gives '42'" in printed
    assert "0 figure(s) current, 1 stale, 0 problem(s)" in printed
    assert fake.read_text().count("41") == 1  # --check writes nothing
    assert tool.main(["--write"]) == 0
    assert fake.read_text() == "# A page\n\nThe answer\nis 42 here,\nand 7 stays.\n"
    assert tool.main(["--check"]) == 0
    assert "1 figure(s) current, 0 stale, 0 problem(s)" in capsys.readouterr().out


def test_a_figure_that_lost_its_place_or_a_failing_command_is_a_problem(tool, fake, monkeypatch, capsys):
    fake.write_text("The answer is 41 here. The answer is 41 here.\n")  # twice: which one?
    assert tool.main(["--check"]) == 2
    assert "matches 2 times, not once" in capsys.readouterr().out
    fake.write_text("The answer is 41 here.\n")
    failing = tool.Command("answer", ("{python} -c 'raise SystemExit(3)'",), "cheap")
    monkeypatch.setitem(tool.COMMANDS, "answer", failing)
    assert tool.main(["--check"]) == 2
    assert "command answer failed" in capsys.readouterr().out
    assert fake.read_text() == "The answer is 41 here.\n"


def test_span_writes_ranges_as_the_docs_do(tool):
    assert tool.span(0.0796, 0.3001, 2, " m") == "0.08 – 0.30 m"
    assert tool.span(3.82, 3.84, 1, " rad/s") == "3.8 rad/s"


def test_the_cheap_figures_match_their_commands(tool, tmp_path):
    figures = tool.selected(None, "cheap", None)
    assert {f.name for f in figures} >= {"battery_empty_time", "mcap_short", "drag_short_ends"}
    report = tool.measure(figures, keep=tmp_path)
    assert report.problems == []
    stale = [tool.describe(found, value, tool.COMMANDS[found.figure.command]) for found, value in report.stale]
    assert stale == [], "stale figures; rewrite them with `python tools/doc_figures.py --write --cost cheap`:\n" + \
        "\n".join(stale)
    assert len(report.current) == len(figures)
