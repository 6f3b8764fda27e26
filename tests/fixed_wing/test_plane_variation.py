"""A variation file draws for a plane: each world of ``nexus run --vehicle aerosonde --worlds N --vary FILE`` flies
its own mass, wind and turbulence, and world i of N is that world flown alone (``--world-of``).

The hand figure: in the last 4 s of leg 2 (level at 100 m, 8 s and more after the turn), each world's angle of
attack is the book's trim angle at that world's drawn mass and at the airspeed it flies through its drawn wind (``tests/fixed_wing/book_model.py``'s root solve, no
Nexus code). Figures measured 2026-12-06: docs/fixed_wing.md, "Planes in worlds, variation and scenarios".
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.fixed_wing.book_model import Aerosonde, trim
from tests.worlds.flights import bits_differ, fly

G = 9.80665  # the scene's gravity [m/s²]
REFERENCE_HEIGHT, SHEAR = 10.0, 0.143  # the default wind profile's reference height [m] and power-law exponent

VARIATION = """\
mass = {dist = "uniform", low = 9.0, high = 13.0}
wind_speed = {dist = "uniform", low = 0.0, high = 4.0}
wind_direction = {dist = "uniform", low = 0.0, high = 360.0}
"""


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    root = tmp_path_factory.mktemp("plane_variation")
    vary = root / "vary.toml"
    vary.write_text(VARIATION)
    return fly(root / "n4", "--vehicle", "aerosonde", "--worlds", "4", "--vary", str(vary), "--duration", "50")


def body_air(world):
    """Time [s], the velocity relative to the air in body FLU [m/s], and the wind [m/s, ENU], per tick."""
    t = world.time.to_numpy()
    v = np.stack([world[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1).astype(float)
    wind = np.stack([world[f"wind[{i}]"].to_numpy() for i in range(3)], 1).astype(float)
    x, y, z, w = (world[f"body/base.pose[{i}]"].to_numpy().astype(float) for i in range(3, 7))
    # The base's rotation body FLU -> world ENU, written out from its quaternion (x, y, z, w); its transpose reads
    # a world vector in the body.
    rot = np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], 1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], 1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], 1)], 1)
    relative = np.einsum("nji,nj->ni", rot, v - wind)
    return t, relative, wind


def test_each_world_flies_the_trim_of_its_own_mass_and_wind(batch):
    values = batch.info["world_values"]
    assert len(values) == 4 and all(set(v) == {"mass", "wind_speed", "wind_direction"} for v in values)
    masses = [v["mass"] for v in values]
    assert max(masses) - min(masses) > 1.0  # the draws differ (seed 0: 9.45 to 11.62 kg)
    alphas = []
    for index, drawn in enumerate(values):
        world = batch.world(index)
        t, relative, wind = body_air(world)
        leg = world.plane_leg.to_numpy()
        end = t[leg == 2][-1]
        on = (t > end - 4.0) & (t <= end)
        assert t[leg == 2][0] < end - 12.0 and leg[-1] == 3
        # The wind is the drawn one at the base's height: the power law from 10 m, blowing from the drawn bearing.
        height = world["body/base.pose[2]"].to_numpy().astype(float)
        law = drawn["wind_speed"] * (height / REFERENCE_HEIGHT) ** SHEAR
        late = t > 3.0
        assert np.max(np.abs(np.hypot(wind[late, 0], wind[late, 1]) - law[late])) < 2e-3
        if drawn["wind_speed"] > 0.5:
            bearing = math.radians(drawn["wind_direction"])  # from; it blows toward the opposite bearing
            toward = np.array([-math.sin(bearing), -math.cos(bearing)])  # east, north
            assert np.min(wind[late, :2] @ toward / np.hypot(wind[late, 0], wind[late, 1])) > 1.0 - 1e-5
        airspeed = float(np.mean(np.linalg.norm(relative[on], axis=1)))
        alpha = float(np.mean(np.degrees(np.arctan2(-relative[on, 2], relative[on, 0]))))  # FRD w = −z
        book = math.degrees(trim(airspeed, p=Aerosonde(g=G, mass=drawn["mass"])).alpha)
        # Not quite steady (a tail wind shortens the leg: 0.04° in world 1), hence 0.1°; the wing without the
        # wind misses world 0 by 1.15° (docs/fixed_wing.md).
        assert abs(alpha - book) < 0.1, (index, drawn, airspeed, alpha, book)
        alphas.append(alpha)
    # The four worlds fly four different planes: α spans more than a degree.
    assert max(alphas) - min(alphas) > 1.0


def test_world_i_of_n_is_the_world_flown_alone_bit_for_bit(batch, tmp_path):
    alone = fly(tmp_path / "alone1", "--world-of", f"{batch.out}:1")
    assert alone.info["world_values"] == [batch.info["world_values"][1]]
    assert bits_differ(batch.world(1), alone.world(0)) == []


def test_turbulence_draws_differ_by_world(tmp_path):
    vary = tmp_path / "gusty.toml"
    vary.write_text('wind_speed = 3.0\nwind_direction = 270.0\nturbulence_level = {dist = "choice", '
                    'values = ["none", "light"]}\n')
    flown = fly(tmp_path / "n3", "--vehicle", "aerosonde", "--worlds", "3", "--vary", str(vary), "--duration", "20")
    levels = [v["turbulence_level"] for v in flown.info["world_values"]]
    assert "none" in levels and "light" in levels, levels
    for index, level in enumerate(levels):
        world = flown.world(index)
        t, _, wind = body_air(world)
        height = world["body/base.pose[2]"].to_numpy().astype(float)
        law = 3.0 * (height / REFERENCE_HEIGHT) ** SHEAR
        late = t > 3.0
        spread = float(np.sqrt(np.mean((np.hypot(wind[late, 0], wind[late, 1]) - law[late]) ** 2)))
        if level == "none":
            assert spread < 2e-3 and np.max(np.abs(wind[late, 2])) == 0.0
        else:  # Dryden's light turbulence: σ of order 1 m/s near the ground, about 0.5 m/s at 100 m (docs/air.md)
            assert spread > 0.1 and np.std(wind[late, 2]) > 0.05, (index, spread)


@pytest.mark.parametrize("line, name", [
    ("thrust_scale = 1.1", "thrust_scale"),
    ('rotor_fail_time = 3.0\nrotor_fail_index = 0', "rotor_fail_time"),
    ("esc_lag_scale = 2.0", "esc_lag_scale"),
])
def test_a_rotor_s_key_is_refused_on_a_plane_in_one_line(tmp_path, line, name):
    vary = tmp_path / "rotors.toml"
    vary.write_text(f"mass = 11.0\n{line}\n")
    flown = fly(tmp_path / "out", "--vehicle", "aerosonde", "--vary", str(vary), "--duration", "1", expect=2)
    errors = [row for row in flown.output.splitlines() if row.startswith("error:")]
    assert len(errors) == 1, flown.output
    assert f"rotors.toml:2: parameter {name!r} acts on the vehicle's rotors, and this vehicle has none" in errors[0]
