"""msgspec's first error read back as a Problem in the file's terms: the key, what is wrong, the value, the fix."""

from typing import Annotated, Literal

import msgspec
import pytest

from nexus.vocab import data_file
from nexus.vocab.data_file import MISSING, Count, NonNegative, Number, Positive, fix


class Climb(msgspec.Struct, tag_field="do", tag="climb", forbid_unknown_fields=True):
    height: Annotated[Positive, fix("give the height [m]")]
    to: Annotated[Annotated[list[Number], msgspec.Meta(min_length=3, max_length=3)] | None,
                  fix("give [north, east, height] [m]")] = None


class Hold(msgspec.Struct, tag_field="do", tag="hold", forbid_unknown_fields=True):
    time: NonNegative = 0.0


class File(msgspec.Struct, forbid_unknown_fields=True):
    duration: Positive
    seed: Annotated[Count, fix("give a whole number, 0 or more")] = 0
    mode: Literal["fast", "slow"] = "fast"
    gains: Annotated[dict[str, NonNegative], fix("give a table of gain = factor")] = {}
    step: list[Climb | Hold] = []


def problem(data: dict) -> data_file.Problem:
    with pytest.raises(ValueError) as caught:
        data_file.check(data, File, lambda p: ValueError(p))
    return caught.value.args[0]


def test_an_unknown_key_names_the_keys_its_table_takes():
    found = problem({"duration": 1, "step": [{"do": "hold", "tme": 1}]})
    assert (found.key, found.kind, found.value, found.table) == ("step[0].tme", "unknown", 1, "step[0]")
    assert found.allowed == ("do", "time")


def test_a_missing_key_carries_its_fix():
    found = problem({"duration": 1, "step": [{"do": "climb"}]})
    assert (found.key, found.kind, found.value) == ("step[0].height", "missing", MISSING)
    assert found.fix == "give the height [m]"


def test_a_bound_a_type_and_a_value_not_among_the_choices():
    found = problem({"duration": 0})
    assert (found.kind, found.bound, found.finite) == ("bound", (">", 0.0), True)
    found = problem({"duration": float("inf")})
    assert found.kind == "bound" and not found.finite
    found = problem({"duration": 1, "seed": True})
    assert (found.kind, found.expected, found.fix) == ("type", "int", "give a whole number, 0 or more")
    found = problem({"duration": 1, "mode": "medium"})
    assert (found.kind, found.choices) == ("choice", ("fast", "slow"))
    found = problem({"duration": 1, "step": [{"do": "loop"}]})
    assert (found.key, found.kind, found.choices) == ("step[0].do", "choice", ("climb", "hold"))


def test_an_item_takes_its_holders_fix_and_a_table_item_is_named():
    found = problem({"duration": 1, "step": [{"do": "climb", "height": 1, "to": [1, "a", 2]}]})
    assert (found.key, found.fix) == ("step[0].to[1]", "give [north, east, height] [m]")
    found = problem({"duration": 1, "step": [{"do": "climb", "height": 1, "to": [1, 2]}]})
    assert (found.kind, found.length) == ("length", (">=", 3))
    found = problem({"duration": 1, "gains": {"p": 1, "d": "x"}})
    assert (found.key, found.value, found.fix) == ("gains.d", "x", "give a table of gain = factor")


def test_the_reader_names_the_file(tmp_path):
    path = tmp_path / "f.toml"
    path.write_text("a = [\n")
    with pytest.raises(ValueError, match=r"^bad TOML: "):
        data_file.read_toml(path, unreadable=lambda e: ValueError(f"unreadable: {e.strerror}"),
                            invalid=lambda e: ValueError(f"bad TOML: {e}"))
    with pytest.raises(ValueError, match=r"^unreadable: No such file"):
        data_file.read_toml(tmp_path / "nope.toml", unreadable=lambda e: ValueError(f"unreadable: {e.strerror}"),
                            invalid=lambda e: ValueError(f"bad TOML: {e}"))
    assert data_file.did_you_mean("sdt", ("mean", "std")) == " did you mean 'std'?"
    assert data_file.fields_of(Climb) == ("do", "height", "to")
