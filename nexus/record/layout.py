"""How a tapped signal's bytes become named scalar columns.

The recorder copies each tapped buffer word for word (32-bit words), so a
row holds the signal's exact bits whatever its type. A :class:`TapLayout`
knows the NumPy dtype of those bytes and names one column per scalar:
``imu.time``, ``imu.accel[0]``, ``controls[3]``, ``time``. The prefix is the
signal's name, or its ``label`` when two components write the signal
(``imu/ImuQuiet.accel[0]``, see :mod:`nexus.record.recorder`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp


def numpy_dtype(dtype: Any) -> np.dtype:
    """NumPy dtype of one element of a Warp struct or value type."""
    if wp.types.type_is_struct(dtype):
        return np.dtype(dtype.numpy_dtype())
    scalar = getattr(dtype, "_wp_scalar_type_", dtype)
    shape = tuple(getattr(dtype, "_shape_", ()))
    base = np.dtype(wp.dtype_to_numpy(scalar))
    return np.dtype((base, shape)) if shape else base


@dataclass(frozen=True)
class TapLayout:
    signal: str
    dtype: Any
    #: Shape of the tapped buffer, e.g. (1,) or (1, 16).
    shape: tuple[int, ...]
    #: First word of this tap in a row.
    offset: int
    #: Column prefix when it is not the signal's name (one of several writers: ``imu/ImuQuiet``).
    label: str | None = None

    @property
    def name(self) -> str:
        """The prefix of this tap's columns."""
        return self.label or self.signal

    @property
    def element(self) -> np.dtype:
        return numpy_dtype(self.dtype)

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape))

    @property
    def words(self) -> int:
        size = self.element.itemsize * self.elements
        if size % 4:
            raise ValueError(f"signal '{self.name}' is {size} bytes, not a whole number of 32-bit words")
        return size // 4

    def scalars(self) -> list[tuple[str, int, np.dtype]]:
        """(column name, byte offset in the tap, scalar dtype) of every column, in :meth:`columns`'s order."""
        element = self.element
        out: list[tuple[str, int, np.dtype]] = []
        many = self.elements > 1
        for e in range(self.elements):
            prefix = f"{self.name}[{e}]" if many else self.name
            _scalars_of(out, prefix, element, e * element.itemsize)
        return out

    def word_columns(self, words: np.ndarray) -> dict[str, np.ndarray] | None:
        """Named scalar columns from ``words`` (uint32, one row per word of a record row, one column per tick).

        A scalar of one word is a view of its row, with no copy; one of two words (``time``, a
        float64) is interleaved once. None when a scalar does not sit on whole words (use :meth:`columns`).
        """
        out: dict[str, np.ndarray] = {}
        for name, offset, dtype in self.scalars():
            if offset % 4 or dtype.itemsize % 4:
                return None
            first, count = self.offset + offset // 4, dtype.itemsize // 4
            if count == 1:
                out[name] = words[first].view(dtype)
            else:
                out[name] = np.ascontiguousarray(words[first:first + count].T).view(dtype).reshape(-1)
        return out

    def columns(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """Named scalar columns from ``rows`` (uint32, one row per tick)."""
        # A view of this tap's words as its own type (rows whose last axis is contiguous may change
        # dtype in place); each column below is then copied once, contiguous, from it.
        raw = rows[:, self.offset : self.offset + self.words]
        if raw.strides[-1] != raw.itemsize:
            raw = np.ascontiguousarray(raw)
        values = raw.view(self.element).reshape(len(rows), self.elements)
        out: dict[str, np.ndarray] = {}
        many = self.elements > 1
        for e in range(self.elements):
            prefix = f"{self.name}[{e}]" if many else self.name
            item = values[:, e]
            if values.dtype.names:
                for field in values.dtype.names:
                    _flatten(out, f"{prefix}.{field}", item[field])
            else:
                _flatten(out, prefix, item)
        return out


def _scalars_of(out: list, name: str, dtype: np.dtype, offset: int) -> None:
    if dtype.names:
        for field in dtype.names:
            field_dtype, field_offset = dtype.fields[field][:2]
            _scalars_of(out, f"{name}.{field}", field_dtype, offset + field_offset)
    elif dtype.subdtype is not None:
        base, shape = dtype.subdtype
        for i in range(int(np.prod(shape))):
            _scalars_of(out, f"{name}[{i}]", base, offset + i * base.itemsize)
    else:
        out.append((name, offset, dtype))


def transposed(rows: np.ndarray, block: int = 256) -> np.ndarray:
    """``rows`` (ticks, words) as (words, ticks), contiguous, copied a block of ticks at a time.

    One strided copy per column reads every row's cache line once per column; blocks of a
    few hundred rows stay in cache (a 16-world table of 10,240 slots: 43 ms against 94 ms).
    """
    out = np.empty((rows.shape[1], rows.shape[0]), dtype=rows.dtype)
    for start in range(0, rows.shape[0], block):
        out[:, start:start + block] = rows[start:start + block].T
    return out


def _flatten(out: dict[str, np.ndarray], name: str, data: np.ndarray) -> None:
    if data.ndim == 1:
        out[name] = np.ascontiguousarray(data)
        return
    flat = data.reshape(len(data), int(np.prod(data.shape[1:])))
    for i in range(flat.shape[1]):
        out[f"{name}[{i}]"] = np.ascontiguousarray(flat[:, i])
