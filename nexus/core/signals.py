"""Signal declarations: what a stage reads and writes, and where its buffer lives.

A signal whose type is a Warp struct or a Warp value type (``wp.float32``,
``wp.vec3``, ...) lives on the device as a Warp array whose leading axis is 1:
shape ``(1,)`` for one value or struct, ``(1, n)`` for a row such as the 16
controls. Any other type is a host signal whose buffer holds one Python object.

A reader whose type is ``list[T]`` takes every writer of the signal, in the
order the components were declared: an empty list when none writes it.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from typing import Any

import warp as wp

#: Marks a declaration that gives no default.
NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()


def is_device_type(dtype: Any) -> bool:
    """True for Warp structs and Warp value types: their signals live on the device."""
    return wp.types.type_is_struct(dtype) or wp.types.type_is_value(dtype)


def list_element(dtype: Any) -> Any | None:
    """``T`` for ``list[T]``, else ``None``."""
    if typing.get_origin(dtype) is list:
        (element,) = typing.get_args(dtype)
        return element
    return None


def type_name(dtype: Any) -> str:
    """A short, readable name for a signal type, used in error messages."""
    element = list_element(dtype)
    if element is not None:
        return f"list[{type_name(element)}]"
    if wp.types.type_is_struct(dtype):
        return dtype.key.split(".")[-1] if hasattr(dtype, "key") else str(dtype)
    return getattr(dtype, "__name__", None) or str(dtype)


@dataclass(frozen=True)
class Write:
    """A signal a stage writes. The loop allocates its buffer before any stage runs.

    ``prim`` names the prim this output belongs to when that is not the writing
    component's own (the plant writes ``body/<label>`` for each body prim), so a
    connection to that prim finds it. ``recorded`` outputs are tapped by the record.
    """

    signal: str
    dtype: Any
    shape: tuple[int, ...] | None = None
    default: Any = NO_DEFAULT
    prim: str | None = None
    recorded: bool = False


@dataclass(frozen=True)
class Read:
    """A signal a stage reads.

    ``shape`` may be smaller than the writer's along any axis: the reader then
    takes the leading part of the buffer as a view (the rotors read 4 of the 16
    controls). ``default`` fills that buffer until the writer first writes, or
    is the constant value when no component writes the signal.
    """

    signal: str
    dtype: Any
    shape: tuple[int, ...] | None = None
    default: Any = NO_DEFAULT

    @property
    def is_list(self) -> bool:
        return list_element(self.dtype) is not None

    @property
    def element_type(self) -> Any:
        element = list_element(self.dtype)
        return self.dtype if element is None else element
