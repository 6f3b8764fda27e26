"""Newton's private parts are used in one module only, and that module still matches the installed Newton.

When Newton is upgraded these tests fail first, naming ``nexus/plant/newton_internals.py``: its doc says what
to check for each part before the pin in ``pyproject.toml`` moves.
"""

import re
import tomllib
from pathlib import Path

import newton

from nexus.plant import newton_internals

ROOT = Path(__file__).resolve().parents[2]
MODULE = "nexus/plant/newton_internals.py"


def test_the_installed_newton_is_the_one_the_module_was_written_for():
    problems = newton_internals.problems()
    assert not problems, (f"{MODULE} no longer matches the installed Newton: " + "; ".join(problems)
                          + f". Check each entry of INTERNALS in {MODULE} against Newton {newton.__version__}'s "
                          "source, then move NEWTON_VERSION and the pin in pyproject.toml together")


def test_the_pin_in_pyproject_is_the_version_the_module_names():
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    pins = [d for d in dependencies if re.match(r"newton(\[[^]]*\])?\s*[=~<>!]", d)]
    assert pins and all(p.endswith(f"=={newton_internals.NEWTON_VERSION}") for p in pins), (
        f"pyproject.toml pins {pins}, but {MODULE} was written for Newton {newton_internals.NEWTON_VERSION}; "
        "move the two together")


def test_each_internal_says_why_and_what_would_replace_it():
    for internal in newton_internals.INTERNALS:
        assert internal.why and internal.public, f"{MODULE}: {internal.name} needs its why and its public API"


def test_no_other_module_reaches_into_newton():
    """``newton._src`` and the private names of INTERNALS appear in no other module of the package."""
    private = {"_allocate_state_aux_vars", "_update_body_inertial_buffers", "_computed_forces", "_applied_forces"}
    found = []
    for path in sorted((ROOT / "nexus").rglob("*.py")):
        if path.relative_to(ROOT).as_posix() == MODULE:
            continue
        text = path.read_text()
        if "newton._src" in text or any(name in text for name in private):
            found.append(path.relative_to(ROOT).as_posix())
    assert not found, f"{found} reach into Newton's private parts; keep them in {MODULE}"
