"""How a host stage touches signals: read by copy, write in place."""

from __future__ import annotations

from typing import Any

import numpy as np
import warp as wp

from nexus.core.signals import type_name


class DevicePort:
    """A host stage's handle on a device signal (or on the leading part of one).

    ``read()`` copies: a struct signal reads as one instance of its struct
    (``read().position``), a value signal as a NumPy array without the leading
    axis. ``write(value)`` copies into the existing buffer, so captured graphs
    see the new value on their next replay.
    """

    def __init__(self, array: wp.array, dtype: Any, signal: str):
        self.array = array
        self.dtype = dtype
        self.signal = signal
        self.is_struct = wp.types.type_is_struct(dtype)

    def read(self) -> Any:
        if self.is_struct:
            return self.array.list()[0]
        return np.array(self.array.numpy()[0], copy=True)

    def write(self, value: Any) -> None:
        if self.is_struct:
            if not isinstance(value, self.dtype.instance_type):
                raise TypeError(
                    f"signal '{self.signal}' holds {type_name(self.dtype)} structs; "
                    f"cannot write a {type(value).__name__}"
                )
            self.array.assign([value])
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
        staged = data[np.newaxis]
        if self.array.is_contiguous:
            self.array.assign(staged)
        else:
            # A view into a wider buffer: copy through a staging array.
            wp.copy(self.array, wp.array(staged, dtype=self.dtype, device=self.array.device))


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
