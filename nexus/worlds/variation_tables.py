"""A variation file's distribution tables, declared once: ``{dist = "normal", mean = 1.2, std = 0.05}``.

Each ``dist`` is a structure of its own (a tagged union on ``dist``) with the keys it takes, their types and
the one bound a type can say (a normal's ``std`` >= 0); :func:`read_table` checks a table against them with
msgspec (:mod:`nexus.vocab.data_file`) and words the first thing wrong as the variation file's sentences.
A top-level value that is a number or a string, a choice's values and a constant's value are checked by
:mod:`nexus.worlds.variation` against their parameter's kind (a number, a rotor index or a name), and every
distribution against its parameter's bounds.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from nexus.core.errors import BuildError
from nexus.vocab import data_file
from nexus.vocab.data_file import MISSING, Number, Problem
from nexus.vocab.types import show, type_name

#: A standard deviation: a finite number, 0 or more.
_Spread = Annotated[float, msgspec.Meta(ge=0.0, le=1.7976931348623157e308)]


class _Table(msgspec.Struct, tag_field="dist", forbid_unknown_fields=True, frozen=True):
    """A distribution table: a key its ``dist`` does not take is refused."""


class Normal(_Table, tag="normal"):
    """``normal``: ``mean`` and ``std``, truncated to [``low``, ``high``] where given."""

    mean: Number
    std: _Spread
    low: Number | None = None
    high: Number | None = None
    per_rotor: bool = False


class Uniform(_Table, tag="uniform"):
    """``uniform`` over [``low``, ``high``]."""

    low: Number
    high: Number
    per_rotor: bool = False


class Choice(_Table, tag="choice"):
    """``choice`` of ``values`` (numbers, rotor indices or names), with non-negative ``weights`` where given."""

    values: Annotated[list[Any], msgspec.Meta(min_length=1)]
    weights: list[Number] | None = None
    per_rotor: bool = False


class Constant(_Table, tag="constant"):
    """``constant``: one ``value`` in every world."""

    value: Any
    per_rotor: bool = False


#: Every distribution table a variation file may hold.
DistributionTable = Normal | Uniform | Choice | Constant
#: The distributions by name, each with its required and optional keys (``dist`` and ``per_rotor`` aside).
DISTRIBUTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    cls.__struct_config__.tag: (
        tuple(f.encode_name for f in msgspec.structs.fields(cls) if f.required),
        tuple(f.encode_name for f in msgspec.structs.fields(cls) if not f.required and f.name != "per_rotor"))
    for cls in (Normal, Uniform, Choice, Constant)}


def read_table(context: str, table: dict) -> DistributionTable:
    """``table`` as its distribution, or the :class:`BuildError` ``{context}: ...`` naming the key and the fix."""
    return data_file.check(table, DistributionTable, lambda problem: BuildError(f"{context}: "
                                                                                f"{_sentence(problem, table)}"))


def _sentence(problem: Problem, table: dict) -> str:
    kinds = ", ".join(DISTRIBUTIONS)
    kind, key, value = table.get("dist"), problem.name, problem.value
    if key == "dist":
        if value is MISSING:
            return f"its table needs a 'dist' key, one of: {kinds}"
        if not isinstance(value, str):
            return f"'dist' must be a string, one of: {kinds}; not {type_name(value)}"
        return f"dist {value!r} is unknown;{data_file.did_you_mean(value, DISTRIBUTIONS)} valid: {kinds}"
    if problem.kind == "unknown":
        return (f"key {key!r} is unknown in a {kind} table;{data_file.did_you_mean(key, problem.allowed)} "
                f"a {kind} takes: {', '.join(problem.allowed)}")
    if problem.kind == "missing":
        missing = [k for k in DISTRIBUTIONS[kind][0] if k not in table]
        return (f"a {kind} needs {' and '.join(repr(k) for k in missing)}; add "
                f"{'them' if len(missing) > 1 else 'it'} to the table")
    name = next(p for p in reversed(problem.parts) if isinstance(p, str))
    if name == "per_rotor":
        return f"'per_rotor' must be true or false, not {type_name(value)}"
    if name == "values":
        got = "an empty array" if value == [] else type_name(value)
        return f"a choice's 'values' must be a non-empty array, not {got}"
    if name == "weights" and not isinstance(problem.parts[-1], int):
        return (f"a choice's 'weights' must be an array of {len(table.get('values') or [])} numbers, one per "
                f"value; got {type_name(value)}")
    if problem.kind == "bound" and problem.finite:
        return f"{name!r} must be {problem.bound[0]} {problem.bound[1]:g}, not {show(float(value))}"
    if problem.kind == "bound":
        return f"{name!r} must be finite, not {value}"
    return f"{name!r} must be a number, not {type_name(value)}"
