"""Modules named in strings go through one loader, and each names a module in a layer its holder may import.

import-linter reads ``import`` statements; a module that is loaded by its name
(``importlib``) is invisible to it. So :mod:`nexus.core.lazy` is the only
module that imports by name, and every table of names handed to it (the
calls of its functions, Gymnasium's entry points, and the component index ``components.json`` that
:func:`nexus.schemas.catalog.component_class` reads) is checked here: each
``nexus.*`` name exists (with its attribute, for ``module:attr``) and sits in
the holder's package or a layer below it (``pyproject.toml``'s layers
contract). The package ``nexus`` itself, the public face above every layer,
may name any module.

Two registries list, by design, modules that register into them from above:
:data:`REGISTRIES` names them and the packages each may name.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "nexus"
sys.path.insert(0, str(Path(__file__).parent))
from test_layers import contract_layers  # noqa: E402

#: The loader module: the one place that imports a module by name.
LOADER = "nexus/core/lazy.py"
#: The loader's functions, and keywords that take module names: a lazy command group's table, and the entry
#: points handed to Gymnasium's registry (which imports them by name itself).
LOADER_CALLS = {"load_module", "load_attribute", "import_once", "lazy_names"}
LOADER_KEYWORDS = {"lazy", "entry_point", "vector_entry_point"}
#: Registries below the modules that register into them: holder -> the packages its names may come from.
REGISTRIES = {
    # The component index: every component package's classes, found by `nexus schema --write`.
    "nexus.schemas.catalog": {"plant", "air", "aero", "sensors", "estimation", "guidance", "control"},
    # Nexus's own controllers: the control package's and PX4's.
    "nexus.control.registry": {"control", "px4"},
}
NAME = re.compile(r"^nexus(\.[A-Za-z_]\w*)*(:[A-Za-z_][\w.]*)?$")


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def strings_in(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and NAME.match(n.value)]


def loader_tables() -> list[tuple[str, str, int]]:
    """(holder module, name, line) for every ``nexus.*`` string a call of the loader is handed: as an argument,
    through a module-level name, or an item of one."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text())
        assigned = {}
        calls = set(LOADER_CALLS) | {alias.asname for node in tree.body if isinstance(node, ast.ImportFrom)
                                     and node.module == "nexus.core.lazy" for alias in node.names if alias.asname}
        for node in tree.body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, ast.AnnAssign) and node.value is not None else []
            for target in targets:
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
        for call in ast.walk(tree):
            if not isinstance(call, ast.Call):
                continue
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            values = list(call.args) if name in calls else []
            values += [k.value for k in call.keywords if k.arg in LOADER_KEYWORDS or name in calls]
            for value in values:
                while isinstance(value, (ast.Subscript, ast.Attribute)):
                    value = value.value
                if isinstance(value, ast.Name) and value.id in assigned:
                    value = assigned[value.id]
                found += [(module_name(path), text, call.lineno) for text in strings_in(value)]
    return found


def index_targets() -> list[tuple[str, str, int]]:
    index = json.loads((PACKAGE / "schemas" / "components.json").read_text())["schemas"]
    return [("nexus.schemas.catalog", entry["target"], 0) for entry in index.values() if entry.get("target")]


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def exists(target: str) -> bool:
    """The module (and its top-level attribute, for ``module:attr``) is there, read without importing it."""
    module, _, attr = target.partition(":")
    base = PACKAGE.parent / Path(*module.split("."))
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if not path.is_file():
        return False
    if not attr:
        return True
    first = attr.split(".")[0]
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == first:
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == first for t in targets):
                return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name) == first for a in node.names):
            return True
    return False


def test_the_tables_are_found():
    holders = {holder for holder, _, _ in loader_tables()}
    assert {"nexus", "nexus.core", "nexus.cli", "nexus.commands.px4", "nexus.bench.suites", "nexus.gym"} <= holders


def test_only_the_loader_imports_by_name():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(ROOT).as_posix() == LOADER:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(a.name == "importlib" for a in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} import importlib")
            elif isinstance(node, ast.ImportFrom) and node.module == "importlib" and any(
                    a.name in ("import_module", "__import__") for a in node.names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} from importlib import import_module")
            elif isinstance(node, ast.Name) and node.id == "__import__":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} __import__")
    assert not found, f"import a module by its name through {LOADER} (load_module, load_attribute):\n" + "\n".join(found)


def test_every_name_names_a_module_that_is_there():
    missing = [f"{holder}:{line} {name}" for holder, name, line in loader_tables() + index_targets() if not exists(name)]
    assert not missing, "these names name no module (or no attribute of it):\n" + "\n".join(missing)


def test_every_name_sits_in_a_layer_its_holder_may_import():
    layers = contract_layers()
    upward = []
    for holder, name, line in loader_tables() + index_targets():
        mine, theirs = package_of(holder), package_of(name.partition(":")[0])
        if holder == "nexus" or mine == theirs:
            continue
        if holder in REGISTRIES:
            if theirs not in REGISTRIES[holder]:
                upward.append(f"{holder}:{line} {name} (this registry names only {sorted(REGISTRIES[holder])})")
            continue
        if layers[theirs] >= layers[mine]:
            upward.append(f"{holder}:{line} {name} ({theirs} is layer {layers[theirs]}, {mine} {layers[mine]})")
    assert not upward, "these names reach a layer their module may not import:\n" + "\n".join(upward)
