"""The IMU's per-axis bias random walk and the barometer's drift, over many worlds.

Each world flies one known body in free fall at 50 m above the scene's origin (an IMU
there reads exactly its bias without white noise), and every world draws from its
own streams (``imu/accel_bias/<prim>``, ``baro/drift/<prim>``, ... of its random
tree), so the worlds are independent draws of the same walk.

Tolerance, worked out by hand. A walk of density σ [unit/√s] sampled every Δt adds
N(0, σ²·Δt) at each sample after the first (the first, at t₀ = 4 ms, adds nothing:
no time has passed), so after k ticks of Δt = 4 ms the offset is N(0, σ²·T) with
T = (k - 1)·Δt. Over n = 256 worlds, S = Σx²/(σ²T) follows a chi-square law with
256 degrees of freedom: mean 256, standard deviation √512 = 22.6, so S/n has
standard deviation √(2/256) = 0.0884. The tests accept S/n inside 1 ± 5 × 0.0884,
that is (0.558, 1.442): five standard deviations, a false alarm about once in
3.5 million. Checked at two times, T = 0.248 s and 0.996 s, the variance grows
with T (a walk that forgot its last value would read σ²·Δt, 1/62 and 1/249 of
σ²T, far outside the band).
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import warp as wp
from nexus.core import Component, Loop, Stage, Write
from nexus.core.errors import BuildError
from nexus.plant.assets import with_base_prims
from nexus.plant.body_state import BodyState
from nexus.runtime.assembly import assemble
from nexus.sensors import Barometer, Imu
from tests.sensors.conftest import BASE_COM, G

WORLDS = 256
#: Ticks flown and the checkpoints read: T = (k - 1) × 4 ms = 0.248 s and 0.996 s.
CHECKPOINTS = (63, 250)
TICK_S = 0.004
#: (0.558, 1.442): 1 ± 5·√(2/256), see the module doc.
LOW, HIGH = 0.558, 1.442
#: The scenes' origin altitude [m]; the body flies 50 m above it.
ORIGIN_ALTITUDE = 488.0


@wp.kernel
def publish_bodies(state: BodyState, out: wp.array(dtype=BodyState)):
    out[wp.tid()] = state


class FallingBodies(Component):
    """``body/base`` of every world: the same body in free fall, 50 m up, level."""

    def __init__(self, worlds: int):
        super().__init__("/test/falling_bodies")
        state = BodyState()
        state.pose = wp.transform(wp.vec3(0.0, 0.0, 50.0), wp.quat_identity())
        state.accel = wp.vec3(0.0, 0.0, -G)
        state.com = wp.vec3(*BASE_COM)
        self.state = state
        self.worlds = worlds

    def stages(self) -> list[Stage]:
        return [Stage("body", "state", self._run, writes=(Write("body/base", BodyState, (1,)),))]

    def _run(self, io) -> None:
        wp.launch(publish_bodies, self.worlds, inputs=[self.state], outputs=[io["body/base"]], device=io.device)


def still_plant(worlds: int) -> SimpleNamespace:
    """What a barometer reads from the plant: the NED origin of each world (the world origin) and its altitude."""
    return SimpleNamespace(ned_origin=wp.zeros(worlds, dtype=wp.vec3, device="cpu"),
                           origin=SimpleNamespace(altitude=ORIGIN_ALTITUDE))


def quiet_imu(name: str = "/test/imu", **params) -> Imu:
    return Imu(name, accel_sigma=0.0, gyro_sigma=0.0, rate=0.0, **params)


def baro(name: str, worlds: int, **params) -> Barometer:
    return Barometer(name, plant=still_plant(worlds), noise_sigma=0.0, rate=0.0, **params)


def ring(sensors, worlds: int, *, seed: int = 5, first_world: int = 0, variation=()) -> Loop:
    return Loop([FallingBodies(worlds), *sensors], device="cpu", seed=seed, worlds=worlds, first_world=first_world,
                variation=variation).build()


def imu_readings(loop: Loop, name: str = "/test/imu") -> tuple[np.ndarray, np.ndarray]:
    """Accel and gyro of every world, shape (worlds, 3), float64."""
    rows = loop.output("imu", name).list()
    return (np.array([[float(x) for x in r.accel] for r in rows]),
            np.array([[float(x) for x in r.gyro] for r in rows]))


def baro_heights(loop: Loop, name: str) -> np.ndarray:
    return np.array([float(r.pressure_altitude) for r in loop.output("baro", name).list()])


def variance_ratio(x: np.ndarray, sigma: float, elapsed: float) -> float:
    """Σx² / (n·σ²·T): 1 on average for zero-mean draws of variance σ²T."""
    return float(np.sum(x**2)) / (x.size * sigma**2 * elapsed)


def test_each_axis_walks_with_its_own_density_and_its_variance_grows_linearly():
    # Gyro 1e-3, 4e-3, 0 rad/s/√s and accelerometer 0, 0.02, 0.08 m/s²/√s on x, y, z (FRD):
    # at T = 0.996 s the gyro's y spread is 4e-3·√0.996 = 4.0e-3 rad/s, the accelerometer's z 0.080 m/s².
    gyro_walk, accel_walk = (1e-3, 4e-3, 0.0), (0.0, 0.02, 0.08)
    loop = ring([quiet_imu(gyro_bias_walk=gyro_walk, accel_bias_walk=accel_walk)], WORLDS)
    for tick in range(1, CHECKPOINTS[-1] + 1):
        loop.tick()
        if tick not in CHECKPOINTS:
            continue
        elapsed = (tick - 1) * TICK_S
        accel, gyro = imu_readings(loop)
        for readings, walks, kind in ((accel, accel_walk, "accel"), (gyro, gyro_walk, "gyro")):
            for axis, walk in enumerate(walks):
                column = readings[:, axis]
                if walk == 0.0:  # an axis without a walk gets nothing of the others'
                    assert np.all(column == 0.0), f"{kind} axis {axis} moved without a walk"
                    continue
                ratio = variance_ratio(column, walk, elapsed)
                assert LOW < ratio < HIGH, f"{kind} axis {axis}: variance / σ²T = {ratio:.3f} at T = {elapsed} s"
                # The mean within 5 standard errors: 5·σ√T/√256.
                assert abs(column.mean()) < 5 * walk * np.sqrt(elapsed) / 16.0


def test_one_number_walks_all_three_axes_alike():
    # 0.05 m/s²/√s given as one number is (0.05, 0.05, 0.05): every axis spreads, each with that density.
    loop = ring([quiet_imu(accel_bias_walk=0.05)], WORLDS)
    for _ in range(CHECKPOINTS[-1]):
        loop.tick()
    accel, gyro = imu_readings(loop)
    elapsed = (CHECKPOINTS[-1] - 1) * TICK_S
    for axis in range(3):
        assert LOW < variance_ratio(accel[:, axis], 0.05, elapsed) < HIGH
    assert np.all(gyro == 0.0)


def test_without_a_walk_the_bias_holds_its_turn_on_value():
    # Turn-on bias 0.2 m/s², 0.01 rad/s and no walk (the default): every world reads the same bias, bit for bit,
    # at every tick.
    loop = ring([quiet_imu(accel_bias_sigma=0.2, gyro_bias_sigma=0.01)], 16)
    loop.tick()
    first = imu_readings(loop)
    assert np.all(first[0] != 0.0)
    for _ in range(50):
        loop.tick()
    later = imu_readings(loop)
    np.testing.assert_array_equal(first[0], later[0])
    np.testing.assert_array_equal(first[1], later[1])


def test_the_drawn_scale_multiplies_each_worlds_walk():
    # bias_walk_scale 0 holds the bias still in its world; 2 doubles the spread: over 128 worlds of scale 2
    # the variance is 4·σ²T, and S/128 lies inside 1 ± 5·√(2/128) = (0.375, 1.625).
    worlds = 256
    variation = [{"bias_walk_scale": 0.0 if w % 2 == 0 else 2.0} for w in range(worlds)]
    loop = ring([quiet_imu(gyro_bias_walk=(0.002, 0.002, 0.002))], worlds, variation=variation)
    for _ in range(CHECKPOINTS[-1]):
        loop.tick()
    _, gyro = imu_readings(loop)
    elapsed = (CHECKPOINTS[-1] - 1) * TICK_S
    assert np.all(gyro[0::2] == 0.0)
    assert 0.375 < variance_ratio(gyro[1::2], 2 * 0.002, elapsed) < 1.625


def test_baro_drift_walks_the_height_it_reads():
    # driftRandomWalk 0.5 m/√s beside a still barometer on the same body: the two heights differ by the drift,
    # N(0, 0.25·T) m² (float32 heights near 538 m round to 6e-5 m, negligible beside 0.25-0.5 m of spread).
    drift = 0.5
    loop = ring([baro("/test/baro", WORLDS, drift_walk=drift), baro("/test/baro_still", WORLDS)], WORLDS)
    for tick in range(1, CHECKPOINTS[-1] + 1):
        loop.tick()
        if tick not in CHECKPOINTS:
            continue
        elapsed = (tick - 1) * TICK_S
        offset = baro_heights(loop, "/test/baro") - baro_heights(loop, "/test/baro_still")
        ratio = variance_ratio(offset, drift, elapsed)
        assert LOW < ratio < HIGH, f"baro drift: variance / σ²T = {ratio:.3f} at T = {elapsed} s"
        assert abs(offset.mean()) < 5 * drift * np.sqrt(elapsed) / 16.0
    # Without a drift the height is the ISA height of 538 m, the same in every world and at every tick.
    still = baro_heights(loop, "/test/baro_still")
    assert np.all(still == still[0]) and abs(still[0] - 538.0) < 0.01


def test_world_2_of_4_is_the_one_world_run_of_world_2():
    # A nonzero walk, drift and drawn scale in every world: world 2 flown alone (its own index's random tree and
    # drawn values) reads the same bits, tick after tick.
    variation = [{"bias_walk_scale": 1.0 + 0.5 * w} for w in range(4)]

    def sensors(worlds):
        return [quiet_imu(gyro_bias_walk=(1e-3, 2e-3, 3e-3), accel_bias_walk=(0.01, 0.0, 0.03), accel_bias_sigma=0.1),
                baro("/test/baro", worlds, drift_walk=0.3)]

    many = ring(sensors(4), 4, variation=variation)
    alone = ring(sensors(1), 1, first_world=2, variation=variation[2:3])
    for _ in range(40):
        many.tick()
        alone.tick()
        for a, b in zip(imu_readings(many), imu_readings(alone)):
            np.testing.assert_array_equal(a[2:3], b)
        np.testing.assert_array_equal(baro_heights(many, "/test/baro")[2:3], baro_heights(alone, "/test/baro"))
    # The walk moved: the bits compared are not a constant.
    assert np.any(imu_readings(alone)[1] != 0.0)
    assert np.any(imu_readings(many)[1][1] != imu_readings(many)[1][2])


@pytest.mark.parametrize("prim, attribute, text", [
    ("Imu", "nexus:gyroBiasRandomWalk", "float3 nexus:gyroBiasRandomWalk = (0.001, -0.002, 0)"),
    ("Imu", "nexus:accelBiasRandomWalk", "float3 nexus:accelBiasRandomWalk = (-0.01, 0, 0)"),
    ("Baro", "nexus:driftRandomWalk", "float nexus:driftRandomWalk = -0.1"),
])
def test_a_negative_walk_is_refused_naming_file_prim_and_attribute(tmp_path, prim, attribute, text):
    vehicle = with_base_prims(tmp_path / "walk.usda", f'\n            over "{prim}"\n            {{\n'
                                                      f"                {text}\n            }}\n")
    with pytest.raises(BuildError) as caught:
        assemble(vehicle, "empty", controller="hold")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{vehicle}: sensor prim /vehicle/body/base/{prim}: {attribute} is ")
    assert "it must be >= 0" in message


def test_a_negative_walk_in_code_is_refused():
    with pytest.raises(BuildError, match=r"sensor /test/imu: nexus:gyroBiasRandomWalk is \(0.0, -0.001, 0.0\) "
                                         r"rad/s/sqrt\(s\); it must be >= 0"):
        quiet_imu(gyro_bias_walk=(0.0, -0.001, 0.0))
    with pytest.raises(BuildError, match=r"sensor /test/baro: nexus:driftRandomWalk is -0.2 m/sqrt\(s\); "
                                         r"it must be >= 0"):
        baro("/test/baro", 1, drift_walk=-0.2)
