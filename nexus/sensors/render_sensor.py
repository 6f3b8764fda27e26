"""What the ray-traced sensors share: a host stage that hands poses to the renderer and takes frames late.

The latency rule: a frame due at tick ``k`` (by the sensors' due-time rule,
:mod:`nexus.sensors.schedule`) shows the scene at tick ``k``, and its sensor
writes it at tick ``k + L``, ``L = max(1, round(latency · period / tick))``
ticks for a latency of ``latency`` frames. At ``k`` the stage copies the
bodies' poses and submits them; at ``k + L`` it takes the frame, waiting only
if the renderer has not finished it. What a frame holds and the tick it is
written on never depend on how fast the renderer is, so a CPU run stays
bit-exact whatever the peer's speed.

The stage is a host stage of kind ``sensor`` that serves every world in one
call: one render covers all worlds.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import warp as wp

from nexus.core import Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.core.rng import stream_seed
from nexus.core.spec import Param
from nexus.render.hub import RenderHub
from nexus.sensors.sensor import Sensor

#: Frames a render sensor's output holds: ``latency`` frames late, at most this many in flight.
LATENCY = Param("latency", "nexus:latency", "int", 1, "frames",
                "Frames between the tick a frame shows and the tick it is written (at least 1)", low=1)
#: The downward tilt a camera's view is mounted at.
TILT = Param("tilt", "nexus:tilt", "float", 0.0, "rad", "Downward tilt from the body's +x axis", low=-1.5708,
             high=1.5708)


def image_params(width: int, height: int, horizontal_fov: float) -> tuple[Param, ...]:
    """An image sensor's size [px] and horizontal field of view [rad], with its own defaults."""
    return (
        Param("width", "nexus:width", "int", width, "px", "Image width", low=1),
        Param("height", "nexus:height", "int", height, "px", "Image height", low=1),
        Param("horizontal_fov", "nexus:horizontalFov", "float", horizontal_fov, "rad", "Horizontal field of view",
              low=0.0, high=3.1416, open_low=True),
    )


def latency_ticks(latency: int, period_ns: int, tick_ns: int) -> int:
    """Ticks between a frame's due tick and its delivery: ``max(1, round(latency · period / tick))``."""
    period = period_ns if period_ns > 0 else tick_ns
    return max(1, int(round(latency * period / tick_ns)))


class RenderSensor(Sensor):
    """Base of the camera, thermal camera and lidar: the schedule, the latency rule and the hub."""

    def __init__(self, name: str, *, plant=None, **params):
        super().__init__(name, **params)
        latency = self.values["latency"]
        if isinstance(latency, bool) or int(latency) != latency or latency < 1:
            raise BuildError(f"sensor prim {name}: nexus:latency is {latency}; a frame arrives at least 1 frame "
                             "late: give a whole number of frames, 1 or more")
        if self.rate <= 0.0:
            raise BuildError(f"sensor prim {name}: nexus:rate is {self.rate} Hz; a render sensor needs a positive "
                             "frame rate (e.g. 30)")
        self.latency = int(latency)
        self.plant = plant
        self.hub = None
        self._pending: deque = deque()  # (due tick, delivery tick, time it shows [s], ticket)
        self._next_due_ns: int | None = None
        self._last_tick: int | None = None  # the tick the stage last ran at, and its time [ns]
        self._last_ns = 0
        self.frames = 0
        self._views: dict[int, tuple] = {}  # id of a CPU array -> (the array, its NumPy view), made once

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra):
        try:
            return super().from_prim(prim, values, ctx, plant=ctx.plant, **extra)
        except BuildError as error:
            raise BuildError(f"{ctx.path}: {error}") from None

    # -- what each kind says --------------------------------------------------------------------

    def view_spec(self):  # pragma: no cover - every render sensor overrides it
        raise NotImplementedError

    def finish(self, frame: dict, due_tick: int, shows_s: float, poses=None):  # pragma: no cover
        """The host signal's value for a rendered frame (noise added here, seeded per world and frame)."""
        raise NotImplementedError

    # -- the stage -------------------------------------------------------------------------------

    def stages(self) -> list[Stage]:
        reads = (Read(self.body_signal, self.spec.all_inputs[0].dtype, (1,)), Read("tick", wp.int64, (1,)),
                 Read("time_ns", wp.int64, (1,)))
        writes = (Write(self.signal, self.sample_type),)
        return [Stage(self.spec.stage, "sensor", self._run, reads=reads, writes=writes, host=True, batched=True,
                      idle_ticks=self.idle_ticks)]

    def idle_ticks(self) -> int:
        """Ticks after the last one the stage ran at on which it has nothing to do: none is a due tick
        nor a delivery tick (0 before its first run)."""
        if self._last_tick is None:
            return 0
        coming = self._next_work_tick()
        if self._pending:
            coming = min(coming, self._pending[0][1])
        return max(0, coming - self._last_tick - 1)

    def _next_work_tick(self) -> int:
        """The next tick a frame is due at, by the due-time rule (after the tick last run at)."""
        if self._next_due_ns is None:
            return self._last_tick + 1
        return self._last_tick + max(1, -(-(self._next_due_ns - self._last_ns) // self.dt_ns))

    def ran_at(self, tick: int, now_ns: int) -> None:
        """Note the tick [and its time, ns] the stage runs at, which :meth:`idle_ticks` counts from."""
        self._last_tick, self._last_ns = tick, now_ns

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        if self.plant is None:
            raise BuildError(f"render sensor {self.name} needs the plant it renders (build it from its prim)")
        self.dt_ns = ctx.dt_ns
        self.delay = latency_ticks(self.latency, self.period_ns, ctx.dt_ns)
        self.body_index = self.plant.body_index_of(self.body)
        self.seeds = [stream_seed(ctx.world_rng(w), self.spec.stage, self.name) for w in range(ctx.worlds)]
        #: Each world's factor on the noise (``--vary noise_scale``), on the host.
        self.world_noise_scale = [float(x) for x in self.noise_scale.numpy()]
        if self.hub is None:  # built in code, not by a flight: render in this process
            self.hub = RenderHub(self.plant.vehicle_path, self.plant.scene_path, ctx.worlds, ctx.device, "inline")
            self._owns_hub = True
        else:
            self._owns_hub = False
        in_flight = -(-self.delay * self.dt_ns // max(self.period_ns, self.dt_ns)) + 1
        # its frame rate as declared (every tick when that is faster than the tick): what an MP4 preview plays at
        self.hub.add(self.view_spec(), in_flight, rate_hz=self.rate if self.period_ns > 0 else 1e9 / ctx.dt_ns)

    def rng(self, world: int, frame: int) -> np.random.Generator:
        """The noise of world ``world``'s frame ``frame``: one stream per world and frame, from the run's seed."""
        return np.random.default_rng([self.seeds[world] & 0xFFFFFFFF, frame])

    def _due(self, now_ns: int) -> bool:
        if self._next_due_ns is None:
            self._next_due_ns = now_ns
        if now_ns < self._next_due_ns:
            return False
        self._next_due_ns += self.period_ns if self.period_ns > 0 else self.dt_ns
        return True

    def host_copy(self, array) -> np.ndarray:
        """A float32 copy of ``array`` on the host; on the CPU through a NumPy view of the array's own memory,
        made once per array (making the view costs more than the copy)."""
        if not array.device.is_cpu:
            return np.asarray(array.numpy(), dtype=np.float32)
        kept = self._views.get(id(array))
        if kept is None or kept[0] is not array:
            kept = self._views[id(array)] = (array, array.numpy())
        return np.array(kept[1], dtype=np.float32, copy=True)

    def body_poses(self) -> np.ndarray:
        """Every body's pose in every world, (bodies, 7) [m, quaternion xyzw], copied."""
        return self.host_copy(self.plant.state.body_q)

    def submit(self, tick: int) -> tuple[int, object]:
        """Ask for this tick's frame: (the hub's ticket, what :meth:`finish` needs besides the frame)."""
        return self.hub.submit(self.name, self.body_poses()), None

    def deliver(self, io, tick: int) -> None:
        """Write every frame whose delivery tick has come (waiting for it if it is not rendered yet)."""
        while self._pending and self._pending[0][1] <= tick:
            due, _, shows_s, ticket, extra = self._pending.popleft()
            value = self.finish(self.hub.take(ticket), due, shows_s, extra)
            io[self.signal].write(value)
            self.hub.store(self.name, due, shows_s, dict(value.arrays))
            self.frames += 1

    def _run(self, io) -> None:
        tick = int(io["tick"].read_all().max())
        now_ns = int(io["time_ns"].read_all().max())
        self.ran_at(tick, now_ns)
        # This tick's frame is asked for before an older one is taken, so the renderer never idles
        # while the loop waits; the new frame's delivery tick is later than this one.
        if self._due(now_ns):
            ticket, extra = self.submit(tick)
            self._pending.append((tick, tick + self.delay, now_ns * 1e-9, ticket, extra))
        self.deliver(io, tick)

    def close(self) -> None:
        if getattr(self, "_owns_hub", False) and self.hub is not None:
            self.hub.close()
