"""State owned by the engine: allocated from the specs, reset at start, snapshot and restored.

Every :class:`~nexus.core.spec.StateVar` a component's spec declares becomes
one Warp array of shape ``(worlds, *shape)``, allocated by the loop beside the
signal buffers (one world today; the leading axis is the world axis, as it is
for signals). A stage reaches its component's state through
``io.state_in[name]`` and ``io.state_out[name]``, and its kernels take both
as arguments: the forward run binds the same array to both (the state
advances in place, which a captured graph replays), while a differentiable
caller can bind a fresh ``state_out`` per step and keep every step's state
for the backward pass, without touching a kernel.

A :class:`TickState` snapshot holds copies of everything a tick reads and
writes: every device signal, every declared state array, the done flag, the
arrays a component reports through ``Component.external_state`` (the physics
solver's own state), and the host signals' values. Restoring it copies the
values back into the same arrays, so captured graphs stay valid and the next
ticks repeat bit for bit.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import warp as wp

from nexus.core.errors import BuildError
from nexus.core.spec import StateVar

#: Worlds per run. Every signal's and every state array's leading axis has this length.
WORLDS = 1


def _numpy_scalar(dtype: Any) -> Any:
    return wp.dtype_to_numpy(getattr(dtype, "_wp_scalar_type_", dtype))


def _fill(array: wp.array, var: StateVar, value: Any, where: str) -> None:
    if wp.types.type_is_struct(var.dtype):
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        if len(values) == 1:
            values = values * int(np.prod(array.shape))
        array.assign(wp.array(values, dtype=var.dtype, device=array.device).reshape(array.shape))
        return
    element = tuple(getattr(var.dtype, "_shape_", ()))
    target = tuple(array.shape) + element
    try:
        data = np.broadcast_to(np.asarray(value, dtype=_numpy_scalar(var.dtype)), target)
    except ValueError as error:
        raise BuildError(f"the reset value of {where} does not fit shape {target}: {error}") from None
    array.assign(np.ascontiguousarray(data))


def _fill_worlds(array: wp.array, var: StateVar, values: list, where: str) -> None:
    """Each world's reset value into its slice of ``array`` (leading axis: worlds)."""
    if len(values) == 1:
        _fill(array, var, values[0], where)
        return
    if wp.types.type_is_struct(var.dtype):
        per = int(np.prod(array.shape[1:]))
        flat = []
        for value in values:
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            flat.extend(items * per if len(items) == 1 else items)
        array.assign(wp.array(flat, dtype=var.dtype, device=array.device).reshape(array.shape))
        return
    element = tuple(getattr(var.dtype, "_shape_", ()))
    target = tuple(array.shape[1:]) + element
    try:
        data = np.stack([np.broadcast_to(np.asarray(v, dtype=_numpy_scalar(var.dtype)), target) for v in values])
    except ValueError as error:
        raise BuildError(f"the reset value of {where} does not fit shape {target}: {error}") from None
    array.assign(np.ascontiguousarray(data))


class StateStore:
    """The declared state of every component of one ring."""

    def __init__(self, components: Iterable[Any], device: str, worlds: int = WORLDS):
        self.device = device
        self.worlds = int(worlds)
        self._vars: dict[str, tuple[Any, StateVar]] = {}
        self._arrays: dict[str, dict[str, wp.array]] = {}
        for component in components:
            spec = getattr(component, "spec", None)
            arrays: dict[str, wp.array] = {}
            for var in (spec.all_state if spec is not None else ()):
                arrays[var.name] = wp.zeros((self.worlds, *var.shape), dtype=var.dtype, device=device)
                self._vars[f"{component.name}:{var.name}"] = (component, var)
            self._arrays[component.name] = arrays

    def of(self, component: Any) -> dict[str, wp.array]:
        """Name -> array for ``component`` (empty when it declares no state)."""
        return self._arrays.get(component.name, {})

    def reset(self, ctx: Any) -> None:
        """Give every state array its declared reset value.

        A callable reset is asked once per world, with that world's context
        (``ctx.for_world(w)``: its random tree and drawn values), so world ``i``
        starts as the one-world run of world ``i`` would.
        """
        for key, (component, var) in self._vars.items():
            where = f"state '{var.name}' of '{component.name}'"
            array = self._arrays[component.name][var.name]
            if not callable(var.reset):
                _fill(array, var, var.reset, where)
                continue
            per_world = [var.reset(component, ctx.for_world(w) if hasattr(ctx, "for_world") else ctx)
                         for w in range(self.worlds)]
            _fill_worlds(array, var, per_world, where)

    def arrays(self) -> dict[str, wp.array]:
        """``<component>:<state>`` -> array, for snapshots."""
        return {key: self._arrays[component.name][var.name] for key, (component, var) in self._vars.items()}


@dataclass
class TickState:
    """A copy of a ring's whole tick state (see the module doc); restore it with ``Loop.restore``."""

    #: Tick count when it was taken.
    ticks: int
    finished: bool
    device: dict[str, wp.array]
    host: dict[str, Any]


def take(ticks: int, finished: bool, device_arrays: dict[str, wp.array], host_values: dict[str, Any]) -> TickState:
    """Copy every array (on its own device) and every host value."""
    return TickState(
        ticks, finished,
        {key: wp.clone(array) for key, array in device_arrays.items()},
        copy.deepcopy(host_values),
    )


def put_back(snapshot: TickState, device_arrays: dict[str, wp.array]) -> None:
    """Copy a snapshot's arrays back into the live ones (the same keys, shapes and types)."""
    missing = sorted(set(device_arrays) ^ set(snapshot.device))
    if missing:
        raise BuildError(f"this snapshot was taken from another ring: arrays {missing[:5]} differ")
    for key, array in device_arrays.items():
        wp.copy(array, snapshot.device[key])
