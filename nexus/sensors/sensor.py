"""What every sensor shares: its body, mount, rate, noise switch, schedule and one sensor stage.

A sensor is a component with a single device stage of kind ``sensor``. The
stage reads the body it is mounted on (``body/<label>``, published by the
plant), the clock (``time``, ``time_ns``, ``tick``) and writes one sample
signal. Its kernel decides on the device whether a sample is due (see
:mod:`nexus.sensors.schedule`), so the same kernel runs eagerly at start-up
and inside a captured graph, and between samples the signal keeps the last one.

:data:`SENSOR` declares what they share once: the USD schema
``NexusSensorAPI`` (rate, noise switch, mount offset), which each sensor's
own schema composes, the clock and body inputs, and the schedule state.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import warp as wp

from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.rng import stream_seed
from nexus.core.spec import Input, Param, Spec
from nexus.plant.body_state import BodyState
from nexus.schemas.reader import read_connections
from nexus.sensors.schedule import SCHEDULE, SampleClock, period_ns, sample_clock
from nexus.vocab import drawn

#: The declaration every sensor's spec names as its base.
SENSOR = Spec(
    name="Sensor",
    schema="NexusSensorAPI",
    abstract=True,
    noun="sensor",
    doc="What every Nexus sensor has: a sample rate, a noise switch and a mount offset. Each sensor's own "
        "schema includes this one; a sensor prim sits below the rigid body it is mounted on.",
    params=(
        Param("rate", "nexus:rate", "float", 0.0, "Hz",
              "Samples per second; 0 samples every tick, and a rate above the tick rate samples every tick", low=0.0),
        Param("noise", "nexus:noise", "bool", True, doc="False gives exact samples (no noise, bias or drift)"),
        Param("mount", "nexus:mountOffset", "float3", (0.0, 0.0, 0.0), "m",
              "The sensor's position on its body, body frame (FLU)"),
    ),
    inputs=(
        Input("body/{body}", BodyState, doc="The body the sensor is mounted on, as the plant publishes it"),
        Input("time", wp.float64), Input("time_ns", wp.int64), Input("tick", wp.int64),
    ),
    state=(SCHEDULE,),
    kind="sensor",
    sampler=True,
)


def mounted_body(prim, ctx) -> str:
    """The label of the rigid body a sensor prim sits under (its nearest rigid-body ancestor)."""
    parent = prim.GetParent()
    while parent and parent.GetPath().pathString != "/":
        path = parent.GetPath().pathString
        if path in ctx.plant.body_index:
            return ctx.plant.body_label(path)
        parent = parent.GetParent()
    raise BuildError(
        f"{ctx.path}: sensor prim {prim.GetPath()} is not under a rigid body; place the sensor prim below the body "
        "it is mounted on (a prim with PhysicsRigidBodyAPI)"
    )


@drawn.draws(drawn.Drawn("noise_scale", "-", "multiplies every sensor's white-noise sigma", ">= 0",
                         accepts=drawn.non_negative))
class Sensor(Component):
    """Base of every sensor component.

    ``name`` is the sensor prim's path; ``body`` the label of the rigid body it
    sits on (``base`` reads ``body/base``); ``params`` any of the spec's parameters
    by key (``mount`` its position in that body's frame, FLU [m]; ``rate`` [Hz],
    0: every tick; ``noise`` False for exact samples, and the sensor's own); the
    rest take the spec's defaults, and all of them are in :attr:`values`.
    A subclass sets :attr:`spec` (with ``bases=(SENSOR,)``, its stage name and its
    one output) and implements :meth:`run`.
    """

    spec = SENSOR

    def __init__(self, name: str, *, body: str = "base", connections=None, **params):
        super().__init__(name, connections)
        unknown = sorted(set(params) - {p.key for p in self.spec.all_params})
        if unknown:
            raise TypeError(f"sensor {name}: {type(self).__name__} has no parameter {', '.join(unknown)}; its "
                            f"parameters are {', '.join(p.key for p in self.spec.all_params)}")
        #: Every parameter of the spec: its default, or the value given (each default is written once, there).
        self.values = {**self.spec.defaults(), **{k: v for k, v in params.items() if v is not None}}
        self.body = body
        self.mount = wp.vec3(*(float(x) for x in self.values["mount"]))
        rate_param = self.spec.param("rate")
        self.rate = float(self.values["rate"])
        why = rate_param.problem(self.rate)  # the bound the prim reader checks, for sensors built in code
        if why is not None:
            raise BuildError(f"sensor {name}: {rate_param.attr} is {self.rate} Hz; it {why}")
        self.noise = bool(self.values["noise"])
        self.period_ns = 0
        self.worlds = 1
        self._clock: tuple | None = None

    @classmethod
    def from_prim(cls, prim, values: dict, ctx, **extra) -> Sensor:
        """The sensor for a prim: its checked spec values, the body it sits under, and ``extra``."""
        return cls(str(prim.GetPath()), body=mounted_body(prim, ctx), connections=read_connections(prim, cls.spec, ctx.path),
                   **values, **extra)

    #: The signal this sensor writes and its sample type: its spec's one output (set per subclass).
    signal: str = ""
    sample_type: Any = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.spec.all_outputs:
            cls.signal = cls.spec.all_outputs[0].signal
            cls.sample_type = cls.spec.all_outputs[0].dtype

    @property
    def body_signal(self) -> str:
        return f"body/{self.body}"

    def prepare(self, ctx) -> None:
        """Fix the period for this tick length (the schedule itself is engine-owned state), and each
        world's factor on the white noise (``--vary noise_scale``; exactly 1 without one)."""
        self.period_ns = period_ns(self.rate, ctx.dt_ns)
        self._clock = None
        self.worlds = ctx.worlds
        self.noise_scale = wp.array(ctx.varied("noise_scale", 1.0).astype("float32"), dtype=wp.float32, device=ctx.device)

    def world_seeds(self, ctx, streams: tuple[str, ...], dtype) -> wp.array:
        """Each world's seed of each of ``streams`` (drawn from that world's random tree), one row per world."""
        rows = [[stream_seed(ctx.world_rng(w), stream, self.name) for stream in streams] for w in range(ctx.worlds)]
        if len(streams) == 1:
            return wp.array([row[0] for row in rows], dtype=wp.int32, device=ctx.device)
        return wp.array([dtype(*row) for row in rows], dtype=dtype, device=ctx.device)

    def clock_inputs(self, io) -> list:
        """The kernel's leading arguments, in the order every sensor kernel takes them: the body it is
        mounted on and its :class:`~nexus.sensors.schedule.SampleClock`."""
        return [io[self.body_signal], self.clock(io)]

    def clock(self, io) -> SampleClock:
        """This sensor's clock and schedule over ``io``'s buffers; made once per set of buffers (a flight
        binds the same ones every tick, a differentiable rollout new schedule arrays each tick)."""
        arrays = (io["time"], io["time_ns"], io["tick"], io.state_in["schedule"], io.state_out["schedule"])
        key = tuple(id(a) for a in arrays)
        if self._clock is None or self._clock[0] != key:
            time, time_ns, tick, schedule_in, schedule_out = arrays
            self._clock = (key, sample_clock(time, time_ns, tick, self.period_ns, schedule_in, schedule_out))
        return self._clock[1]

    def stages(self) -> list[Stage]:
        """The spec's one device stage, declaring its schedule: each sensor's kernel changes nothing on a tick
        with no sample due (it copies its state and returns), so a one-world captured ring skips its launch
        there (:mod:`nexus.core.schedule`)."""
        stages = super().stages()
        for stage in stages:
            if not stage.host:
                stage.schedule, stage.schedule_period = SCHEDULE.name, lambda: self.period_ns
        return stages

    def launch(self, io) -> None:  # pragma: no cover - every sensor overrides it
        raise NotImplementedError

    def run(self, io) -> None:
        self.launch(io)


def sensor_rate(default: float) -> Param:
    """The shared ``nexus:rate`` with a sensor's own default [Hz] (the override its schema declares)."""
    return replace(SENSOR.param("rate"), default=float(default))


__all__ = ["SENSOR", "Sensor", "mounted_body", "sensor_rate"]
