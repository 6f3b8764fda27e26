"""What each drawn value does to the flight, checked against physics worked out by hand.

World 0 of each run draws nothing (constant defaults), so it is the reference
the varied world is compared with in the same run.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.worlds.flights import bits_differ, fly

#: Astro Max: base 5.031 kg and four 0.2 kg rotors (vehicles/astro_max_base.usda).
TOTAL_MASS = 5.831
GRAVITY = 9.80665


def _file(tmp_path, text: str):
    path = tmp_path / "vary.toml"
    path.write_text(text)
    return path


def _hover(run, world: int):
    """World ``world``'s rows in the hover of the short mission: at 2 m, after the climb, before the yaw sweep."""
    rows = run.world(world)
    return rows[(rows.time > 2.3) & (rows.time < 2.9)]


def _thrust_fraction(u: np.ndarray) -> np.ndarray:
    """The ESC's thrust model with nexus:thrustModelFactor 0.5: fraction of full thrust for command u."""
    return 0.5 * u + 0.5 * u * u


def seed_where(path, worlds: int, wanted) -> int:
    """The first seed whose drawn values (one dict per world) satisfy ``wanted``: found by drawing, not flying."""
    from nexus.core.rng import RngTree
    from nexus.worlds.variation import load_variation

    variation = load_variation(path, rotors=4, sensors=["Imu", "Mag", "Baro", "Gps"])
    for seed in range(200):
        if wanted(variation.draw(RngTree(seed), worlds)):
            return seed
    raise AssertionError("no seed below 200 draws what the test needs")


def test_a_heavier_base_hovers_on_proportionally_more_thrust(tmp_path):
    # World 1 carries 0.5 kg more on its base than world 0. In a steady hover thrust = M g:
    # the thrust fractions must be in the ratio of the total masses.
    path = _file(tmp_path, 'mass = { dist = "choice", values = [5.031, 5.531] }\n')
    seed = seed_where(path, 2, lambda d: [v["mass"] for v in d] == [5.031, 5.531])
    # Thrust to 1 % measures the physics, not the estimator: fly on the true state.
    heavy = fly(tmp_path / "run", "--mission", "short", "--seed", str(seed), "--duration", "6", "--worlds", "2",
                "--vary", str(path), "--estimator", "truth")
    light, loaded = (_thrust_fraction(_hover(heavy, w)[[f"controls[{k}]" for k in range(4)]].to_numpy()).sum(axis=1).mean()
                     for w in (0, 1))
    assert loaded / light == pytest.approx((TOTAL_MASS + 0.5) / TOTAL_MASS, rel=0.01)


def test_a_steady_push_tilts_the_hover_into_it(tmp_path):
    # The tilt and the held place measure the physics and the position loop, not the estimator: fly on the truth.
    run = fly(tmp_path / "run", "--mission", "short", "--seed", "3", "--duration", "7", "--vary",
              str(_file(tmp_path, "base_force_x = 2.0\n")), "--estimator", "truth")
    # 2 N east on a 5.831 kg hover: the thrust leans west by atan(2 / (M g)) = 2.0 degrees.
    expected = math.degrees(math.atan(2.0 / (TOTAL_MASS * GRAVITY)))
    rows = run.world(0)
    steady = rows[(rows.time > 4.0) & (rows.time < 6.5)]  # the position loop has taken up the wind by 4 s
    q = steady[[f"body/base.pose[{k}]" for k in range(3, 7)]].to_numpy().astype(np.float64)
    x, y, z, w = q.T
    up_x = 2.0 * (x * z + w * y)  # world x of the body's up axis
    tilt = np.degrees(np.arcsin(-up_x)).mean()
    assert tilt == pytest.approx(expected, rel=0.15)
    # ... and it holds its place: the position loop's integral takes the wind out.
    assert abs(steady["body/base.pose[0]"].mean()) < 0.15


def test_a_rotor_that_fails_changes_only_its_world_and_only_from_its_time(tmp_path):
    path = _file(tmp_path, 'rotor_fail_time = 3.0\nrotor_fail_index = 2\nrotor_fail_fraction = 0.5\n'
                           'rotor_fail_probability = 0.5\n')
    seed = seed_where(path, 2, lambda d: [math.isinf(v["rotor_fail_time"]) for v in d] == [True, False])
    # On the truth: an EKF's noise is drawn per world, so the two worlds would differ before the failure too.
    run = fly(tmp_path / "run", "--mission", "short", "--seed", str(seed), "--duration", "5", "--worlds", "2",
              "--vary", str(path), "--estimator", "truth")
    assert [v["rotor_fail_time"] for v in run.info["world_values"]] == [None, 3.0]  # never: null in run.json
    good, bad = run.world(0), run.world(1)
    before = (good.time < 3.0).sum()  # the tick at 3.0 s steps with the failed rotor already
    assert bits_differ(good[:before][["body/base.pose[2]"]], bad[:before][["body/base.pose[2]"]]) == []
    assert not np.array_equal(good["body/base.pose[2]"][before: before + 50], bad["body/base.pose[2]"][before: before + 50])
    # Half of one rotor's thrust gone: the controller's command on that rotor rises to make it up.
    after = bad[(bad.time > 3.5) & (bad.time < 4.5)]
    assert after["controls[2]"].mean() > good[(good.time > 3.5) & (good.time < 4.5)]["controls[2]"].mean() + 0.05


@pytest.mark.parametrize("mode", ["freeze", "dropout"])
def test_a_sensor_fault_freezes_its_values_or_its_samples(tmp_path, mode):
    text = f'sensor_fault_time = 2.0\nsensor_fault_sensor = "Baro"\nsensor_fault_mode = "{mode}"\n'
    run = fly(tmp_path / "run", "--mission", "short", "--seed", "3", "--duration", "4", "--worlds", "2",
              "--vary", str(_file(tmp_path, text)))
    rows = run.world(1)
    after = rows[rows.time > 2.1]
    held = after["baro.pressure"].to_numpy()
    assert np.all(held == held[0])  # the pressure stopped changing while the vehicle climbs
    stamps = after["baro.time"].to_numpy()
    if mode == "freeze":
        assert stamps.max() > 3.9  # fresh time stamps: a stuck sensor
    else:
        assert stamps.max() <= 2.0 + 1e-9  # no sample after the fault
    before = rows[(rows.time > 1.0) & (rows.time < 2.0)]["baro.pressure"].to_numpy()
    assert len(set(before)) > 10  # it was a live, noisy sensor before
