"""No module of ``nexus.viz`` (nor of ``nexus.commands``) imports, through others, itself.

Every import counts, at the top of a module or inside a function: an import
put off until a function runs is still a circle of knowledge, and the one
report or view that needed the other's private functions grew the last two
circles (``report`` with ``worlds_report``, ``replay_view`` with
``worlds_view``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imports_within(package: str, source: str, module: str) -> set[str]:
    """The modules of ``package`` that ``source`` (the text of ``module``) imports, anywhere in it."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parent = module.rsplit(".", node.level)[0]  # ``from . import x`` in nexus.viz.y: nexus.viz
            base = node.module if node.level == 0 else ".".join(filter(None, (parent, node.module)))
            # ``from nexus.viz import report`` names the module nexus.viz.report; ``from nexus.viz.report import
            # write_report`` names nexus.viz.report.
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name for name in names if name.startswith(package + ".")}
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (only names that are modules of the package)."""
    folder = ROOT / Path(*package.split("."))
    modules = {f"{package}.{path.stem}": path for path in sorted(folder.glob("*.py")) if path.stem != "__init__"}
    return {name: imports_within(package, path.read_text(), name) & set(modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One circle of ``graph`` as the modules along it (first == last), or None."""
    state: dict[str, str] = {}
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_circle_of_three_and_none_in_a_chain():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_a_lazy_import_inside_a_function_counts():
    source = "from nexus.viz import report as one\ndef f():\n    from nexus.viz.worlds_report import write\n"
    assert imports_within("nexus.viz", source, "nexus.viz.x") == {
        "nexus.viz.report", "nexus.viz.worlds_report", "nexus.viz.worlds_report.write"}
    assert imports_within("nexus.viz", "from . import figures\n", "nexus.viz.x") == {"nexus.viz.figures"}


@pytest.mark.parametrize("package", ["nexus.viz", "nexus.commands"])
def test_no_module_imports_itself_through_others(package):
    graph = import_graph(package)
    assert len(graph) >= 8, sorted(graph)  # the walk found the package's modules
    cycle = find_cycle(graph)
    assert cycle is None, f"{package} has an import circle: {' -> '.join(cycle)}"


def test_the_report_and_the_view_reach_their_worlds_versions_one_way():
    graph = import_graph("nexus.viz")
    # The one-flight report and view hand a run of many worlds on; the worlds versions share their parts
    # through report_page and player, not through them.
    assert "nexus.viz.worlds_report" in graph["nexus.viz.report"]
    assert "nexus.viz.report" not in graph["nexus.viz.worlds_report"]
    assert "nexus.viz.worlds_view" in graph["nexus.viz.replay_view"]
    assert "nexus.viz.replay_view" not in graph["nexus.viz.worlds_view"]
