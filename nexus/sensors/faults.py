"""Sensor faults drawn per world (``--vary sensor_fault_*``): a sensor that freezes or drops out.

A sensor stage of its own, declared after every sensor so it runs after
them within the ``sensor`` kind (kinds run in ring order, and within a kind
stages run in declaration order). For each sensor some world's fault names,
one launch over the worlds works on the sample's 32-bit words in place:

- before the world's fault time it keeps a copy of the sample;
- from then on, ``freeze`` puts the copy's values back but keeps the new
  time stamp (a stuck sensor: the same numbers, fresh times), and
  ``dropout`` puts the whole copy back, time included (no new samples).

Every sample struct starts with its time (``wp.float64``: two words), which
is what ``freeze`` leaves alone. Without a sensor fault the stage is not in
the ring (``from_draws`` gives none), so a run without one keeps its bits.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.clock import NEVER_NS, at_ns
from nexus.core.errors import BuildError
from nexus.record.layout import numpy_dtype
from nexus.sensors.sensor import Sensor
from nexus.vocab import drawn

FREEZE = wp.constant(0)
DROPOUT = wp.constant(1)
MODES = {"freeze": 0, "dropout": 1}
#: Words of a sample's leading time field, which a frozen sensor keeps stamping.
TIME_WORDS = wp.constant(2)


@wp.kernel
def fault_samples(
    time_ns: wp.array(dtype=wp.int64),
    fault_ns: wp.array(dtype=wp.int64),
    mode: wp.array(dtype=wp.int32),
    sample: wp.array2d(dtype=wp.uint32),
    held: wp.array2d(dtype=wp.uint32),
):
    world = wp.tid()
    words = sample.shape[1]
    if time_ns[world] < fault_ns[world]:
        for k in range(words):
            held[world, k] = sample[world, k]
        return
    first = int(0)
    if mode[world] == FREEZE:
        first = TIME_WORDS
    for k in range(first, words):
        sample[world, k] = held[world, k]


def sensor_label(component) -> str:
    """How a variation file names a sensor: the last element of its prim path (``Imu``, ``Gps``)."""
    return component.name.rstrip("/").rsplit("/", 1)[-1]


FAULT_DRAWS = (
    drawn.Drawn("sensor_fault_time", "s", "sim time a sensor faults (inf: no fault in this world)", ">= 0",
                allow_inf=True, accepts=drawn.non_negative),
    drawn.Drawn("sensor_fault_sensor", "", "which sensor faults: the last element of its prim's path "
                "(Imu, Mag, Baro, Gps)", "one of the vehicle's sensor names", kind="str", accepts=bool,
                sensor_name=True),
    drawn.Drawn("sensor_fault_mode", "", "freeze (values stuck, time stamps go on) or dropout (no new samples); "
                "default freeze", "'freeze' or 'dropout'", kind="str", accepts=lambda v: v in MODES),
    drawn.Drawn("sensor_fault_probability", "-", "chance a world gets the sensor fault at all; default 1",
                "in [0, 1]", accepts=drawn.unit_interval),
)
#: A world gets the sensor fault with its drawn probability (stream ``vary/sensor_fault_occurs/<world>``).
SENSOR_FAULT = drawn.Occurrence("sensor_fault_time", "sensor_fault_probability", "sensor_fault_occurs",
                                {"sensor_fault_sensor": None, "sensor_fault_mode": "freeze"},
                                required={"sensor_fault_sensor": "which sensor faults"})


@drawn.draws(*FAULT_DRAWS, occurrences=(SENSOR_FAULT,))
class SensorFaults(Component):
    """Freezes or drops out the samples of the sensors each world's drawn fault names."""

    def __init__(self, sensors, variation, name: str = "/sensors/faults"):
        super().__init__(name)
        by_label = {sensor_label(s): s for s in sensors}
        self.targets = []  # (sensor, per-world fault time [ns], per-world mode)
        for label, sensor in by_label.items():
            times, modes = [], []
            for values in variation:
                chosen = values.get("sensor_fault_sensor") == label and math.isfinite(values.get("sensor_fault_time", math.inf))
                times.append(at_ns(values["sensor_fault_time"]) if chosen else NEVER_NS)
                modes.append(MODES[values.get("sensor_fault_mode", "freeze")] if chosen else 0)
            if any(t != NEVER_NS for t in times):
                self.targets.append((sensor, times, modes))
        unknown = {v.get("sensor_fault_sensor") for v in variation if "sensor_fault_sensor" in v} - set(by_label)
        if unknown:
            raise BuildError(f"a sensor fault names {sorted(unknown)}, which this vehicle does not have; it has "
                             f"{', '.join(sorted(by_label))}")

    @classmethod
    def from_draws(cls, ring) -> SensorFaults | None:
        """The faults of a ring where some world gets one, after every sensor of the ring (else None)."""
        if not any(math.isfinite(v.get("sensor_fault_time", math.inf)) for v in ring.variation):
            return None
        return cls([c for c in ring.components if isinstance(c, Sensor)], ring.variation)

    def stages(self) -> list[Stage]:
        reads = [Read("time_ns", wp.int64, (1,))]
        reads += [Read(sensor.signal, sensor.sample_type, (1,)) for sensor, _, _ in self.targets]
        return [Stage("faults", "sensor", self._run, reads=tuple(reads))]

    def prepare(self, ctx) -> None:
        io = ctx.io_of(self, "faults")
        self._launches = []
        for sensor, times, modes in self.targets:
            buffer = io[sensor.signal]
            words = numpy_dtype(sensor.sample_type).itemsize // 4
            view = wp.array(ptr=buffer.ptr, dtype=wp.uint32, shape=(ctx.worlds, words), device=ctx.device)
            self._launches.append([
                wp.array(np.asarray(times, dtype=np.int64), dtype=wp.int64, device=ctx.device),
                wp.array(np.asarray(modes, dtype=np.int32), dtype=wp.int32, device=ctx.device),
                view, wp.zeros((ctx.worlds, words), dtype=wp.uint32, device=ctx.device), buffer,
            ])
        self.worlds = ctx.worlds

    def fault_clocks(self) -> dict:
        """Each faulted sensor's per-world fault times [ns] (``sensor:<label>``), for a fault fired by a
        condition (:mod:`nexus.runtime.fault_trigger` writes its firing time into them)."""
        return {f"sensor:{sensor_label(sensor)}": [launch[0]]
                for (sensor, _, _), launch in zip(self.targets, getattr(self, "_launches", ()), strict=False)}

    def _run(self, io) -> None:
        for fault_ns, mode, view, held, _buffer in self._launches:  # the buffer is kept alive with its view
            wp.launch(fault_samples, self.worlds, inputs=[io["time_ns"], fault_ns, mode, view, held], device=io.device)
