"""A component's arrays are asked for by name: the container refuses positions, and specs list their names."""

from __future__ import annotations

import pytest

from nexus.core.arrays import ArrayDecl, NamedArrays, declaring
from nexus.core.spec import Param, Spec

DECLS = (
    ArrayDecl("gain", "float32, one per element", gradient=True, rollout="part{n}.gain", param="gain"),
    ArrayDecl("offsets", "vec3, one", gradient=True, rollout="part.offset.{axis}", param="offset",
              axes=("x", "y", "z"), axis_aliases=("roll", "pitch", "yaw"), aliases=(("part.oz", "part.offset.z"),)),
    ArrayDecl("index", "int32, one per element"),
)
SPEC = Spec(name="Part", doc="a test part", arrays=DECLS, params=(
    Param("gain", "test:gain", "float", 1.0, "N", "The gain"),
    Param("offset", "test:offset", "float3", (0.0, 0.0, 0.0), "m", "The offset"),
))


def test_integer_indexing_is_refused_with_a_sentence():
    arrays = NamedArrays("Part /p", DECLS, gain=[1.0], index=[0])
    with pytest.raises(TypeError, match=r"Part /p's arrays are named, not numbered: ask for one of gain, offsets, index"):
        arrays[0]
    with pytest.raises(TypeError, match="named, not numbered"):
        arrays[1:2]


def test_names_read_by_attribute_and_by_key_and_are_read_only():
    gain = [2.0]
    arrays = NamedArrays("Part /p", DECLS, gain=gain)
    assert arrays.gain is gain and arrays["gain"] is gain
    assert list(arrays) == ["gain"] and "gain" in arrays and 0 not in arrays
    assert arrays.gradient() == ("gain",)
    with pytest.raises(AttributeError, match="read-only"):
        arrays.gain = [3.0]
    with pytest.raises(KeyError, match="declares no array 'speed'; it declares gain, offsets, index"):
        arrays["speed"]
    with pytest.raises(KeyError, match="holds no array 'index' in this run"):
        arrays["index"]
    with pytest.raises(ValueError, match="arrays speed are not declared"):
        NamedArrays("Part /p", DECLS, speed=[1.0])


def test_gradient_names_follow_the_declarations():
    names = SPEC.gradient_names(2)
    assert [n.name for n in names] == ["part1.gain", "part2.gain", "part.offset.x", "part.offset.y", "part.offset.z"]
    first, z = names[0], names[-1]
    assert (first.attr, first.unit, first.element, first.component, first.shared) == ("test:gain", "N", 0, None, False)
    assert (z.attr, z.unit, z.component, z.shared) == ("test:offset", "m", 2, True)
    assert z.aliases == ("part.offset.yaw", "part.oz")


def test_a_rollout_name_needs_a_gradient():
    with pytest.raises(ValueError, match="needs gradient=True"):
        ArrayDecl("gain", "float32", rollout="part.gain")


def test_the_shipped_components_declare_their_arrays():
    from nexus.air.drag import Drag
    from nexus.control.pid import PidController
    from nexus.plant.esc import Esc
    from nexus.plant.propeller import Propeller

    flags = {(c.spec.name, d.name): d.gradient for c in (Esc, Propeller, Drag, PidController) for d in c.spec.arrays}
    assert flags[("Esc", "tau_up")] and flags[("Esc", "tau_down")] and not flags[("Esc", "lag_scale")]
    assert flags[("Propeller", "thrust_coefficient")] and not flags[("Propeller", "rotor")]
    assert flags[("Drag", "rotor_drag")] and flags[("Drag", "body_drag_coefficient")]
    assert flags[("PidController", "params")]
    assert [n.name for n in Esc.spec.gradient_names(4)] == ["esc.tau_up", "esc.tau_down"]
    assert [n.name for n in Propeller.spec.gradient_names(2)] == ["rotor1.kt", "rotor2.kt"]
    assert [n.name for n in Drag.spec.gradient_names()] == ["drag.rotor", "drag.cd.x", "drag.cd.y", "drag.cd.z"]
    pid = {n.name: n for n in PidController.spec.gradient_names()}
    assert len(pid) == 24 and "pid.kp_z" in pid["pid.position_p.z"].aliases
    assert declaring([Esc, Propeller], "thrust_coefficient") == [Propeller]
    from nexus.plant.ground_effect import GroundEffect

    assert declaring([Esc, Propeller, GroundEffect], "thrust_scale") == [Propeller, GroundEffect]


def test_no_caller_reads_a_components_arrays_by_position_or_private_name():
    # A component's launch arguments and its lag scale are its own; the loop's finish flag is the loop's.
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "nexus"
    rules = [(re.compile(r"\bfused\["), ()), (re.compile(r"\._lag_scale\b"), ("plant/esc.py",)),
             (re.compile(r"\b_finish_requested\b"), ("core/loop.py",))]
    found = []
    for path in sorted(root.rglob("*.py")):
        text, where = path.read_text(encoding="utf-8"), path.relative_to(root).as_posix()
        found += [f"{where}: {pattern.pattern}" for pattern, owners in rules if where not in owners and pattern.search(text)]
    assert found == []
