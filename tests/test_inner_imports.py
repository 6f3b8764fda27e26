"""Imports made inside functions: few, and each says why.

An import inside a function hides a dependency from import-linter's reading
of the layers only in part (it sees it, but a reader of the module's top does
not), and it was how lower packages reached up. So:

* of Nexus's own modules, at most :data:`MOST_NEXUS` in the whole package, each
  a real remaining cycle or the start-up of a command;
* of other packages, only the heavy optional ones (:data:`HEAVY_OPTIONAL`),
  which a machine may lack or which cost seconds to import;

and each carries its reason on the import's line, after the noqa:
``from nexus.x import y  # noqa: PLC0415  (reason: ...)``. Imports of the
standard library inside a function are not counted.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "nexus"
#: The most imports of Nexus's own modules that may sit inside functions.
MOST_NEXUS = 25
#: Packages that may be imported inside a function (top-level import names): optional extras (torch, skrl,
#: gymnasium: the learn extra; ray and grpc, its client: the ray extra; pandas and polars: tests only) and
#: dependencies that cost a second or more to import and serve one command or one controller.
HEAVY_OPTIONAL = {"torch", "skrl", "gymnasium", "ray", "grpc", "casadi", "viser", "matplotlib", "onnxruntime", "onnx",
                  "mcap", "imageio", "imageio_ffmpeg", "pandas", "polars"}
REASON = re.compile(r"#\s*noqa:[\w\s,]*\bPLC0415\b.*\(reason:\s*\S[^)]*\)")


@dataclass(frozen=True)
class InnerImport:
    file: str
    line: int
    module: str
    has_reason: bool

    def __str__(self) -> str:
        return f"{self.file}:{self.line} {self.module}"


def imported_name(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The absolute names an import statement loads (a relative import resolved against ``module``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [node.module or ""]
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[:len(base) - (node.level - 1)]
    return [".".join([*base, *([node.module] if node.module else [])])]


def inner_imports() -> list[InnerImport]:
    """Every import statement inside a function of the package (Nexus's and others', not the standard library's)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        lines = path.read_text().splitlines()
        tree = ast.parse("\n".join(lines))

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                    text = "\n".join(lines[child.lineno - 1:child.end_lineno])
                    for name in imported_name(child, module, path.name == "__init__.py"):
                        if name.split(".")[0] not in sys.stdlib_module_names:
                            found.append(InnerImport(str(relative), child.lineno, name, bool(REASON.search(text))))
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

        visit(tree, False)
    return found


def is_nexus(name: str) -> bool:
    return name == "nexus" or name.startswith("nexus.")


def test_few_imports_of_nexus_modules_sit_inside_functions():
    nexus = [i for i in inner_imports() if is_nexus(i.module)]
    assert len(nexus) <= MOST_NEXUS, (
        f"{len(nexus)} imports of Nexus's modules sit inside functions, at most {MOST_NEXUS} may: import at the "
        "module's top (the layers allow any import downwards):\n" + "\n".join(map(str, nexus)))


def test_each_import_of_a_nexus_module_inside_a_function_says_why():
    silent = [str(i) for i in inner_imports() if is_nexus(i.module) and not i.has_reason]
    assert not silent, ("these imports inside functions give no reason; write it after the noqa, "
                        "`# noqa: PLC0415  (reason: ...)`, or move the import to the module's top:\n" + "\n".join(silent))


def test_only_heavy_optional_packages_are_imported_inside_functions():
    others = [str(i) for i in inner_imports() if not is_nexus(i.module) and i.module.split(".")[0] not in HEAVY_OPTIONAL]
    assert not others, ("these packages are imported inside functions but are neither optional nor heavy; import "
                        "them at the module's top:\n" + "\n".join(others))


def test_each_import_of_a_heavy_package_inside_a_function_says_why():
    silent = [str(i) for i in inner_imports() if not is_nexus(i.module) and not i.has_reason]
    assert not silent, ("these imports inside functions give no reason; write it after the noqa, "
                        "`# noqa: PLC0415  (reason: ...)`:\n" + "\n".join(silent))
