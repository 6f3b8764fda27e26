"""How a host stage touches signals: read by copy, write in place."""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from nexus.core.signals import type_name


class StructView:
    """A copy of one struct sample, read by attribute (``read().position``) or by key.

    Fields come back as NumPy scalars and arrays (a ``wp.vec3`` as 3 floats);
    :meth:`as_struct` gives a Warp struct instance when one is needed.
    """

    __slots__ = ("_record", "_dtype")

    def __init__(self, record: np.void, dtype: Any):
        self._record = record
        self._dtype = dtype

    def __getattr__(self, name: str) -> Any:
        try:
            return self._record[name]
        except (ValueError, KeyError, IndexError):
            raise AttributeError(f"{type_name(self._dtype)} has no field '{name}'") from None

    def __getitem__(self, name: str) -> Any:
        return self._record[name]

    @property
    def fields(self) -> tuple[str, ...]:
        return self._record.dtype.names

    def as_struct(self) -> Any:
        instance = self._dtype()
        for name in self.fields:
            setattr(instance, name, self._record[name].tolist() if self._record[name].ndim else self._record[name].item())
        return instance

    def __repr__(self) -> str:
        inner = ", ".join(f"{name}={self._record[name]}" for name in self.fields)
        return f"{type_name(self._dtype)}({inner})"


class DevicePort:
    """A host stage's handle on a device signal (or on the leading part of one).

    ``read()`` copies: a struct signal reads as one sample with its fields as
    attributes (``read().position``), a value signal as a NumPy array without
    the leading axis. ``write(value)`` copies into the existing buffer, so
    captured graphs see the new value on their next replay. On the CPU both go
    through a NumPy view of the buffer's own memory, made once.
    """

    def __init__(self, array: wp.array, dtype: Any, signal: str):
        self.array = array
        self.dtype = dtype
        self.signal = signal
        self.is_struct = wp.types.type_is_struct(dtype)
        self._host = array.numpy() if array.device.is_cpu else None

    def _current(self) -> np.ndarray:
        return self._host if self._host is not None else self.array.numpy()

    def read(self, row: int = 0) -> Any:
        """One slot's value, a copy (``row``: the first; PX4 reads each vehicle of a world)."""
        first = self._current()[row].copy()
        if self.is_struct:
            return StructView(first, self.dtype)
        return np.asarray(first)

    @property
    def worlds(self) -> int:
        return int(self.array.shape[0])

    def read_all(self) -> np.ndarray:
        """Every world's value, a copy with the world axis first (structs: a structured array)."""
        return np.array(self._current(), copy=True)

    def write_all(self, values: Any) -> None:
        """Every world's value at once (leading axis: worlds), for a host stage that serves all worlds."""
        scalar = getattr(self.dtype, "_wp_scalar_type_", self.dtype)
        target_shape = tuple(self.array.shape) + tuple(getattr(self.dtype, "_shape_", ()))
        data = np.asarray(values) if self.is_struct else np.asarray(values, dtype=wp.dtype_to_numpy(scalar))
        try:
            data = np.broadcast_to(data, target_shape)
        except ValueError:
            raise ValueError(f"signal '{self.signal}' takes values of shape {target_shape}; got shape {data.shape}") from None
        if self._host is not None:
            self._host[...] = data
        else:
            wp.copy(self.array, wp.array(np.ascontiguousarray(data), dtype=self.dtype, device=self.array.device))

    def write(self, value: Any) -> None:
        if self.is_struct:
            self._write_struct(value)
            return
        scalar = getattr(self.dtype, "_wp_scalar_type_", self.dtype)
        data = np.asarray(value, dtype=wp.dtype_to_numpy(scalar))
        target_shape = tuple(self.array.shape[1:]) + tuple(getattr(self.dtype, "_shape_", ()))
        try:
            data = np.broadcast_to(data, target_shape)
        except ValueError:
            raise ValueError(
                f"signal '{self.signal}' takes values of shape {target_shape}; got shape {data.shape}"
            ) from None
        if self._host is not None:
            self._host[0] = data
        elif self.array.is_contiguous:
            self.array.assign(data[np.newaxis])
        else:
            # A view into a wider buffer: copy through a staging array.
            wp.copy(self.array, wp.array(data[np.newaxis], dtype=self.dtype, device=self.array.device))

    def _write_struct(self, value: Any) -> None:
        if not isinstance(value, (StructView, self.dtype.instance_type)):
            raise TypeError(
                f"signal '{self.signal}' holds {type_name(self.dtype)} structs; cannot write a {type(value).__name__}"
            )
        if self._host is not None:
            self._host[0] = value._record if isinstance(value, StructView) else value.numpy_value()
        else:
            self.array.assign([value.as_struct() if isinstance(value, StructView) else value])


class HostSlot:
    """The buffer of a host signal: one Python object, replaced in place."""

    def __init__(self, signal: str, value: Any = None):
        self.signal = signal
        self.value = value
        self.written = False

    def read(self) -> Any:
        return self.value

    def write(self, value: Any) -> None:
        self.value = value
        self.written = True
