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


def _flatten(out: dict[str, np.ndarray], name: str, data: np.ndarray) -> None:
    if data.ndim == 1:
        out[name] = np.ascontiguousarray(data)
        return
    flat = data.reshape(len(data), int(np.prod(data.shape[1:])))
    for i in range(flat.shape[1]):
        out[f"{name}[{i}]"] = np.ascontiguousarray(flat[:, i])
