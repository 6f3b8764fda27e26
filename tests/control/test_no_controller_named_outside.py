"""docs/architecture.md: nothing in the assembly, the flight, ``nexus run`` or the scenario runner names a
controller; what they need of one they take from its registration (:mod:`nexus.control.registry`)."""

from __future__ import annotations

import ast
from pathlib import Path

from nexus.control import registry

ROOT = Path(__file__).resolve().parents[2]
#: Files that must not hold a controller's name as a string (the sweep's and scenario's ``[px4]`` table,
#: a row's process id ``pid`` and the ``hold`` step share names with controllers, so those files are not here).
FILES = ("nexus/commands/run.py", "nexus/runtime/assembly.py", "nexus/runtime/flight.py",
         "nexus/runtime/scenario_parts.py", "nexus/scenario/runner.py")


def test_no_controller_is_named_where_the_registry_serves():
    names = set(registry.names())
    found = [f"{path}:{node.lineno} {node.value!r}" for path in FILES
             for node in ast.walk(ast.parse((ROOT / path).read_text()))
             if isinstance(node, ast.Constant) and node.value in names]
    assert not found, "controller names outside the registry: " + ", ".join(found)
