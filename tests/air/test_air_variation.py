"""Variation files draw each world's air (wind_speed, wind_direction, turbulence_level); sweeps set --wind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nexus.air.wind_field import WindField
from nexus.core import BuildError, Loop
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.params import parameters
from nexus.worlds.variation import load_variation
from tests.air.conftest import HeldBody, WindTape

DATA = Path(__file__).resolve().parents[1] / "data"


def test_each_world_blows_its_own_drawn_wind():
    # World 0: 3 m/s from the west (+x), no turbulence; world 1: 6 m/s from the north (-y), severe turbulence.
    # Held at the reference height (10 m), so the mean wind is the drawn speed itself.
    variation = [{"wind_speed": 3.0, "wind_direction": 270.0, "turbulence_level": "none"},
                 {"wind_speed": 6.0, "wind_direction": 0.0, "turbulence_level": "severe"}]
    tape = WindTape(500, 2)
    loop = Loop([HeldBody((0.0, 0.0, 10.0)), WindField(speed=1.0, direction=90.0), tape], device="cpu", worlds=2,
                variation=variation).build()
    while loop.ticks < 500:
        loop.advance(500 - loop.ticks)
    wind = tape.history.numpy()[1:]
    assert np.allclose(wind[:, 0], [3.0, 0.0, 0.0], atol=1e-6)
    assert wind[:, 1, 1].mean() == pytest.approx(-6.0, abs=1.0)  # severe turbulence about a 6 m/s mean
    assert wind[:, 1, 2].std() > 0.5  # sigma_w = 0.1 * 45 kt = 2.3 m/s


def test_the_resolver_knows_the_air_names_and_a_variation_file_draws_them(tmp_path):
    for name in ("wind_speed", "wind_direction", "turbulence_level"):
        assert "variation" in parameters().resolve(name, "variation").readers
    for name in ("wind", "turbulence"):
        assert "sweep" in parameters().resolve(name, "sweep").readers
    path = tmp_path / "air.toml"
    path.write_text('wind_speed = {dist = "uniform", low = 2.0, high = 8.0}\nwind_direction = 270\n'
                    'turbulence_level = {dist = "choice", values = ["light", "severe"]}\n')
    from nexus.core.rng import RngTree

    drawn = load_variation(path, rotors=4, sensors=["Imu"]).draw(RngTree(0), 8)
    assert all(2.0 <= w["wind_speed"] <= 8.0 and w["wind_direction"] == 270.0 for w in drawn)
    assert {w["turbulence_level"] for w in drawn} <= {"light", "severe"}


def test_an_unknown_drawn_turbulence_level_is_refused(tmp_path):
    path = tmp_path / "air.toml"
    path.write_text('turbulence_level = "hurricane"\n')
    with pytest.raises(BuildError, match="turbulence_level.*'none', 'light', 'moderate' or 'severe'"):
        load_variation(path, rotors=4, sensors=["Imu"])


def test_a_variation_drawing_wind_speed_puts_the_wind_field_in_the_ring(tmp_path):
    path = tmp_path / "air.toml"
    path.write_text('wind_speed = {dist = "choice", values = [2.0, 9.0]}\n')
    flight = build_flight(RunConfig(vehicle=str(DATA / "astro_max_drag.usda"), worlds=2, vary=str(path), seed=1,
                                    device="cpu", duration=1.0))
    assert [c for c in flight.loop.components if isinstance(c, WindField)]
    assert sorted({w["wind_speed"] for w in flight.variation}) <= [2.0, 9.0]
    flight.loop.close()


def test_a_sweep_grid_over_wind_and_turbulence_makes_one_point_each(tmp_path):
    from nexus.sweep.points import expand
    from nexus.sweep.spec import parse

    path = tmp_path / "sweep.toml"
    path.write_text('[run]\nmission = "short"\nduration = 2.0\ndevice = "cpu"\n\n'
                    '[grid]\nwind = ["0@270", "8@270"]\nturbulence = ["light", "severe"]\n')
    made = expand(parse(path))
    assert sorted((p.config.wind, p.config.turbulence) for p in made) == [
        ("0@270", "light"), ("0@270", "severe"), ("8@270", "light"), ("8@270", "severe")]


def test_a_sweep_point_with_a_bad_wind_is_refused_before_any_run(tmp_path):
    from nexus.sweep.points import expand
    from nexus.sweep.spec import SweepError, parse

    path = tmp_path / "sweep.toml"
    path.write_text('[run]\nmission = "short"\ndevice = "cpu"\n\n[grid]\nwind = ["8@270", "8@west"]\n')
    with pytest.raises(SweepError, match=r"the point \{'wind': '8@west'\} cannot fly: --wind 8@west: give SPEED@FROM"):
        expand(parse(path))
