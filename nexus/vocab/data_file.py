"""Nexus's TOML data files, read and checked one way: each format is declared once as :mod:`msgspec` structures.

A format (the sweep file, the variation file, the scenario file, the airframe source, the gym's draws) declares
its tables as ``msgspec.Struct`` classes: the keys each takes, their types, their bounds and, for a table of
several kinds (a scenario step by ``do``, a variation distribution by ``dist``), a tagged union. :func:`check`
validates the parsed TOML against that declaration; msgspec stops at the first thing wrong and says where
(``$.step[1].height``) and why (``Expected `float` >= 0.0``). :func:`problem_of` turns that into a
:class:`Problem` in Nexus's own terms (the key, what is wrong, the value the file holds, the keys or values
allowed there), and each format words it as its one-line sentence naming the file, the key and the fix.

Rules a type cannot say (a window inside the run, a gust that ends before it, the sum of two keys) stay in
each format's code, after the check. ``docs/data_files.md`` lists the formats and where each is declared.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec
import msgspec.inspect as mi

T = TypeVar("T")

#: The largest finite float: a bound that refuses ``inf`` and ``nan`` (TOML writes both) where a number is asked.
_BIG = 1.7976931348623157e308
#: A finite number (an int is read as a float); ``inf`` and ``nan`` fail its bounds.
Number = Annotated[float, msgspec.Meta(ge=-_BIG, le=_BIG)]
#: A finite number, 0 or more.
NonNegative = Annotated[float, msgspec.Meta(ge=0.0, le=_BIG)]
#: A finite number above 0.
Positive = Annotated[float, msgspec.Meta(gt=0.0, le=_BIG)]
#: A whole number, 0 or more.
Count = Annotated[int, msgspec.Meta(ge=0)]


def fix(text: str) -> msgspec.Meta:
    """The fix a key's sentence gives when its value is wrong: ``Annotated[Count, fix("give a whole number")]``
    (read back as :attr:`Problem.fix`)."""
    return msgspec.Meta(extra={"fix": text})


class _Missing:
    """The value of a key the file does not hold."""

    def __repr__(self) -> str:
        return "missing"


#: :attr:`Problem.value` of a key the file does not hold.
MISSING = _Missing()


@dataclass(frozen=True)
class Problem:
    """The first thing wrong with a data file, in the file's own terms."""

    #: Where, as the file writes it: ``step[1].height`` (a missing or unknown key included).
    key: str
    #: What: ``unknown`` (a key no table takes), ``missing`` (a required key), ``type`` (a value of the wrong
    #: type), ``bound`` (a number out of bounds), ``choice`` (a value not among those allowed), ``length``
    #: (an array of the wrong length).
    kind: str
    #: The value the file holds at ``key`` (:data:`MISSING` when it holds none).
    value: Any
    #: ``key``'s parts: ``("step", 1, "height")``.
    parts: tuple
    #: The keys the table at ``parts[:-1]`` takes, in declaration order (a tagged table's tag first).
    allowed: tuple[str, ...] = ()
    #: The values allowed (``choice``).
    choices: tuple = ()
    #: The type expected (``type``), in msgspec's words: ``float``, ``int``, ``str``, ``bool``, ``array``, ``object``.
    expected: str = ""
    #: ``bound``: the side (``>=``, ``>``, ``<=``, ``<``) and the number.
    bound: tuple[str, float] | None = None
    #: ``length``: the side (``>=``, ``<=``) and the length.
    length: tuple[str, int] | None = None
    #: The fix the declaration gives for this key (:func:`fix`; an item of an array or of a table of
    #: name = value without one of its own: the array's or the table's), or ``""``.
    fix: str = ""

    @property
    def name(self) -> str:
        """The last part of the key (its name in its table)."""
        return str(self.parts[-1]) if self.parts else ""

    @property
    def table(self) -> str:
        """The key of the table holding it (``step[1]``), ``""`` at the top."""
        return key_text(self.parts[:-1])

    @property
    def finite(self) -> bool:
        """Whether the value is a number that is finite (a ``bound`` problem of ``inf`` or ``nan`` is not one)."""
        return (isinstance(self.value, (int, float)) and not isinstance(self.value, bool)
                and math.isfinite(self.value))


def key_text(parts: tuple) -> str:
    """``("step", 1, "height")`` as ``step[1].height``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def read_toml(path: Path, *, unreadable: Callable[[OSError], Exception],
              invalid: Callable[[Exception], Exception]) -> dict:
    """The file's TOML. ``unreadable`` words a file that cannot be read, ``invalid`` one that is not UTF-8
    TOML (a :class:`UnicodeDecodeError` or a :class:`tomllib.TOMLDecodeError`); each returns the error to raise."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise unreadable(error) from None
    try:
        return tomllib.loads(raw.decode())
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise invalid(error) from None


def check(data: Any, declared: type[T], word: Callable[[Problem], Exception]) -> T:
    """``data`` (parsed TOML) as the ``declared`` structure; on the first thing wrong, the error ``word`` makes
    of its :class:`Problem`."""
    try:
        return msgspec.convert(data, declared, strict=True)
    except msgspec.ValidationError as error:
        raise word(problem_of(error, data, declared)) from None


def did_you_mean(word: str, choices) -> str:
    """`` did you mean 'mass'?`` when ``word`` is close to one of ``choices``, else ``""``."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    return f" did you mean {close[0]!r}?" if close else ""


def fields_of(struct: type) -> tuple[str, ...]:
    """The keys a structure takes, as the file writes them (its tag first, for a tagged one)."""
    info = mi.type_info(struct)
    return _allowed(info)


# -- msgspec's message, read back ------------------------------------------------------------------------------

_AT = re.compile(r"^(?P<reason>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def problem_of(error: msgspec.ValidationError, data: Any, declared: Any) -> Problem:
    """msgspec's ``Expected `float` >= 0.0 - at `$.step[1].x``` as a :class:`Problem` of the file ``data``."""
    match = _AT.match(str(error))
    reason, path = match.group("reason"), match.group("path") or ""
    info = mi.type_info(declared)
    parts: list = []
    value: Any = data
    holder: Any = None  # the type of the table or list holding the value
    item = False  # whether the value is an item of an array or of a table of name = value
    for name, index in _STEP.findall(path):
        holder, item = info, bool(index)
        if index == "...":  # a table of name = value: msgspec names no key; the first whose value fails
            value_type = _strip(info).value_type
            name = next((k for k, v in value.items() if not _fits(v, value_type)), next(iter(value), "?"))
            parts.append(name)
            value, info = value.get(name, MISSING), value_type
        elif index:
            parts.append(int(index))
            value, info = (value[int(index)] if isinstance(value, list) else MISSING), _strip(info).item_type
        else:
            parts.append(name)
            value, info = (value.get(name, MISSING) if isinstance(value, dict) else MISSING), _field_type(info, name,
                                                                                                            value)
    field = re.search(r"field `([^`]*)`", reason)
    if reason.startswith("Object contains unknown field"):
        return _problem(parts + [field.group(1)], "unknown", value.get(field.group(1), MISSING), info, value)
    if reason.startswith("Object missing required field"):
        return _problem(parts + [field.group(1)], "missing", MISSING, info, value,
                        fix=_fix(_field_type(info, field.group(1), value)))
    parent = _parent(declared, data, parts)
    more = {"fix": _fix(info) or (_fix(holder) if item else "")}
    if reason.startswith("Invalid"):  # an enum or literal value, or a tagged table's tag
        tagged = _strip(parent[0]) if parent else None
        if isinstance(tagged, mi.UnionType):
            choices = tuple(s.tag for s in tagged.types if isinstance(s, mi.StructType) and s.tag is not None)
        else:
            choices = tuple(getattr(_strip(info), "values", ()) or ())
        return _problem(parts, "choice", value, None, None, choices=choices, owner=parent, **more)
    bound = re.match(r"Expected `(\w+)` (>=|>|<=|<) (\S+)$", reason)
    if bound:
        return _problem(parts, "bound", value, None, None, owner=parent,
                        bound=(bound.group(2), float(bound.group(3))), expected=bound.group(1), **more)
    length = re.match(r"Expected `\w+` of length (>=|<=) (\d+)$", reason)
    if length:
        return _problem(parts, "length", value, None, None, owner=parent,
                        length=(length.group(1), int(length.group(2))), expected="array", **more)
    expected = re.match(r"Expected `([^`]*)`", reason)
    return _problem(parts, "type", value, None, None, owner=parent,
                    expected=expected.group(1).removesuffix(" | null") if expected else "", **more)


def _problem(parts: list, kind: str, value: Any, table_info: Any, table_value: Any, *, owner=None,
             **more) -> Problem:
    """The problem at ``parts``; ``table_info`` (or ``owner``'s) gives the keys its table takes."""
    if owner is not None:
        table_info, table_value = owner
    allowed = _allowed(_pick(table_info, table_value)) if table_info is not None else ()
    return Problem(key_text(tuple(parts)), kind, value, tuple(parts), allowed, **more)


def _parent(declared: Any, data: Any, parts: list) -> tuple | None:
    """The type and value of the table holding ``parts``'s last key, or None at the top."""
    if not parts:
        return None
    info, value = mi.type_info(declared), data
    for part in parts[:-1]:
        if isinstance(part, int):
            info, value = _strip(info).item_type, value[part]
        elif isinstance(_strip(info), mi.DictType):
            info, value = _strip(info).value_type, value[part]
        else:
            info, value = _field_type(info, part, value), value[part]
    return info, value


def _fix(info: Any) -> str:
    """The fix a key's declaration gives (its :func:`fix`), or ``""``."""
    while isinstance(info, (mi.Metadata, mi.UnionType)):
        if isinstance(info, mi.Metadata):
            if (info.extra or {}).get("fix"):
                return info.extra["fix"]
            info = info.type
        else:
            types = [t for t in info.types if not isinstance(t, mi.NoneType)]
            if len(types) != 1:
                return ""
            info = types[0]
    return ""


def _strip(info: Any) -> Any:
    """A type without its metadata and its ``None`` (an optional table is the table)."""
    while isinstance(info, mi.Metadata):
        info = info.type
    if isinstance(info, mi.UnionType):
        types = [t for t in info.types if not isinstance(t, mi.NoneType)]
        if len(types) == 1:
            return _strip(types[0])
    return info


def _pick(info: Any, value: Any) -> Any:
    """Of a tagged union, the structure ``value``'s tag names (the first when none does)."""
    info = _strip(info)
    if isinstance(info, mi.UnionType):
        structs = [t for t in info.types if isinstance(t, mi.StructType)]
        for struct in structs:
            if isinstance(value, dict) and struct.tag_field and value.get(struct.tag_field) == struct.tag:
                return struct
        return structs[0] if structs else info
    return info


def _field_type(info: Any, name: str, value: Any) -> Any:
    struct = _pick(info, value)
    if isinstance(struct, mi.DictType):
        return struct.value_type
    for field in getattr(struct, "fields", ()):
        if field.encode_name == name:
            return field.type
    return None


def _allowed(info: Any) -> tuple[str, ...]:
    info = _strip(info)
    if not isinstance(info, mi.StructType):
        return ()
    names = tuple(f.encode_name for f in info.fields)
    return (info.tag_field, *names) if info.tag_field else names


def _fits(value: Any, info: Any) -> bool:
    """Whether ``value`` converts to the type ``info`` describes (for a table of name = value)."""
    try:
        msgspec.convert({"v": value}, msgspec.defstruct("_One", [("v", _python_type(info))]), strict=True)
    except (msgspec.ValidationError, TypeError):
        return False
    return True


def _python_type(info: Any) -> Any:
    """A Python annotation for the few value types a table of name = value holds."""
    info = _strip(info)
    if isinstance(info, mi.FloatType):
        return Annotated[float, msgspec.Meta(ge=info.ge, gt=info.gt, le=info.le, lt=info.lt)]
    if isinstance(info, mi.IntType):
        return Annotated[int, msgspec.Meta(ge=info.ge, gt=info.gt, le=info.le, lt=info.lt)]
    simple = {mi.StrType: str, mi.BoolType: bool, mi.AnyType: Any}
    return simple.get(type(info), Any)
