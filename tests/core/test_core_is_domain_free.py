"""The engine knows no drones: nexus/core imports nothing from the rest of nexus, nor Newton or USD."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "nexus" / "core"


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def test_core_imports_only_itself_from_nexus_and_no_physics():
    offenders = {
        f"{path.name}: {module}"
        for path in sorted(CORE.glob("*.py"))
        for module in imported_modules(path)
        if (module.startswith("nexus") and not module.startswith("nexus.core"))
        or module.split(".")[0] in ("newton", "mujoco", "mujoco_warp", "pxr")
    }
    assert not offenders, f"nexus/core must stay domain-free; it imports {sorted(offenders)}"


def test_core_names_no_drone_signal_or_role():
    # The estimate/setpoint rules and the sample types live outside core (nexus/runtime/roles.py, the packages).
    # The ring's kind names (clock ... control, record) are the engine's own fixed order and stay.
    words = ("PoseTwist", "Setpoint", "ImuSample", "GpsSample", "BodyState", '"setpoint"', "ESTIMATE_READER",
             "CONTROLS_WIDTH")
    found = {f"{path.name}: {word}" for path in sorted(CORE.glob("*.py")) for word in words if word in path.read_text()}
    assert not found, sorted(found)
