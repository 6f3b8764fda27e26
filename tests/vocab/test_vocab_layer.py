"""The vocabulary sits just above the engine: importing any module of nexus/vocab loads nothing of Nexus but
nexus.core and nexus.vocab, so every layer above may declare itself with it."""

import subprocess
import sys
from pathlib import Path

import pytest

VOCAB = Path(__file__).resolve().parents[2] / "nexus" / "vocab"
MODULES = sorted(f"nexus.vocab.{path.stem}" for path in VOCAB.glob("*.py") if path.stem != "__init__")

PROBE = """
import sys
import nexus  # registers the USD schemas, as every process does first
before = set(sys.modules)
import {module}
print(" ".join(sorted(m for m in set(sys.modules) - before if m.startswith("nexus"))))
"""


@pytest.mark.parametrize("module", MODULES)
def test_a_vocab_module_loads_only_the_engine_and_the_vocabulary(module):
    loaded = subprocess.run([sys.executable, "-c", PROBE.format(module=module)], capture_output=True, text=True,
                            check=True).stdout.split()
    others = [m for m in loaded if not m.startswith(("nexus.core", "nexus.vocab"))]
    assert module in loaded and not others, f"{module} loads {others}"
