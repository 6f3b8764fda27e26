"""A spinning lidar: a sweep of ``channels`` x ``columns`` ranges ray-traced by Newton, each column at its own time.

The head spins about the body's +z axis at ``nexus:rate`` sweeps a second.
Column ``c`` of ``C = round(2·pi / horizontalResolution)`` looks at azimuth
``2·pi·c / C`` (counter-clockwise from the body's +x) and is taken at the tick
``first + floor(c · T / C)`` of the sweep's ``T`` ticks, from the body's pose at
that tick: a moving vehicle's cloud is skewed as a real spinning lidar's is.
The lidar does not see its own vehicle (nor anything riding on a body): it
sees the scene's static shapes, as a lidar that masks its airframe out.
Channels spread evenly over the vertical field of view, symmetric about the
horizontal plane.

Range model: a return between ``minRange`` and ``maxRange`` [m] is valid and
gets Gaussian noise of 1 sigma ``rangeNoise`` [m]; one that misses, falls
outside the range limits, or drops out (probability ``dropout``) is invalid.
The sweep is a :class:`PointCloud` host signal (``lidar``), written
``latency`` sweeps after its last column: points in the sensor frame at each
column's time (FLU at the mount), with each point's time, range and validity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import warp as wp

from nexus.core import Read, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Param, Spec, non_negative, positive
from nexus.render.request import ViewSpec
from nexus.render.views import lidar_elevations
from nexus.sensors.render_sensor import LATENCY, RenderSensor
from nexus.sensors.sensor import SENSOR, sensor_rate


@dataclass(frozen=True)
class PointCloud:
    """One sweep of every world: ``arrays`` ``points`` (worlds, n, 3) [m, sensor frame], ``range`` (worlds, n)
    [m], ``valid`` (worlds, n) and ``times`` (worlds, n) [s]; ``time`` [s] is the sweep's first column's."""

    time: float
    tick: int
    arrays: dict = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.arrays[name]


LIDAR_SPEC = Spec(
    name="Lidar",
    schema="NexusLidarAPI",
    bases=(SENSOR,),
    doc="A spinning multi-channel lidar ray-traced by Newton: each column taken at its own time in the sweep, "
        "with range-limited, noisy returns.",
    params=(
        sensor_rate(10.0),
        LATENCY,
        Param("channels", "nexus:channels", "int", 16, "-", "Beams stacked vertically", low=1),
        Param("vertical_fov", "nexus:verticalFov", "float", 0.5236, "rad", "Spread of the channels", low=0.0,
              high=3.1416),
        positive("horizontal_resolution", "nexus:horizontalResolution", 0.00614, "rad",
                 "Azimuth between columns (2 pi / columns)"),
        non_negative("min_range", "nexus:minRange", 0.3, "m", "Nearest valid return"),
        positive("max_range", "nexus:maxRange", 100.0, "m", "Farthest valid return"),
        non_negative("range_noise", "nexus:rangeNoise", 0.02, "m", "Range noise, 1 sigma"),
        Param("dropout", "nexus:dropout", "float", 0.0, "-", "Probability a return is lost", low=0.0, high=1.0),
    ),
    outputs=(Output("lidar", PointCloud, doc="The latest sweep (PointCloud)"),),
    stage="lidar",
    host=True,
)


@wp.kernel
def keep_sweep_pose(
    body_q: wp.array(dtype=wp.transform),
    tick: wp.array(dtype=wp.int64),
    body: wp.int32,
    bodies_per_world: wp.int32,
    sweep_ticks: wp.int64,
    first_tick: wp.array(dtype=wp.int64),
    poses: wp.array2d(dtype=wp.transform),
):
    """Keep world ``world``'s lidar body pose at this tick in the sweep's slot ``(tick - first) mod T``.

    The tick is the latest world's (as the host stage reads it); the first tick the kernel runs at starts
    the first sweep. Every thread finds the same values, so the shared writes agree.
    """
    world = wp.tid()
    now = tick[0]
    for w in range(1, tick.shape[0]):
        now = wp.max(now, tick[w])
    start = first_tick[0]
    if start < wp.int64(0):
        start = now
    poses[wp.int32((now - start) % sweep_ticks), world] = body_q[body + world * bodies_per_world]
    first_tick[0] = start


class Lidar(RenderSensor):
    """Writes ``lidar`` (:class:`PointCloud`)."""

    spec = LIDAR_SPEC

    def __init__(self, name: str, **params):
        super().__init__(name, **params)
        v = self.values
        channels, vertical_fov, horizontal_resolution = v["channels"], v["vertical_fov"], v["horizontal_resolution"]
        min_range, max_range, range_noise, dropout = v["min_range"], v["max_range"], v["range_noise"], v["dropout"]
        if isinstance(channels, bool) or int(channels) != channels or channels < 1:
            raise BuildError(f"sensor prim {name}: nexus:channels is {channels}; a lidar needs 1 or more channels")
        if not 0.0 < horizontal_resolution <= math.pi:
            raise BuildError(f"sensor prim {name}: nexus:horizontalResolution is {horizontal_resolution} rad; it "
                             "must lie in (0, pi]")
        if not 0.0 <= min_range < max_range:
            raise BuildError(f"sensor prim {name}: nexus:minRange ({min_range} m) must be below nexus:maxRange "
                             f"({max_range} m)")
        self.channels, self.vertical_fov = int(channels), float(vertical_fov)
        self.columns = max(1, int(round(2.0 * math.pi / horizontal_resolution)))
        self.min_range, self.max_range = float(min_range), float(max_range)
        self.range_noise, self.dropout = float(range_noise), float(dropout)
        self._first_tick: int | None = None  # the tick the first sweep started at

    def view_spec(self) -> ViewSpec:
        return ViewSpec(self.name, "lidar", self.columns, self.channels, self.vertical_fov, self.body_index,
                        tuple(float(x) for x in self.mount))

    def stages(self) -> list[Stage]:
        # The body's pose is kept on the device every tick (a graph stage, in the state slot right after
        # the plant publishes), so the host stage runs only at a sweep's last tick and its deliveries.
        keep = Stage(f"{self.spec.stage}_poses", "state", self._keep_pose, reads=(Read("tick", wp.int64, (1,)),))
        return [keep, *super().stages()]

    def _keep_pose(self, io) -> None:
        wp.launch(keep_sweep_pose, dim=self.worlds,
                  inputs=[self.plant.state.body_q, io["tick"], wp.int32(self.body_index),
                          wp.int32(self.plant.bodies_per_world), wp.int64(self.sweep_ticks), self.sweep_first],
                  outputs=[self.sweep_poses], device=io.device)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        self.sweep_ticks = max(1, int(round(max(self.period_ns, ctx.dt_ns) / ctx.dt_ns)))
        #: The lidar body's pose at each tick of the sweep, (ticks, worlds) [m, quaternion xyzw].
        self.sweep_poses = wp.zeros((self.sweep_ticks, ctx.worlds), dtype=wp.transform, device=ctx.device)
        self.sweep_first = wp.full(1, -1, dtype=wp.int64, device=ctx.device)
        # Column c is taken at tick floor(c * T / C) of the sweep.
        self.column_tick = (np.arange(self.columns) * self.sweep_ticks) // self.columns
        elevation = lidar_elevations(self.channels, self.vertical_fov)[::-1]  # row 0 is the top channel
        azimuth = 2.0 * np.pi * np.arange(self.columns) / self.columns
        # Unit directions in the sensor frame (FLU), (channels, columns, 3).
        self.directions = np.stack([np.cos(elevation)[:, None] * np.cos(azimuth)[None, :],
                                    np.cos(elevation)[:, None] * np.sin(azimuth)[None, :],
                                    np.broadcast_to(np.sin(elevation)[:, None], (self.channels, self.columns))],
                                   axis=-1).astype(np.float32)

    def _next_work_tick(self) -> int:
        """The next sweep's last tick."""
        done = (self._last_tick - self._first_tick + 1) % self.sweep_ticks
        return self._last_tick + self.sweep_ticks - done

    def _run(self, io) -> None:
        # The poses of each tick of a sweep are kept on the device; the sweep is submitted at its last tick.
        tick = int(io["tick"].read_all().max())
        now_ns = int(io["time_ns"].read_all().max())
        self.ran_at(tick, now_ns)
        if self._first_tick is None:
            self._first_tick = tick
        if (tick - self._first_tick + 1) % self.sweep_ticks == 0:
            first = tick - (self.sweep_ticks - 1)
            at_ticks = self.host_copy(self.sweep_poses)  # (ticks, worlds, 7)
            poses = np.ascontiguousarray(at_ticks[self.column_tick].transpose(1, 0, 2))  # (worlds, columns, 7)
            ticket = self.hub.submit(self.name, self.body_poses(), poses)
            # Tick j of the sweep is at now - (T - 1 - j) ticks [ns]; each column is at its tick's time [s].
            tick_ns = now_ns - (self.sweep_ticks - 1 - np.arange(self.sweep_ticks, dtype=np.int64)) * self.dt_ns
            times = (tick_ns * 1e-9)[self.column_tick]
            self._pending.append((first, tick + self.delay, int(tick_ns[0]) * 1e-9, ticket, times))
        self.deliver(io, tick)  # after asking for this tick's sweep: the renderer never idles while we wait

    def finish(self, frame: dict, due_tick: int, shows_s: float, times) -> PointCloud:
        ranges = frame["range"]  # (worlds, channels, columns), 0 where nothing was hit
        worlds = ranges.shape[0]
        out_range = np.zeros_like(ranges)
        valid = np.zeros(ranges.shape, dtype=bool)
        for world in range(worlds):
            rng = self.rng(world, self.frames)
            r = ranges[world]
            ok = (r >= self.min_range) & (r <= self.max_range) & (r > 0.0)
            if self.noise and self.range_noise > 0.0:
                sigma = np.float32(self.range_noise * self.world_noise_scale[world])
                r = r + rng.standard_normal(r.shape, dtype=np.float32) * sigma
            if self.noise and self.dropout > 0.0:
                ok &= rng.random(r.shape, dtype=np.float32) >= self.dropout
            out_range[world] = np.where(ok, r, np.float32(0.0))
            valid[world] = ok
        points = out_range[..., None] * self.directions[None]
        n = self.channels * self.columns
        point_times = np.broadcast_to(np.asarray(times, dtype=np.float64)[None, None, :],
                                      (worlds, self.channels, self.columns))
        return PointCloud(shows_s, due_tick, {
            "points": points.reshape(worlds, n, 3).astype(np.float32), "range": out_range.reshape(worlds, n),
            "valid": valid.reshape(worlds, n), "times": np.ascontiguousarray(point_times).reshape(worlds, n)})
