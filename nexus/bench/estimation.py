"""Suite ``estimation``: what the EKF costs a world a tick (issue 45, point 7).

Two measures, both process CPU time:

* ``ring``: the Astro Max at rest under the hold controller, its sensors at
  their rates, as one captured ring of N worlds with and without the EKF;
  the difference over N is the EKF's cost a world a tick, and its share of
  the tick is ``estimator_cost``.
* ``kernel``: the EKF's kernel alone over N worlds on a 250 Hz IMU with the
  GPS at 10 Hz, the barometer at 50 Hz and the magnetometer at 100 Hz (the
  Astro Max's rates), each tick a recorded launch; a second recorded launch
  that only advances the sample times is timed alone and subtracted.

Budget: at most 0.8 µs a world a tick at 1,024 worlds and 3 µs at 1 world.
"""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np
import warp as wp

from nexus.core import Loop
from nexus.estimation.ekf import EKF_SPEC, Ekf, ekf_step, state_arrays
from nexus.estimation.pose_twist import PoseTwist
from nexus.plant.plant import GeodeticOrigin
from nexus.runtime.assembly import assemble
from nexus.runtime.startup import start
from nexus.sensors.airspeed import AirspeedSample
from nexus.sensors.rangefinder import RangeSample
from nexus.sensors.samples import BaroSample, GpsSample, ImuSample, MagSample

BUDGET_US = {1: 3.0, 1024: 0.8}
RING_WORLDS = (1, 16)
KERNEL_WORLDS = (1, 16, 1024)


def _cpu_seconds(call, calls: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(calls):
            call()
        best = min(best, (time.process_time() - start) / calls)
    return best


def kernel_cost_us(worlds: int, ticks: int = 2000, rounds: int = 5) -> float:
    """The EKF kernel's CPU time a world a tick [µs] at ``worlds`` worlds (see the module doc)."""

    ekf = Ekf("/vehicle/estimator", origin=GeodeticOrigin(47.0, 8.0, 400.0), field_ned=(2.0e-5, 0.0, 4.5e-5))
    ekf.prepare(SimpleNamespace(worlds=worlds, device="cpu"))

    def z(dtype, *shape):
        return wp.zeros((worlds, *shape), dtype=dtype, device="cpu")

    state = [z(var.dtype, *var.shape) for var in EKF_SPEC.state]  # the kernel's state, in the spec's order
    for array, var in zip(state, EKF_SPEC.state):
        array.fill_(var.reset)
    imu, gps, baro, mag, rng, clock = z(ImuSample), z(GpsSample), z(BaroSample), z(MagSample), z(RangeSample), z(wp.float64)
    air = z(AirspeedSample)  # not fused: the wind states and the airspeed outputs stay untouched
    samples = imu.numpy()
    samples["accel"] = (0.0, 0.0, -9.80665)
    imu.assign(samples)
    m = mag.numpy()
    m["field"] = (2.0e-5, 0.0, 4.5e-5)
    mag.assign(m)
    g = gps.numpy()
    g["latitude"], g["longitude"], g["altitude"], g["fix_type"], g["satellites"] = 47.0, 8.0, 400.0, 3, 10
    gps.assign(g)
    b = baro.numpy()
    b["pressure_altitude"] = 400.0
    baro.assign(b)
    outputs = [z(PoseTwist), z(wp.int32), z(wp.float32, 15), z(wp.float32, 9), z(wp.float32, 9), z(wp.int32, 9),
               wp.zeros(worlds, dtype=wp.int32, device="cpu"), z(wp.vec3), z(wp.int32),
               z(wp.vec3), z(wp.float32, 2), z(wp.float32, 3), z(wp.int32), z(wp.float32, 2), z(wp.int32)]
    tick = wp.zeros(1, dtype=wp.int64, device="cpu")

    def view(a, width):
        return wp.array(ptr=a.ptr, dtype=wp.float64, shape=(worlds * width,), device="cpu", copy=False)

    # Each sample struct starts with its float64 ``time``: a float64 view with the struct's stride reaches it.
    kinds = (ImuSample, GpsSample, BaroSample, MagSample)
    strides = [wp.types.type_size_in_bytes(t) // 8 for t in kinds]
    views = [view(a, s) for a, s in zip((imu, gps, baro, mag), strides)]
    return _time_kernel(worlds, ticks, rounds, ekf, ekf_step, [imu, gps, baro, mag, rng, air, clock], state, outputs, views,
                        strides, tick)


@wp.kernel
def advance(views_imu: wp.array(dtype=wp.float64), views_gps: wp.array(dtype=wp.float64),
            views_baro: wp.array(dtype=wp.float64), views_mag: wp.array(dtype=wp.float64),
            strides: wp.vec4i, clock: wp.array(dtype=wp.float64), tick: wp.array(dtype=wp.int64)):
    """Each sensor's sample time at its rate (250, 10, 50, 100 Hz at a 250 Hz tick)."""
    world = wp.tid()
    n = tick[0] + wp.int64(1)
    t = wp.float64(n) * wp.float64(0.004)
    views_imu[world * strides[0]] = t
    clock[world] = t
    if n % wp.int64(25) == wp.int64(0):
        views_gps[world * strides[1]] = t
    if n % wp.int64(5) == wp.int64(0):
        views_baro[world * strides[2]] = t
    if n % wp.int64(5) == wp.int64(2):
        views_mag[world * strides[3]] = t


@wp.kernel
def count(tick: wp.array(dtype=wp.int64)):
    tick[0] = tick[0] + wp.int64(1)


def _time_kernel(worlds, ticks, rounds, ekf, ekf_step, inputs, state, outputs, views, strides, tick):
    step = wp.launch(ekf_step, worlds, inputs=[*inputs, ekf.tuning, 1, state_arrays(state), state_arrays(state)], outputs=outputs, device="cpu",
                     record_cmd=True)
    move = wp.launch(advance, worlds, inputs=[*views, wp.vec4i(*strides), inputs[6], tick], device="cpu",
                     record_cmd=True)
    counter = wp.launch(count, 1, inputs=[tick], device="cpu", record_cmd=True)

    def both():
        move.launch()
        counter.launch()
        step.launch()

    def alone():
        move.launch()
        counter.launch()

    both()  # the alignment, and warm caches
    for _ in range(500):
        both()
    best_both, best_alone = float("inf"), float("inf")
    for _ in range(rounds):
        best_both = min(best_both, _cpu_seconds(both, ticks, 1))
        best_alone = min(best_alone, _cpu_seconds(alone, ticks, 1))
    assert np.isfinite(state[2].numpy()).all()
    return (best_both - best_alone) / worlds * 1e6


def ring_cost_us(worlds: int, ticks: int = 1000, rounds: int = 5) -> tuple[float, float]:
    """(EKF cost a world a tick [µs], its share of the ring's tick) in the captured ring of ``worlds`` worlds."""

    loops = {}
    for name, keep in (("with", True), ("without", False)):
        vehicle = assemble("astro_max_base", "empty", device="cpu", controller="hold", estimator="ekf", worlds=worlds)
        parts = [c for c in vehicle.components if keep or not isinstance(c, Ekf)]
        loop = Loop(parts, device="cpu", mode="captured", worlds=worlds).build()
        vehicle.plant.reset()
        start(loop, vehicle.plant)
        loops[name] = loop
    best = {name: float("inf") for name in loops}
    for _ in range(rounds):
        for name, loop in loops.items():
            best[name] = min(best[name], _cpu_seconds(loop.tick, ticks, 1))
    cost = (best["with"] - best["without"]) / worlds * 1e6
    return cost, (best["with"] - best["without"]) / best["with"]


def run(device: str = "cpu") -> dict:
    result = {"suite": "estimation", "device": device}
    for n in KERNEL_WORLDS:
        result[f"kernel_us_per_world_tick_{n}"] = kernel_cost_us(n)
    for n in RING_WORLDS:
        cost, share = ring_cost_us(n)
        result[f"ring_us_per_world_tick_{n}"] = cost
        result[f"estimator_cost_{n}"] = share
    # At 1 world the kernel alone is mostly Python's launch of a 24-argument kernel, which the captured ring
    # does not pay: the ring's figure is the budget's there, the kernel's at 1,024 worlds (no ring of 1,024 on a CPU).
    result["targets_met"] = {"ring_1": result["ring_us_per_world_tick_1"] <= BUDGET_US[1],
                             "kernel_1024": result["kernel_us_per_world_tick_1024"] <= BUDGET_US[1024]}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    rows = [(f"EKF kernel, {n} worlds [µs a world a tick]", f"{result[f'kernel_us_per_world_tick_{n}']:.3f}")
            for n in KERNEL_WORLDS]
    rows += [(f"EKF in the ring, {n} worlds [µs a world a tick; share of the tick]",
              f"{result[f'ring_us_per_world_tick_{n}']:.2f}; {result[f'estimator_cost_{n}']:.3f}") for n in RING_WORLDS]
    return rows
