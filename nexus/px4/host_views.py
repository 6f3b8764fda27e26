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
    """One slot's value of one device signal (``row``: the first, unless PX4 flies several vehicles of one world):
    ``value(field)`` for structs, ``values()`` otherwise."""

    def __init__(self, port, row: int = 0):
        array = port.array
        if array.device.is_cpu:
            self._copy = None
            host = array.numpy()
        else:
            staging = wp.empty(array.shape, dtype=array.dtype, device="cpu", pinned=True)
            self._copy = (staging, array)
            host = staging.numpy()
        self.host, self.row = host, int(row)
        #: Per struct field: a view of the slot's value, and whether it is an array (read with tolist).
        self.fields = {}
        for name in host.dtype.names or ():
            column = host[name]
            self.fields[name] = (column[self.row], True) if column.ndim > 1 else (column, False)

    def refresh(self) -> None:
        """On CUDA: copy the device value into the host view (before reading it)."""
        if self._copy is not None:
            wp.copy(*self._copy)

    def value(self, name: str):
        """One struct field of the slot, as a Python number or list."""
        view, is_array = self.fields[name]
        return view.tolist() if is_array else view.item(self.row)

    def values(self):
        """A value signal's slot, as a Python number (a scalar signal) or list."""
        return self.host[self.row].tolist() if self.host.ndim > 1 else self.host.item(self.row)

    def write(self, values) -> None:
        """Write a value signal's slot (on CUDA, copied to the device at once)."""
        self.host[self.row] = values
        if self._copy is not None:
            wp.copy(self._copy[1], self._copy[0])
