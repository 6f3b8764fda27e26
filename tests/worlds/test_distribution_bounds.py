"""A variation file's distributions are checked whole against their parameters' bounds, before any draw.

``wind_speed = {dist = "uniform", low = -5.0, high = 10.0}`` flew when a seed's draws happened to be positive
and failed with another seed (in a sweep, midway). Now every distribution kind is checked once, when the file
is read: a uniform's [low, high], a choice's and a constant's values, a normal's low/high, and a normal's
untruncated side at least 6 std from a bound of its parameter (nearer: refused, truncate it).

Hand numbers: wind_speed must be >= 0 and wind_direction in [0, 360]; normal(3, 1) has its mean 3 std above
0, normal(7, 1) 7 std; normal(350, 5) has 360 two std above its mean; battery_initial_charge is in (0, 1].
"""

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.worlds.owners import drawn_parameters
from nexus.worlds.variation import Distribution, check_distributions, load_variation

SENSORS = ("Imu", "Mag", "Baro", "Gps")


def write(tmp_path, text, name="vary.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(tmp_path, text) -> tuple[str, object]:
    path = write(tmp_path, text)
    with pytest.raises(BuildError) as caught:
        load_variation(path, rotors=4, sensors=SENSORS)
    message = str(caught.value)
    assert "\n" not in message
    return message, path


def test_the_issues_uniform_is_refused_whatever_the_seed(tmp_path):
    message, path = refused(tmp_path, 'wind_speed = {dist = "uniform", low = -5.0, high = 10.0}\n')
    assert message == (f"{path}:1: parameter 'wind_speed': uniform(-5, 10) draws values below 0, but each value "
                       "of wind_speed must be >= 0 [m/s]; give low = 0 or more")


def test_a_uniform_above_its_bound_and_one_on_an_open_end(tmp_path):
    message, _ = refused(tmp_path, 'battery_initial_charge = {dist = "uniform", low = 0.5, high = 1.1}\n')
    assert message.endswith(":1: parameter 'battery_initial_charge': uniform(0.5, 1.1) draws values above 1, but "
                            "each value of battery_initial_charge must be in (0, 1]; give high = 1 or less")
    # [0, 1] against (0, 1]: the ends count as inside; a draw of exactly 0 would be drawn again
    variation = load_variation(write(tmp_path, 'battery_initial_charge = {dist = "uniform", low = 0.0, '
                                               'high = 1.0}\n'), rotors=4, sensors=SENSORS)
    assert all(0.0 < w["battery_initial_charge"] <= 1.0 for w in variation.draw(RngTree(3), 200))


def test_a_normal_near_a_bound_must_be_truncated_and_then_never_fails(tmp_path):
    message, _ = refused(tmp_path, 'wind_speed = {dist = "normal", mean = 3.0, std = 1.0}\n')
    assert message.endswith(":1: parameter 'wind_speed': normal(mean=3, std=1) has no low and draws values below 0 "
                            "(its mean is 3 std above it, under 6), but each value of wind_speed must be >= 0 [m/s]; "
                            "truncate it with low = 0 (draws below are drawn again), or narrow std")
    message, _ = refused(tmp_path, 'wind_direction = {dist = "normal", mean = 350.0, std = 5.0}\n')
    assert "normal(mean=350, std=5) has no high and draws values above 360 (its mean is 2 std below it, under 6)" \
           in message and message.endswith("truncate it with high = 360 (draws above are drawn again), or narrow std")
    truncated = load_variation(write(tmp_path, 'wind_speed = {dist = "normal", mean = 3.0, std = 1.0, low = 0.0}\n'),
                               rotors=4, sensors=SENSORS)
    for seed in range(5):  # 5 x 400 draws, about 3 in 1000 of them below 0 and drawn again: none fails
        assert all(w["wind_speed"] >= 0.0 for w in truncated.draw(RngTree(seed), 400))


def test_a_normal_far_from_its_bounds_draws_as_it_always_did(tmp_path):
    variation = load_variation(write(tmp_path, 'wind_speed = {dist = "normal", mean = 7.0, std = 1.0}\n'),
                               rotors=4, sensors=SENSORS)
    drawn = variation.draw(RngTree(13), 6)
    for world in range(6):  # the plain normal draw of the world's own stream, bit for bit
        expected = RngTree(13).child("vary").child("wind_speed").child(str(world)).generator().normal(7.0, 1.0)
        assert drawn[world]["wind_speed"] == float(expected)


def test_a_normals_own_bounds_must_lie_inside_the_parameters(tmp_path):
    message, _ = refused(tmp_path, 'com_x = {dist = "normal", mean = 0.0, std = 0.1, low = -1.0}\n')
    assert message.endswith(":1: parameter 'com_x': normal(mean=0, std=0.1, bounds [-1, inf]) is truncated below "
                            "-0.5, but each value of com_x must be |value| <= 0.5 [m]; give low = -0.5 or more")


def test_a_normal_that_keeps_too_few_draws_is_refused(tmp_path):
    # mean 1 kg, std 0.001, truncated to [5, 6] kg: 4000 std away, a share 0 kept
    message, _ = refused(tmp_path, 'mass = {dist = "normal", mean = 1.0, std = 0.001, low = 5.0, high = 6.0}\n')
    assert "keeps a share 0 of its draws inside [5, 6], under 0.03" in message
    # std 0 draws only the mean: 1 outside [2, inf] keeps none
    message, _ = refused(tmp_path, 'mass = {dist = "normal", mean = 1.0, std = 0.0, low = 2.0}\n')
    assert "keeps a share 0 of its draws inside [2, inf]" in message
    # mean 0, std 1, truncated to [2, inf]: 1 - Phi(2) = 0.0228 of the draws, under 0.03; to [1.5, inf]: 0.0668
    message, _ = refused(tmp_path, 'wind_speed = {dist = "normal", mean = 0.0, std = 1.0, low = 2.0}\n')
    assert "keeps a share 0.0228 of its draws inside [2, inf]" in message
    load_variation(write(tmp_path, 'wind_speed = {dist = "normal", mean = 0.0, std = 1.0, low = 1.5}\n'), rotors=4,
                   sensors=SENSORS)


def test_choices_and_constants_are_checked_whole_too(tmp_path):
    message, _ = refused(tmp_path, 'wind_speed = {dist = "choice", values = [2.0, -1.0]}\n')
    assert ":1: parameter 'wind_speed': choice value -1, but it must be >= 0 [m/s]; change it" in message
    message, _ = refused(tmp_path, 'wind_speed = -1.0\n')
    assert ":1: parameter 'wind_speed' = -1, but it must be >= 0 [m/s]; change it" in message


def test_an_excluded_end_drawn_exactly_is_drawn_again():
    class Draws:  # a generator whose uniform gives 0.0 first (the excluded end of (0, 1]), then 0.25
        def __init__(self):
            self.values = [0.0, 0.25]

        def uniform(self, low, high):
            return self.values.pop(0)

    allowed = drawn_parameters()["battery_initial_charge"].interval
    assert Distribution("uniform", low=0.0, high=1.0).sample(Draws(), allowed) == 0.25


def test_a_sweep_and_a_scenario_matrix_refuse_the_file_before_any_run(tmp_path):
    from nexus.scenario.spec import load as load_scenario
    from nexus.sweep.spec import parse

    vary = write(tmp_path, 'mass = 5.0\nwind_speed = {dist = "uniform", low = -5.0, high = 10.0}\n')
    with pytest.raises(BuildError) as caught:
        check_distributions(vary)
    assert str(caught.value).startswith(f"{vary}:2: parameter 'wind_speed': uniform(-5, 10) draws values below 0")
    sweep = write(tmp_path, f'[run]\nworlds = 2\nvary = "{vary}"\n\n[grid]\nseed = [0, 1]\n', "sweep.toml")
    with pytest.raises(BuildError) as caught:
        parse(sweep)
    assert str(caught.value).startswith(f"{sweep}: [run]: {vary}:2: parameter 'wind_speed': uniform(-5, 10) ")
    scenario = write(tmp_path, f'name = "s"\nduration = 1.0\n\n[matrix]\nvary = ["{vary}"]\n\n[[step]]\ndo = "hold"\n'
                               'time = 0.5\n\n[[check]]\nmeasure = "tilt"\nmax = 10.0\n', "s.toml")
    with pytest.raises(BuildError) as caught:
        load_scenario(scenario)
    assert str(caught.value).startswith(f"{scenario}: matrix.vary: {vary}:2: parameter 'wind_speed': uniform(-5, 10)")


def test_nexus_run_refuses_it_in_one_line_exit_2(tmp_path):
    vary = write(tmp_path, 'wind_speed = {dist = "uniform", low = -5.0, high = 10.0}\n')
    result = CliRunner().invoke(main, ["run", "--vary", str(vary), "--worlds", "2", "--controller", "hold",
                                       "--device", "cpu", "--quiet", "--duration", "0.1", "--out",
                                       str(tmp_path / "run")])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert lines == [f"error: {vary}:1: parameter 'wind_speed': uniform(-5, 10) draws values below 0, but each value "
                     "of wind_speed must be >= 0 [m/s]; give low = 0 or more"]


GUST = 'gust_start_time = 1.0\ngust_amplitude = 3.0\ngust_direction = 90.0\n'


def test_a_gust_no_longer_than_the_run_is_checked_distribution_by_distribution(tmp_path):
    # a 10 s run: uniform(1, 20) draws gusts longer than it in about half the worlds, a choice of 12 s in some
    path = write(tmp_path, GUST + 'gust_duration = {dist = "uniform", low = 1.0, high = 20.0}\n')
    with pytest.raises(BuildError) as caught:
        load_variation(path, rotors=4, sensors=SENSORS, run_s=10.0)
    assert str(caught.value) == (f"{path}:4: parameter 'gust_duration': uniform(1, 20) draws values above 10, but "
                                 "each value of gust_duration must be > 0 and no longer than the run (10 s) [s]; "
                                 "give high = 10 or less")
    path = write(tmp_path, GUST + 'gust_duration = {dist = "choice", values = [1.0, 12.0]}\n')
    with pytest.raises(BuildError, match=r":4: parameter 'gust_duration': choice value 12, but it must be > 0 and no "
                                         r"longer than the run \(10 s\) \[s\]; change it$"):
        load_variation(path, rotors=4, sensors=SENSORS, run_s=10.0)
    path = write(tmp_path, GUST + 'gust_duration = {dist = "uniform", low = 1.0, high = 10.0}\n')
    drawn = load_variation(path, rotors=4, sensors=SENSORS, run_s=10.0).draw(RngTree(0), 100)
    assert all(1.0 <= w["gust_duration"] <= 10.0 for w in drawn)


def test_nexus_run_checks_the_gust_against_its_own_duration(tmp_path):
    vary = write(tmp_path, GUST + 'gust_duration = {dist = "uniform", low = 0.5, high = 3.0}\n')
    result = CliRunner().invoke(main, ["run", "--vary", str(vary), "--worlds", "2", "--controller", "hold",
                                       "--device", "cpu", "--quiet", "--duration", "2", "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert (f"error: {vary}:4: parameter 'gust_duration': uniform(0.5, 3) draws values above 2, but each value of "
            "gust_duration must be > 0 and no longer than the run (2 s) [s]; give high = 2 or less") in result.output
