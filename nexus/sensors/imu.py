"""The IMU: specific force and angular rate at the sensor's mount, in FRD.

From the solver's ``body_qdd`` observable (the body's centre-of-mass
acceleration ``a`` and angular acceleration ``α``, world frame) and its twist
(angular velocity ``ω``), the acceleration of the mount point is

    a_mount = a + α × r + ω × (ω × r),   r = R·(mount - com)   (world frame),

and an accelerometer measures the specific force ``f = a_mount - g`` (gravity
``g = (0, 0, -9.81)`` in the ENU world, so a level vehicle at rest reads
``(0, 0, -g)`` in FRD). The gyro measures ``ω``. Both are rotated into the
body (FLU), then to FRD, and get a bias (drawn at start, optionally walking)
plus white noise. See ``docs/sensors.md``.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

from nexus.core.clock import at_ns
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec, StateVar, non_negative
from nexus.plant.body_state import BodyState
from nexus.plant.frames import flu_to_frd
from nexus.sensors.noise import normal3
from nexus.sensors.samples import ImuSample
from nexus.sensors.schedule import SampleClock, due
from nexus.sensors.sensor import SENSOR, Sensor, sensor_rate
from nexus.vocab import drawn
from nexus.vocab.faults import Fault, FaultKey, declare_faults

#: PX4 Gazebo (gz) IMU white-noise defaults: gyro 0.05 deg/s, accelerometer.
GYRO_NOISE_SIGMA = 0.0008726646  # [rad/s]
ACCEL_NOISE_SIGMA = 0.00637  # [m/s²]


def per_axis(value) -> tuple[float, float, float]:
    """A per-axis value (x, y, z) from three numbers or one number for all three."""
    if isinstance(value, (int, float)):
        return (float(value),) * 3
    x, y, z = (float(v) for v in value)
    return (x, y, z)


def turn_on_bias(imu: Imu, ctx) -> np.ndarray:
    """The constant bias each accelerometer and gyro axis starts with, drawn once from the IMU's own stream."""
    draw = ctx.rng.child("imu/turn_on_bias").child(imu.name).generator().standard_normal((2, 3))
    scale = 1.0 if imu.noise else 0.0
    bias = (draw * np.array([[imu.accel_bias_sigma], [imu.gyro_bias_sigma]]) * scale).astype(np.float32)
    values = getattr(ctx, "world_values", {})
    for row, kind in enumerate(("accel", "gyro")):  # ``--vary accel_bias_x`` ...: added on top, FRD
        for axis, name in enumerate("xyz"):
            if f"{kind}_bias_{name}" in values:
                bias[row, axis] += np.float32(values[f"{kind}_bias_{name}"])
    return bias


IMU_SPEC = Spec(
    name="Imu",
    schema="NexusImuAPI",
    bases=(SENSOR,),
    doc="An inertial measurement unit: accelerometer (specific force) and gyro (angular rate) at the prim's "
        "mount, in FRD, from the solver's body accelerations. Each axis gets white noise, a turn-on bias and "
        "an optional bias random walk (PX4's Gazebo IMU defaults).",
    params=(
        sensor_rate(250.0),
        non_negative("gyro_sigma", "nexus:gyroNoiseSigma", GYRO_NOISE_SIGMA, "rad/s", "Gyro white noise per sample, 1 sigma"),
        non_negative("accel_sigma", "nexus:accelNoiseSigma", ACCEL_NOISE_SIGMA, "m/s^2",
               "Accelerometer white noise per sample, 1 sigma"),
        non_negative("gyro_bias_sigma", "nexus:gyroBiasSigma", 0.0, "rad/s", "Gyro turn-on bias, 1 sigma"),
        non_negative("accel_bias_sigma", "nexus:accelBiasSigma", 0.0, "m/s^2", "Accelerometer turn-on bias, 1 sigma"),
        non_negative("gyro_bias_walk", "nexus:gyroBiasRandomWalk", (0.0, 0.0, 0.0), "rad/s/sqrt(s)",
                     "Gyro in-run bias random walk per axis (x, y, z in FRD): the bias's 1-sigma spread after t "
                     "seconds is this times sqrt(t); 0 holds it still", type="float3"),
        non_negative("accel_bias_walk", "nexus:accelBiasRandomWalk", (0.0, 0.0, 0.0), "m/s^2/sqrt(s)",
                     "Accelerometer in-run bias random walk per axis (x, y, z in FRD), as the gyro's",
                     type="float3"),
    ),
    outputs=(Output("imu", ImuSample, recorded=True, doc="Specific force [m/s^2] and angular rate [rad/s], FRD"),),
    state=(StateVar("bias", wp.vec3, (2,), turn_on_bias, "accelerometer and gyro bias [m/s^2], [rad/s], FRD"),),
    stage="imu",
)


@wp.kernel
def sample_imu(
    body: wp.array(dtype=BodyState),
    clock: SampleClock,
    gravity: wp.vec3,
    mount: wp.vec3,
    accel_sigma: wp.vec3,
    gyro_sigma: wp.vec3,
    accel_walk: wp.vec3,
    gyro_walk: wp.vec3,
    walking: wp.int32,
    world_seeds: wp.array(dtype=wp.vec4i),
    noise_scale: wp.array(dtype=wp.float32),
    walk_scale: wp.array(dtype=wp.float32),
    bias_in: wp.array2d(dtype=wp.vec3),
    bias_out: wp.array2d(dtype=wp.vec3),
    step_ns: wp.array(dtype=wp.int64),
    step: wp.array2d(dtype=wp.vec3),
    out: wp.array(dtype=ImuSample),
):
    world = wp.tid()
    seeds = world_seeds[world]
    accel_bias = bias_in[world, 0]
    gyro_bias = bias_in[world, 1]
    bias_out[world, 0] = accel_bias
    bias_out[world, 1] = gyro_bias
    elapsed_ns = due(clock, world)
    if elapsed_ns < wp.int64(0):
        return
    now = clock.tick[world]
    state = body[world]
    q = wp.transform_get_rotation(state.pose)
    omega = state.angular_velocity
    r = wp.quat_rotate(q, mount - state.com)
    a_mount = state.accel + wp.cross(state.angular_accel, r) + wp.cross(omega, wp.cross(omega, r))
    specific_force = flu_to_frd(wp.quat_rotate_inv(q, a_mount - gravity))
    rate = flu_to_frd(wp.quat_rotate_inv(q, omega))

    # Bias random walk, each axis its own: its standard deviation grows with the square root of
    # time. Without a walk (the default) the draws are skipped: they would add zeros at the cost
    # of 6 normals. ``walk_scale`` is the world's drawn factor on both walks.
    if walking != 0:
        root_dt = wp.sqrt(wp.float32(wp.float64(elapsed_ns) * wp.float64(1.0e-9))) * walk_scale[world]
        accel_bias = accel_bias + normal3(seeds[2], now, accel_walk * root_dt)
        gyro_bias = gyro_bias + normal3(seeds[3], now, gyro_walk * root_dt)
        bias_out[world, 0] = accel_bias
        bias_out[world, 1] = gyro_bias

    # A scenario's bias step (``[[fault]] kind = "imu_bias"``): added to what the sensor reads from its time
    # on, not to the walking state, so it steps once. A world without one never reaches its time.
    if clock.time_ns[world] >= step_ns[world]:
        accel_bias = accel_bias + step[world, 0]
        gyro_bias = gyro_bias + step[world, 1]

    sample = ImuSample()
    sample.time = clock.time[world]
    scale = noise_scale[world]
    sample.accel = specific_force + accel_bias + normal3(seeds[0], now, accel_sigma * scale)
    sample.gyro = rate + gyro_bias + normal3(seeds[1], now, gyro_sigma * scale)
    out[world] = sample


#: Each world's drawn bias, added to every IMU's turn-on bias (read by :func:`turn_on_bias`).
BIAS_DRAWS = (
    *(drawn.Drawn(f"accel_bias_{axis}", "m/s^2", f"added to each IMU's accelerometer bias along {axis}, FRD",
                  "|value| <= 10", accepts=drawn.abs_at_most(10.0)) for axis in "xyz"),
    *(drawn.Drawn(f"gyro_bias_{axis}", "rad/s", f"added to each IMU's gyro bias along {axis}, FRD",
                  "|value| <= 1", accepts=drawn.abs_at_most(1.0)) for axis in "xyz"),
    drawn.Drawn("bias_walk_scale", "-", "multiplies each IMU's gyro and accelerometer bias random walk", ">= 0",
                accepts=drawn.non_negative),
    drawn.Drawn("imu_bias_step_time", "s", "sim time each IMU's bias steps (inf: no step in this world)", ">= 0",
                allow_inf=True, accepts=drawn.non_negative),
    *(drawn.Drawn(f"imu_bias_step_accel_{axis}", "m/s^2", f"the accelerometer bias step along {axis}, FRD",
                  "|value| <= 10", accepts=drawn.abs_at_most(10.0)) for axis in "xyz"),
    *(drawn.Drawn(f"imu_bias_step_gyro_{axis}", "rad/s", f"the gyro bias step about {axis}, FRD",
                  "|value| <= 1", accepts=drawn.abs_at_most(1.0)) for axis in "xyz"),
)
#: A scenario's ``[[fault]] kind = "imu_bias"``: from its time on, every IMU reads its bias plus the step.
IMU_BIAS_FAULT = Fault("imu_bias", "the IMU's bias steps: from then on each axis reads the given amount more",
                       time="imu_bias_step_time", once="a scenario steps the IMU's bias once", keys=(
                           *(FaultKey(f"accel_{axis}", f"imu_bias_step_accel_{axis}", "m/s^2",
                                      f"the accelerometer bias step along {axis} (FRD)", 0.0,
                                      allowed=drawn.abs_at_most(10.0)) for axis in "xyz"),
                           *(FaultKey(f"gyro_{axis}", f"imu_bias_step_gyro_{axis}", "rad/s",
                                      f"the gyro bias step about {axis} (FRD)", 0.0,
                                      allowed=drawn.abs_at_most(1.0)) for axis in "xyz")))


@declare_faults(IMU_BIAS_FAULT)
@drawn.draws(*BIAS_DRAWS)
class Imu(Sensor):
    """Accelerometer and gyro on one body; writes ``imu`` (:class:`ImuSample`).

    Noise parameters: white noise per sample ``accel_sigma`` [m/s²], ``gyro_sigma``
    [rad/s]; constant turn-on bias ``*_bias_sigma``; bias random walk
    ``*_bias_walk`` [per √s], per axis (x, y, z in FRD; one number is taken for all three).
    ``gravity`` [m/s²] is the world's gravity vector (ENU).
    """

    spec = IMU_SPEC
    #: The plant's step stage computes the body accelerations this sensor needs.
    solver_observables = frozenset({"body_qdd"})

    def __init__(self, name: str, *, gravity=(0.0, 0.0, -9.80665), **params):
        super().__init__(name, **params)
        self.gravity = wp.vec3(*(float(g) for g in gravity))
        v = self.values
        self.accel_sigma, self.gyro_sigma = float(v["accel_sigma"]), float(v["gyro_sigma"])
        self.accel_bias_sigma, self.gyro_bias_sigma = float(v["accel_bias_sigma"]), float(v["gyro_bias_sigma"])
        self.accel_bias_walk, self.gyro_bias_walk = per_axis(v["accel_bias_walk"]), per_axis(v["gyro_bias_walk"])
        for key, walk in (("accel_bias_walk", self.accel_bias_walk), ("gyro_bias_walk", self.gyro_bias_walk)):
            param = self.spec.param(key)
            why = param.problem(walk)  # the bound the prim reader checks, for IMUs built in code
            if why is not None:
                raise BuildError(f"sensor {name}: {param.attr} is {walk} {param.unit}; it {why}")

    @classmethod
    def from_prim(cls, prim, values, ctx, **extra) -> Imu:
        gravity = ctx.plant.model.gravity.numpy().reshape(-1, 3)[0]
        return super().from_prim(prim, values, ctx, gravity=tuple(float(g) for g in gravity), **extra)

    def prepare(self, ctx) -> None:
        super().prepare(ctx)
        self.seeds = self.world_seeds(ctx, ("imu/accel", "imu/gyro", "imu/accel_bias", "imu/gyro_bias"), wp.vec4i)
        self.walk_scale = wp.array(ctx.varied("bias_walk_scale", 1.0).astype("float32"), dtype=wp.float32,
                                   device=ctx.device)
        self.step_ns = wp.array([at_ns(t) for t in ctx.varied("imu_bias_step_time", math.inf)], dtype=wp.int64,
                                device=ctx.device)
        step = np.stack([np.stack([ctx.varied(f"imu_bias_step_{kind}_{axis}", 0.0) for axis in "xyz"], axis=1)
                         for kind in ("accel", "gyro")], axis=1).astype(np.float32)
        self.step = wp.array(step, dtype=wp.vec3, device=ctx.device)
        self.set_noise(self.noise)

    def fault_clocks(self) -> dict:
        """The per-world bias-step times [ns], for a step fired by a condition (:mod:`nexus.runtime.fault_trigger`
        writes its firing time into them)."""
        return {"imu_bias": [self.step_ns]} if hasattr(self, "step_ns") else {}

    def set_noise(self, on: bool) -> None:
        """Draw the white noise and the bias walk (True) or sample exactly (False); the turn-on bias, a reset
        value, stays. A captured graph keeps the switch it was captured with (capture again after a change)."""
        self.noise = bool(on)
        scale = 1.0 if self.noise else 0.0
        accel_walk = tuple(w * scale for w in self.accel_bias_walk)
        gyro_walk = tuple(w * scale for w in self.gyro_bias_walk)
        self._noise_args = [
            wp.vec3(self.accel_sigma * scale), wp.vec3(self.gyro_sigma * scale),
            wp.vec3(*accel_walk), wp.vec3(*gyro_walk), int(max(*accel_walk, *gyro_walk) > 0.0),
        ]

    def launch(self, io) -> None:
        wp.launch(
            sample_imu, self.worlds,
            inputs=[*self.clock_inputs(io), self.gravity, self.mount, *self._noise_args, self.seeds, self.noise_scale,
                    self.walk_scale, io.state_in["bias"], io.state_out["bias"], self.step_ns, self.step],
            outputs=[io[self.signal]], device=io.device,
        )


__all__ = ["IMU_SPEC", "Imu", "sample_imu"]
