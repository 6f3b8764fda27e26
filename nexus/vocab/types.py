"""Type checking and type text for values read from files: one rule for JSON, TOML and ``run.json`` alike.

A run's configuration, a controller's options, a sweep file and ``nexus params`` all check a value against a
field's type hint and, when it does not fit, name the type in words; they do both here so the words agree.
A value that fails a check is named the same way everywhere too (:func:`type_name`, :func:`show`).
"""

from __future__ import annotations

import numbers
import types
import typing
from typing import Any


def _is_union(hint: Any) -> bool:
    return isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union


def fits_type(value: Any, hint: Any) -> bool:
    """Whether a JSON or TOML value fits a field's type hint (an int fits a float; a bool is not a number)."""
    if _is_union(hint):
        return any(fits_type(value, part) for part in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, typing.get_origin(hint) or hint)


def type_text(hint: Any, *, none: bool = True) -> str:
    """A type hint in words: ``float or null``; ``none`` False leaves the None of an optional out (``float``),
    for a file that cannot hold a null (TOML) or a table that says "none" in a column of its own."""
    if _is_union(hint):
        parts = typing.get_args(hint) if none else [p for p in typing.get_args(hint) if p is not type(None)]
        return " or ".join(type_text(part, none=none) for part in parts)
    if hint is type(None):
        return "null"
    return getattr(hint, "__name__", str(hint))


def is_number(value: Any) -> bool:
    """A real number that is not a boolean (TOML's ``true`` is no number)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def type_name(value: Any) -> str:
    """A value's type in words, with the value: ``a string ('x')``."""
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, str):
        return f"a string ({value!r})"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if is_number(value):
        return f"a number ({value!r})"
    return f"a {type(value).__name__} ({value})"


def show(value: Any) -> str:
    """A value as an error shows it (six significant digits, strings quoted)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, str):
        return repr(value)
    return str(value)


__all__ = ["fits_type", "is_number", "show", "type_name", "type_text"]
