"""The layers hold: ``lint-imports`` keeps every contract of ``pyproject.toml``, the layers contract covers
every package, and ``docs/architecture.md``'s Layout section lists each package with its layer.

The Layout section (from ``## Layout`` to the next ``## `` heading) gives a
layer a bullet line of its own, bottom up, numbered from 1 for ``nexus/core``;
packages that share a layer share the line, separated by ``|``; the module
``nexus/cli.py`` stands for the ``cli`` layer::

    * `nexus/core` (layer 1): the engine ...
    * `nexus/air` | `nexus/sensors` (layer 8): ...
    * `nexus/cli.py` (layer 20): ...
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
BULLET = re.compile(r"^\*\s+((?:`nexus/[\w.]+`\s*\|?\s*)+)\(layer (\d+)\)")


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]


def layers_contract() -> dict:
    (found,) = [c for c in contracts() if c["type"] == "layers" and c.get("containers") == ["nexus"]]
    return found


def contract_layers() -> dict[str, int]:
    """Package (``cli`` for nexus/cli.py) -> its layer, 1 for the lowest, as the layers contract orders them."""
    layers = layers_contract()["layers"]  # top first, as import-linter reads them
    return {name.strip().strip("()"): len(layers) - i for i, line in enumerate(layers)
            for name in re.split(r"[|:]", line)}


def documented_layers() -> dict[str, int]:
    """Package -> layer, as the bullet lines of docs/architecture.md's Layout section give them."""
    text = ARCHITECTURE.read_text()
    start = text.index("\n## Layout\n")
    end = text.find("\n## ", start + 1)
    found: dict[str, int] = {}
    for line in text[start:end if end >= 0 else None].splitlines():
        match = BULLET.match(line)
        if match:
            for name in re.findall(r"`nexus/([\w.]+)`", match.group(1)):
                found[name.removesuffix(".py")] = int(match.group(2))
    return found


def test_lint_imports_keeps_every_contract():
    lint_imports = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


def test_the_layers_contract_covers_every_package():
    contract = layers_contract()
    assert contract.get("exhaustive") is True
    packages = {p.parent.name for p in (ROOT / "nexus").glob("*/__init__.py")} | {"cli"}
    assert set(contract_layers()) == packages


def test_the_layout_section_lists_every_package_with_its_layer():
    assert documented_layers() == contract_layers(), (
        "docs/architecture.md's Layout section and pyproject.toml's layers contract disagree: give each package "
        "a line `* `nexus/NAME` (layer N): ...`, layer 1 being nexus/core")
