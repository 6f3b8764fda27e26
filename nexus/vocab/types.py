"""Type checking and type text for values read from files: one rule for JSON, TOML and ``run.json`` alike.

A run's configuration, a controller's options, a sweep file and ``nexus params`` all check a value against a
field's type hint and, when it does not fit, name the type in words; they do both here so the words agree.
"""

from __future__ import annotations

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


__all__ = ["fits_type", "type_text"]
