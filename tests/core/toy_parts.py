"""Small components and kernels for exercising the engine without physics."""

from __future__ import annotations

import warp as wp

from nexus.core import Component, Read, Stage, Write

WIDTH = 8


@wp.kernel
def fill_row(value: wp.float32, out: wp.array2d(dtype=wp.float32)):
    j = wp.tid()
    out[0, j] = value


@wp.kernel
def scale_row(source: wp.array2d(dtype=wp.float32), gain: wp.float32, out: wp.array2d(dtype=wp.float32)):
    j = wp.tid()
    out[0, j] = source[0, j] * gain


@wp.kernel
def draw_noise(seed: wp.int32, tick: wp.array(dtype=wp.int64), out: wp.array2d(dtype=wp.float32)):
    j = wp.tid()
    state = wp.rand_init(seed, wp.int32(tick[0]) * out.shape[1] + j)
    out[0, j] = wp.randn(state)


@wp.kernel
def record_row(
    tick: wp.array(dtype=wp.int64),
    time: wp.array(dtype=wp.float64),
    row: wp.array2d(dtype=wp.float32),
    history: wp.array2d(dtype=wp.float32),
    times: wp.array(dtype=wp.float64),
):
    j = wp.tid()
    i = wp.int32(tick[0]) - 1
    if i >= 0 and i < history.shape[0]:
        history[i, j] = row[0, j]
        if j == 0:
            times[i] = time[0]


@wp.kernel
def finish_at(tick: wp.array(dtype=wp.int64), last: wp.int64, done: wp.array(dtype=wp.int32)):
    if tick[0] >= last:
        done[0] = 1


class Part(Component):
    """A component whose stages are given directly."""

    def __init__(self, name: str, *stages: Stage, connections=None):
        super().__init__(name, connections)
        self._stages = list(stages)

    def stages(self) -> list[Stage]:
        return self._stages


def row(signal: str, width: int = WIDTH, **kw) -> Write:
    return Write(signal, wp.float32, (1, width), **kw)


def read_row(signal: str, width: int = WIDTH, **kw) -> Read:
    return Read(signal, wp.float32, (1, width), **kw)


def source(name: str, signal: str, value: float, kind: str = "sensor", width: int = WIDTH, **kw) -> Part:
    """Writes ``value`` into every element of a row each tick."""

    def run(io):
        wp.launch(fill_row, width, inputs=[wp.float32(value)], outputs=[io[signal]], device=io.device)

    return Part(name, Stage(name.split("/")[-1], kind, run, writes=(row(signal, width),)), **kw)


class NoiseSensor(Component):
    """Draws fresh standard-normal noise into ``noise`` every tick, from its own stream."""

    def __init__(self, name: str = "/vehicle/noise"):
        super().__init__(name)

    def prepare(self, ctx):
        self.seed = ctx.rng.child("toy/noise").seed32

    def stages(self):
        return [Stage("noise", "sensor", self._run, reads=(Read("tick", wp.int64, (1,)),), writes=(row("noise"),))]

    def _run(self, io):
        wp.launch(draw_noise, WIDTH, inputs=[wp.int32(self.seed), io["tick"]], outputs=[io["noise"]], device=io.device)


class Recorder(Component):
    """Keeps the ``noise`` row and the time of every tick in preallocated history arrays."""

    def __init__(self, ticks: int, signal: str = "noise", name: str = "/recorder"):
        super().__init__(name)
        self.ticks, self.signal = ticks, signal

    def prepare(self, ctx):
        self.history = wp.zeros((self.ticks, WIDTH), dtype=wp.float32, device=ctx.device)
        self.times = wp.zeros(self.ticks, dtype=wp.float64, device=ctx.device)

    def stages(self):
        reads = (Read("tick", wp.int64, (1,)), Read("time", wp.float64, (1,)), read_row(self.signal))
        return [Stage("record", "record", self._run, reads=reads)]

    def _run(self, io):
        wp.launch(
            record_row,
            WIDTH,
            inputs=[io["tick"], io["time"], io[self.signal]],
            outputs=[self.history, self.times],
            device=io.device,
        )


def host_stage(name: str, kind: str = "control", reads=(), writes=(), run=None, component: str | None = None) -> Part:
    return Part(component or f"/vehicle/{name}", Stage(name, kind, run or (lambda io: None), reads=reads, writes=writes, host=True))
