"""Faults fired by a condition on the flight (a scenario's ``[[fault]] when = {...}``), as a host stage.

What a scenario's report says of them is in :mod:`nexus.scenario.fault_trigger`.

A fault with ``when`` is built as a fault with ``at`` would be (the propellers, the PID told of failures and
the sensor-fault stage hold its per-world fail time [ns] on the device), but with the fail time
:data:`PENDING_S`, which no run reaches. Each tick this stage measures the condition on the truth state, and
on the first tick ``k`` where it holds it writes the time of tick ``k + 1`` into those same arrays, so from
tick ``k + 1`` on the flight is the flight of ``at = (k + 1) · tick``, bit for bit.

The conditions, in the scenario's NED frame (origin where the vehicle settled at the start):

``altitude_above``              the base is higher than the origin by more than this [m]
``distance_from_start_above``   the base is further from the origin than this, horizontally [m]
``speed_above``                 the base's speed is above this [m/s] (the norm of its recorded velocity, as the
                                ``speed`` check measures it)
``step``                        the mission step of this index has begun (the recorded ``mission_step``)

The stage writes ``fault_tick/<i>`` (``i``: the fault's index in the file), -1 until the fault fires and the
firing tick from then on, recorded every tick. It serves world 0 only: a scenario flies one world.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.plant.body_state import BodyState

#: The fail time [s] a fault waiting for its condition is built with: finite (so its owners build the fault)
#: but later than any run (about 32 years of sim time).
PENDING_S = 1.0e9
#: The conditions ``when`` takes: key -> unit.
CONDITIONS = {"altitude_above": "m", "distance_from_start_above": "m", "speed_above": "m/s", "step": "-"}
#: What the record holds before a fault fires.
NOT_FIRED = -1


def fault_tick_signal(index: int) -> str:
    """The recorded signal (and record column) of fault ``index``'s firing tick."""
    return f"fault_tick/{index}"


class FaultTrigger(Component):
    """Fires each ``when`` fault on the tick after its condition first holds."""

    def __init__(self, plant, triggers: list[dict], name: str = "/scenario/fault_trigger"):
        super().__init__(name)
        self.plant = plant
        #: Each: ``fault`` (index in the file), ``target`` (``rotor`` or ``sensor:<label>``), ``when`` (one key).
        self.triggers = [dict(t) for t in triggers]
        self._body = f"body/{plant.body_label(plant.base_path)}"
        self._clocks = None
        #: Per trigger: the tick it fires at (None while its condition has not held).
        self.fire_tick: list[int | None] = [None] * len(self.triggers)

    def stages(self) -> list[Stage]:
        reads = [Read("tick", wp.int64, (1,)), Read(self._body, BodyState, (1,))]
        if any("step" in t["when"] for t in self.triggers):
            reads.append(Read("mission_step", wp.int32, (1,)))
        writes = tuple(Write(fault_tick_signal(t["fault"]), wp.int32, (1,), NOT_FIRED, recorded=True)
                       for t in self.triggers)
        return [Stage("fault_trigger", "guide", self.run, reads=tuple(reads), writes=writes, host=True)]

    def prepare(self, ctx) -> None:
        self.dt_ns = ctx.dt_ns
        self.components = ctx.components
        self._clocks = None
        self.fire_tick = [None] * len(self.triggers)

    def _find_clocks(self) -> list[list]:
        """Each trigger's fail-time arrays, gathered from the components that hold them (after they prepared)."""
        found = []
        for trigger in self.triggers:
            arrays = [a for c in self.components if hasattr(c, "fault_clocks")
                      for a in c.fault_clocks().get(trigger["target"], ())]
            if not arrays:
                raise BuildError(f"fault[{trigger['fault']}]: no stage of this ring holds the fail time of "
                                 f"{trigger['target']!r}; the fault cannot fire")
            found.append(arrays)
        return found

    def holds(self, when: dict, io) -> bool:
        """Whether the condition holds on this tick's truth state (world 0)."""
        (key, bound), = when.items()
        if key == "step":
            return int(np.asarray(io["mission_step"].read()).reshape(-1)[0]) >= bound
        state = io[self._body].read()
        if key == "speed_above":
            velocity = np.asarray(state.velocity, dtype=np.float64)
            return float(np.linalg.norm(velocity)) > bound
        position = np.asarray(state.pose, dtype=np.float64)[:3]
        origin = self.plant.ned_origin.numpy()[0].astype(np.float64)
        if key == "altitude_above":
            return float(position[2] - origin[2]) > bound
        return float(np.hypot(position[0] - origin[0], position[1] - origin[1])) > bound

    def run(self, io) -> None:
        if self._clocks is None:
            self._clocks = self._find_clocks()
        tick = int(np.asarray(io["tick"].read()).reshape(-1)[0])
        for i, trigger in enumerate(self.triggers):
            fire = self.fire_tick[i]
            if fire is not None:
                if fire == tick:  # the first tick the fault acted: the record shows it from here
                    io[fault_tick_signal(trigger["fault"])].write(fire)
                continue
            if self.holds(trigger["when"], io):
                self.fire_tick[i] = tick + 1
                for array in self._clocks[i]:
                    _set_world(array, 0, (tick + 1) * self.dt_ns)


def _set_world(array, world: int, value_ns: int) -> None:
    """One world's element of a device int64 array, in place (a captured graph reads it on its next replay)."""
    if array.device.is_cpu:
        array.numpy()[world] = value_ns
    else:
        wp.copy(array, wp.array([value_ns], dtype=wp.int64, device=array.device), dest_offset=world, count=1)
