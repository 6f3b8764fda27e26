"""Device signals seen from the PX4 host stages through NumPy views made once.

On the CPU a Warp array's ``.numpy()`` is a view of its memory, but making one
costs about 70 µs, and a port's ``read()`` copies the sample and wraps it. The
exchange touches five signals every tick, so each is viewed once here, field
by field, and read as plain Python numbers (``tolist``/``item``: about a
microsecond each). On CUDA the view is of a pinned host copy, refreshed with
one copy per signal per tick (:meth:`HostView.refresh`): the floor there.
"""

from __future__ import annotations

import warp as wp


class HostView:
    """The first world's value of one device signal: ``value(field)`` for structs, ``values()`` otherwise."""

    def __init__(self, port):
        array = port.array
        if array.device.is_cpu:
            self._copy = None
            host = array.numpy()
        else:
            staging = wp.empty(array.shape, dtype=array.dtype, device="cpu", pinned=True)
            self._copy = (staging, array)
            host = staging.numpy()
        self.host = host
        #: Per struct field: a view of the first world's value, and whether it is an array (read with tolist).
        self.fields = {}
        for name in host.dtype.names or ():
            column = host[name]
            self.fields[name] = (column[0], True) if column.ndim > 1 else (column, False)

    def refresh(self) -> None:
        """On CUDA: copy the device value into the host view (before reading it)."""
        if self._copy is not None:
            wp.copy(*self._copy)

    def value(self, name: str):
        """One struct field of the first world, as a Python number or list."""
        view, is_array = self.fields[name]
        return view.tolist() if is_array else view.item(0)

    def values(self):
        """A value signal's first world, as a Python number (a scalar signal) or list."""
        return self.host[0].tolist() if self.host.ndim > 1 else self.host.item(0)

    def write(self, values) -> None:
        """Write a value signal's first world (on CUDA, copied to the device at once)."""
        self.host[0] = values
        if self._copy is not None:
            wp.copy(self._copy[1], self._copy[0])
