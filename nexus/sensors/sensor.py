"""What every sensor shares: its body, mount, rate, noise switch, and one sensor stage.

A sensor is a component with a single device stage of kind ``sensor``. The
stage reads the body it is mounted on (``body/<label>``, published by the
plant), the clock (``time``, ``time_ns``, ``tick``) and writes one sample
signal. Its kernel decides on the device whether a sample is due (see
:mod:`nexus.sensors.schedule`), so the same kernel runs eagerly at start-up
and inside a captured graph, and between samples the signal keeps the last one.
"""

from __future__ import annotations

from typing import Any

import warp as wp

from nexus.core import Component, Read, Stage, Write
from nexus.core.types import BodyState
from nexus.sensors.schedule import check_rate, new_schedule, period_ns


class Sensor(Component):
    """Base of the IMU, magnetometer, barometer and GPS components.

    ``name`` is the sensor prim's path; ``body`` the label of the rigid body it
    sits on (``base`` reads ``body/base``); ``mount`` its position in that body's
    frame, FLU [m]; ``rate`` [Hz] (0: every tick); ``noise`` False for exact samples.
    Subclasses set :attr:`signal` and :attr:`sample_type` and implement :meth:`launch`.
    """

    #: The signal this sensor writes, and its Warp struct.
    signal: str = ""
    sample_type: Any = None

    def __init__(self, name: str, *, body: str = "base", mount=(0.0, 0.0, 0.0), rate: float = 0.0,
                 noise: bool = True, connections=None):
        super().__init__(name, connections)
        self.body = body
        self.mount = wp.vec3(*(float(x) for x in mount))
        self.rate = check_rate(rate, f"sensor prim {name}")
        self.noise = bool(noise)
        self.period_ns = 0
        self.schedule = None

    @property
    def body_signal(self) -> str:
        return f"body/{self.body}"

    def stages(self) -> list[Stage]:
        reads = (
            Read(self.body_signal, BodyState, (1,)),
            Read("time", wp.float64, (1,)),
            Read("time_ns", wp.int64, (1,)),
            Read("tick", wp.int64, (1,)),
        )
        writes = (Write(self.signal, self.sample_type, (1,)),)
        return [Stage(self.signal, "sensor", self.launch, reads=reads, writes=writes)]

    def prepare(self, ctx) -> None:
        """Fix the period for this tick length and start a fresh schedule."""
        self.period_ns = period_ns(self.rate, ctx.dt_ns)
        self.schedule = new_schedule(ctx.device)

    def clock_inputs(self, io) -> list:
        """The kernel's leading arguments, in the order every sensor kernel takes them."""
        return [io[self.body_signal], io["time"], io["time_ns"], io["tick"], wp.int64(self.period_ns), self.schedule]

    def launch(self, io) -> None:  # pragma: no cover - every sensor overrides it
        raise NotImplementedError
