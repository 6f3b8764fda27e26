"""Monte Carlo variation files: parsing, draws per world, and the one-line errors."""

import math
import os

import numpy as np
import pytest

from nexus.core.errors import BuildError
from nexus.core.rng import RngTree
from nexus.runtime.params import variation_names
from nexus.worlds.owners import drawn_parameters
from nexus.worlds.variation import load_variation, world_values_problem

SENSORS = ("Imu", "Mag", "Baro", "Gps")
#: The default vehicle's names, as a run hands them to the worlds (an unknown name's sentence comes from them).
NAMES = variation_names("astro_max_base")


def write(tmp_path, text, name="vary.toml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def load(tmp_path, text, rotors=4):
    return load_variation(write(tmp_path, text), rotors=rotors, sensors=SENSORS)


def error(tmp_path, text, rotors=4):
    path = write(tmp_path, text)
    with pytest.raises(BuildError) as caught:
        load_variation(path, rotors=rotors, sensors=SENSORS, names=NAMES)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:")
    return message, path


# -- distributions -----------------------------------------------------------------------------------------------

def test_constants_are_the_same_in_every_world(tmp_path):
    variation = load(tmp_path, 'mass = 1.5\nnoise_scale = 2\n[com_x]\ndist = "constant"\nvalue = 0.01\n')
    worlds = variation.draw(RngTree(3), 4)
    assert worlds == [{"mass": 1.5, "noise_scale": 2.0, "com_x": 0.01}] * 4
    assert all(type(w["noise_scale"]) is float for w in worlds)


def test_normal_has_its_mean_and_std(tmp_path):
    variation = load(tmp_path, 'mass = {dist = "normal", mean = 1.2, std = 0.05}\n')
    values = np.array([w["mass"] for w in variation.draw(RngTree(1), 2000)])
    assert abs(values.mean() - 1.2) < 0.005
    assert abs(values.std() - 0.05) < 0.004
    assert all(type(w) is float for w in values.tolist())


def test_truncated_normal_respects_its_bounds(tmp_path):
    variation = load(tmp_path, 'base_force_x = {dist = "normal", mean = 0.0, std = 5.0, low = -2.0, high = 3.0}\n')
    values = np.array([w["base_force_x"] for w in variation.draw(RngTree(2), 2000)])
    assert values.min() >= -2.0 and values.max() <= 3.0
    assert values.min() < -1.9 and values.max() > 2.9  # the whole range is reached, not clipped


def test_normal_with_one_bound(tmp_path):
    variation = load(tmp_path, 'drag_scale = {dist = "normal", mean = 0.1, std = 1.0, low = 0.0}\n')
    values = np.array([w["drag_scale"][0] for w in variation.draw(RngTree(2), 500)])
    assert values.min() >= 0.0 and values.max() > 1.0


def test_uniform_stays_inside_its_bounds(tmp_path):
    variation = load(tmp_path, 'start_x = {dist = "uniform", low = -5.0, high = 10.0}\n')
    values = np.array([w["start_x"] for w in variation.draw(RngTree(5), 2000)])
    assert values.min() >= -5.0 and values.max() <= 10.0
    assert abs(values.mean() - 2.5) < 0.3
    assert values.min() < -4.9 and values.max() > 9.9


def test_choice_frequencies_follow_the_weights(tmp_path):
    variation = load(tmp_path, 'start_yaw = {dist = "choice", values = [0, 90, 180], weights = [1, 0, 3]}\n')
    values = [w["start_yaw"] for w in variation.draw(RngTree(6), 2000)]
    assert set(values) <= {0.0, 180.0}
    assert abs(values.count(180.0) / 2000 - 0.75) < 0.03
    assert all(type(v) is float for v in values)


def test_choice_without_weights_is_even(tmp_path):
    variation = load(tmp_path, 'rotor_fail_time = 1\nrotor_fail_index = {dist = "choice", values = [0, 1, 2, 3]}\n')
    values = [w["rotor_fail_index"] for w in variation.draw(RngTree(7), 2000)]
    assert all(type(v) is int for v in values)
    for index in range(4):
        assert abs(values.count(index) / 2000 - 0.25) < 0.03


def test_strings_for_the_sensor_fault(tmp_path):
    variation = load(tmp_path, 'sensor_fault_time = 2.5\n'
                               'sensor_fault_sensor = {dist = "choice", values = ["Imu", "Gps"]}\n'
                               'sensor_fault_mode = {dist = "constant", value = "dropout"}\n')
    worlds = variation.draw(RngTree(8), 200)
    assert {w["sensor_fault_sensor"] for w in worlds} == {"Imu", "Gps"}
    assert all(w["sensor_fault_mode"] == "dropout" and w["sensor_fault_time"] == 2.5 for w in worlds)
    assert all(type(w["sensor_fault_sensor"]) is str for w in worlds)


def test_fault_defaults(tmp_path):
    [world] = load(tmp_path, 'rotor_fail_time = 4.0\nsensor_fault_time = 1.0\nsensor_fault_sensor = "Baro"\n').draw(
        RngTree(1), 1)
    assert world == {"rotor_fail_time": 4.0, "rotor_fail_index": 0, "rotor_fail_fraction": 0.0,
                     "sensor_fault_time": 1.0, "sensor_fault_sensor": "Baro", "sensor_fault_mode": "freeze"}


def test_fault_probability_sets_the_share_of_worlds_with_the_fault(tmp_path):
    variation = load(tmp_path, 'rotor_fail_time = {dist = "uniform", low = 1.0, high = 2.0}\n'
                               'rotor_fail_fraction = 0.5\nrotor_fail_probability = 0.3\n'
                               'sensor_fault_time = 3.0\nsensor_fault_sensor = "Mag"\nsensor_fault_probability = 0\n')
    worlds = variation.draw(RngTree(9), 2000)
    times = [w["rotor_fail_time"] for w in worlds]
    finite = [t for t in times if math.isfinite(t)]
    assert abs(len(finite) / 2000 - 0.3) < 0.03
    assert all(t == math.inf for t in times if not math.isfinite(t))
    assert all(1.0 <= t <= 2.0 for t in finite)
    assert all(w["sensor_fault_time"] == math.inf for w in worlds)
    assert all("rotor_fail_probability" not in w and w["rotor_fail_fraction"] == 0.5 for w in worlds)


# -- per rotor ---------------------------------------------------------------------------------------------------

def test_per_rotor_draws_one_value_per_rotor(tmp_path):
    variation = load(tmp_path, 'thrust_scale = {dist = "uniform", low = 0.9, high = 1.1, per_rotor = true}\n'
                               'drag_scale = {dist = "uniform", low = 0.9, high = 1.1}\n', rotors=6)
    for world in variation.draw(RngTree(4), 20):
        assert len(world["thrust_scale"]) == 6 and len(set(world["thrust_scale"])) == 6
        assert len(world["drag_scale"]) == 6 and len(set(world["drag_scale"])) == 1
        assert all(0.9 <= v <= 1.1 and type(v) is float for v in world["thrust_scale"])
        assert world_values_problem(world, 6) is None


def test_per_rotor_only_where_allowed(tmp_path):
    message, _ = error(tmp_path, 'mass = {dist = "uniform", low = 1, high = 2, per_rotor = true}\n')
    assert ":1:" in message and "'mass'" in message and "thrust_scale" in message


# -- determinism -------------------------------------------------------------------------------------------------

SPREAD = ('mass = {dist = "normal", mean = 1.0, std = 0.1}\n'
          'thrust_scale = {dist = "normal", mean = 1.0, std = 0.02, per_rotor = true}\n'
          'start_yaw = {dist = "choice", values = [0, 90, 180, 270]}\n'
          'rotor_fail_time = 2.0\nrotor_fail_probability = 0.5\n')


def test_same_seed_same_values_other_seed_other_values(tmp_path):
    variation = load(tmp_path, SPREAD)
    assert variation.draw(RngTree(11), 16) == variation.draw(RngTree(11), 16)
    assert load(tmp_path, SPREAD).draw(RngTree(11), 16) == variation.draw(RngTree(11), 16)
    other = variation.draw(RngTree(12), 16)
    assert [w["mass"] for w in other] != [w["mass"] for w in variation.draw(RngTree(11), 16)]


def test_world_values_do_not_depend_on_the_number_of_worlds(tmp_path):
    variation = load(tmp_path, SPREAD)
    small, large = variation.draw(RngTree(11), 16), variation.draw(RngTree(11), 64)
    assert small == large[:16]
    assert small[5] == large[5]


def test_world_draws_come_from_the_named_stream(tmp_path):
    variation = load(tmp_path, 'mass = {dist = "normal", mean = 1.0, std = 0.1}\n')
    expected = RngTree(13).child("vary").child("mass").child("5").generator().normal(1.0, 0.1)
    assert variation.draw(RngTree(13), 6)[5]["mass"] == float(expected)


def test_adding_a_parameter_does_not_shift_another(tmp_path):
    one = load(tmp_path, 'mass = {dist = "normal", mean = 1.0, std = 0.1}\n').draw(RngTree(3), 8)
    two = load(tmp_path, 'base_force_x = {dist = "uniform", low = -1, high = 1}\n'
                         'mass = {dist = "normal", mean = 1.0, std = 0.1}\n').draw(RngTree(3), 8)
    assert [w["mass"] for w in one] == [w["mass"] for w in two]


# -- physical checks ---------------------------------------------------------------------------------------------

def test_a_distribution_that_can_draw_outside_the_check_is_refused_at_load_not_per_draw(tmp_path):
    # normal(0.1, 1.0) drew mass <= 0 in some worlds and not in others: now the file is refused whole, for every
    # seed (tests/worlds/test_distribution_bounds.py has the rest)
    message, path = error(tmp_path, '# masses\nmass = {dist = "normal", mean = 0.1, std = 1.0}\n')
    assert message.startswith(f"{path}:2: parameter 'mass': normal(mean=0.1, std=1) has no low and draws values "
                              "below 0 (its mean is 0.1 std above it, under 6), but each value of mass must be > 0")
    assert message.endswith("truncate it with low = 0 (draws below are drawn again), or narrow std")


def test_a_truncated_normal_that_cannot_be_met_is_refused_at_load(tmp_path):
    message, _ = error(tmp_path, 'mass = {dist = "normal", mean = 1.0, std = 0.001, low = 5.0, high = 6.0}\n')
    assert ":1: parameter 'mass': normal(mean=1, std=0.001, bounds [5, 6]) keeps a share 0 of its draws inside " \
           "[5, 6], under 0.03" in message


def test_constants_are_checked_at_load(tmp_path):
    message, _ = error(tmp_path, 'noise_scale = 1\ncom_z = 0.7\n')
    assert ":2: parameter 'com_z' = 0.7, but it must be |value| <= 0.5 [m]" in message
    message, _ = error(tmp_path, 'rotor_fail_time = 1\nrotor_fail_fraction = {dist = "choice", values = [0.5, 1.5]}\n')
    assert ":2: parameter 'rotor_fail_fraction': choice value 1.5" in message and "[0, 1]" in message


def test_world_values_problem():
    assert world_values_problem({"mass": 1.0, "thrust_scale": [1.0] * 4, "rotor_fail_time": math.inf}, 4) is None
    assert world_values_problem({"mass": -0.5}, 4) == "mass = -0.5, but it must be > 0 [kg]"
    assert "thrust_scale[2] = 0" in world_values_problem({"thrust_scale": [1.0, 1.0, 0.0, 1.0]}, 4)
    assert "3 values" in world_values_problem({"thrust_scale": [1.0] * 3}, 4)
    assert "4 rotors (0..3)" in world_values_problem({"rotor_fail_index": 4}, 4)
    assert "'freeze' or 'dropout'" in world_values_problem({"sensor_fault_mode": "stuck"}, 4)
    assert "not a variation parameter" in world_values_problem({"masss": 1.0}, 4)
    assert "finite" in world_values_problem({"base_force_z": math.nan}, 4)


def test_every_parameter_is_documented():
    own = drawn_parameters(builtin_only=True)
    # 29 (with the IMU's bias_walk_scale), the air (wind_speed, wind_direction, turbulence_level), the drawn gust
    # (start, duration, amplitude, direction, probability), the pack (capacity, initial charge, resistance) and
    # ground_effect_scale, and the IMU's bias step (imu_bias_step_time, its 3 accelerometer and 3 gyro axes).
    assert len(own) == 48
    for name, info in own.items():
        assert info.name == name and info.doc and info.check
    assert {n for n, i in own.items() if i.per_rotor_allowed} == {"thrust_scale", "drag_scale", "ground_effect_scale"}


# -- file errors -------------------------------------------------------------------------------------------------

def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.toml"
    with pytest.raises(BuildError, match=r"nowhere.toml: no such variation file; check the path"):
        load_variation(path, rotors=4, sensors=SENSORS)


def test_directory(tmp_path):
    with pytest.raises(BuildError, match=r"is a directory"):
        load_variation(tmp_path, rotors=4, sensors=SENSORS)


def test_unreadable_file(tmp_path, monkeypatch):
    path = write(tmp_path, "mass = 1\n")
    if os.name == "posix" and os.geteuid() != 0:
        path.chmod(0)
    else:  # root reads every file: make the read fail as it would for anyone else
        def refuse(self):
            raise PermissionError(13, "Permission denied", str(self))
        monkeypatch.setattr(type(path), "read_bytes", refuse)
    try:
        with pytest.raises(BuildError, match=r"vary.toml: the variation file cannot be read \(Permission denied\); "
                                             r"check its permissions"):
            load_variation(path, rotors=4, sensors=SENSORS)
    finally:
        path.chmod(0o644)


def test_not_utf8(tmp_path):
    path = tmp_path / "vary.toml"
    path.write_bytes(b"mass = 1\n# caf\xe9\n")
    with pytest.raises(BuildError, match=r"vary.toml:2: the variation file is not UTF-8"):
        load_variation(path, rotors=4, sensors=SENSORS)


def test_bad_toml_names_the_line(tmp_path):
    message, path = error(tmp_path, 'mass = 1\n\nbase_force_x = = 3\n')
    assert message.startswith(f"{path}:3: not valid TOML:") and "line 3" in message


@pytest.mark.parametrize("text, line", [
    # A file cut short, without its last newline: TOML says "at end of document", with no line.
    ("mass = 5.0\nbase_force_x = ", 2),  # the value of line 2 never came
    ('mass = 5.0\n\nstart_x = { dist = "uniform", low = 0', 3),  # the table opened on line 3 is never closed
])
def test_bad_toml_at_the_end_of_the_file_names_its_last_line(tmp_path, text, line):
    message, path = error(tmp_path, text)
    assert message.startswith(f"{path}:{line}: not valid TOML: ") and "(at end of document)" in message


def test_unknown_parameter_suggests_the_closest(tmp_path):
    message, path = error(tmp_path, '# thrust\nmass = 1.0\nthrust_scal = {dist = "uniform", low = 0.9, high = 1.1}\n')
    assert message.startswith(f"{path}:3: parameter 'thrust_scal' is unknown; did you mean 'thrust_scale'?")
    assert message.endswith("`nexus params --vehicle astro_max_base` lists every name and what reads it")


def test_unknown_parameter_as_a_table_header(tmp_path):
    message, path = error(tmp_path, 'mass = 1.0\n\n[base_forcex]\ndist = "constant"\nvalue = 1.0\n')
    assert message.startswith(f"{path}:3: parameter 'base_forcex' is unknown; did you mean 'base_force_x'")


def test_unknown_parameter_with_no_close_name(tmp_path):
    message, _ = error(tmp_path, 'zebra = 1\n')
    assert message.endswith(":1: parameter 'zebra' is unknown; `nexus params --vehicle astro_max_base` lists every "
                            "name and what reads it")


def test_rotor_index_past_the_last_rotor(tmp_path):
    message, path = error(tmp_path, 'rotor_fail_time = 1.0\nrotor_fail_index = 7\n')
    assert message.startswith(f"{path}:2: parameter 'rotor_fail_index' = 7")
    assert "the vehicle has 4 rotors (0..3)" in message
    message, path = error(tmp_path, 'rotor_fail_time = 1.0\n[rotor_fail_index]\ndist = "choice"\nvalues = [1, 4]\n')
    assert message.startswith(f"{path}:2: parameter 'rotor_fail_index': choice value 4")
    assert "the vehicle has 4 rotors (0..3)" in message
    message, _ = error(tmp_path, 'rotor_fail_time = 1.0\nrotor_fail_index = -1\n')
    assert "negative" in message


def test_rotor_index_must_be_an_integer_choice(tmp_path):
    message, _ = error(tmp_path, 'rotor_fail_time = 1\nrotor_fail_index = {dist = "uniform", low = 0, high = 3}\n')
    assert ":2: parameter 'rotor_fail_index'" in message and "use choice" in message
    message, _ = error(tmp_path, 'rotor_fail_time = 1\nrotor_fail_index = 1.0\n')
    assert ":2:" in message and "integer" in message


def test_fault_keys_need_the_fault_time(tmp_path):
    message, path = error(tmp_path, 'mass = 1\nrotor_fail_fraction = 0.5\n')
    assert message.startswith(f"{path}:2: parameter 'rotor_fail_fraction' needs 'rotor_fail_time'")
    assert "add rotor_fail_time" in message
    message, path = error(tmp_path, 'sensor_fault_mode = "dropout"\n')
    assert message.startswith(f"{path}:1: parameter 'sensor_fault_mode' needs 'sensor_fault_time'")
    message, path = error(tmp_path, 'mass = 1\nsensor_fault_time = 3\n')
    assert message.startswith(f"{path}:2: parameter 'sensor_fault_time' needs 'sensor_fault_sensor'")
    assert "Imu, Mag, Baro, Gps" in message


def test_unknown_sensor_lists_the_valid_names(tmp_path):
    message, path = error(tmp_path, 'sensor_fault_time = 1\nsensor_fault_sensor = "Gsp"\n')
    assert message.startswith(f"{path}:2: parameter 'sensor_fault_sensor' = 'Gsp' is not a sensor of this vehicle")
    assert "did you mean 'Gps'?" in message and "valid names: Imu, Mag, Baro, Gps" in message


def test_unknown_fault_mode(tmp_path):
    message, _ = error(tmp_path, 'sensor_fault_time = 1\nsensor_fault_sensor = "Imu"\nsensor_fault_mode = "stuck"\n')
    assert ":3: parameter 'sensor_fault_mode' = 'stuck'" in message and "'freeze' or 'dropout'" in message


@pytest.mark.parametrize(("text", "expected"), [
    ('mass = {dist = "normal", mean = "heavy", std = 0.1}', "'mean' must be a number, not a string ('heavy')"),
    ('mass = {dist = "normal", mean = 1.0}', "a normal needs 'std'"),
    ('mass = {dist = "normal", mean = 1.0, sdt = 0.1}', "key 'sdt' is unknown in a normal table; did you mean 'std'?"),
    ('mass = {dist = "gauss", mean = 1.0, std = 0.1}', "dist 'gauss' is unknown"),
    ('mass = {mean = 1.0, std = 0.1}', "needs a 'dist' key"),
    ('mass = {dist = "normal", mean = 1.0, std = -0.1}', "'std' must be >= 0"),
    ('mass = {dist = "normal", mean = 1.0, std = 0.1, low = 2, high = 1}', "'low' (2) is above 'high' (1)"),
    ('mass = {dist = "uniform", low = 2.0, high = 1.0}', "'low' (2) is above 'high' (1)"),
    ('mass = {dist = "uniform", low = 1.0, high = inf}', "'high' must be finite"),
    ('mass = nan', "its value must be finite"),
    ('mass = "heavy"', "its value must be a number, not a string ('heavy')"),
    ('mass = true', "must be a number or a table"),
    ('mass = [1, 2]', "must be a number or a table"),
    ('mass = {dist = "choice", values = []}', "'values' must be a non-empty array"),
    ('mass = {dist = "choice", values = [1, "a"]}', "choice value 'a' must be a number"),
    ('mass = {dist = "choice", values = [1, 2], weights = [1]}', "array of 2 numbers"),
    ('mass = {dist = "choice", values = [1, 2], weights = [1, -1]}', "'weights' must be >= 0"),
    ('mass = {dist = "choice", values = [1, 2], weights = [0, 0]}', "must not all be 0"),
    ('mass = {dist = "constant"}', "a constant needs 'value'"),
    ('thrust_scale = {dist = "constant", value = 1.0, per_rotor = "yes"}', "'per_rotor' must be true or false"),
    ('sensor_fault_time = 1\nsensor_fault_sensor = 3', "must be a string"),
    ('sensor_fault_time = 1\nsensor_fault_sensor = {dist = "uniform", low = 0, high = 1}', "is a name"),
])
def test_malformed_tables(tmp_path, text, expected):
    message, path = error(tmp_path, text + "\n")
    line = text.count("\n") + 1
    assert message.startswith(f"{path}:{line}: parameter '"), message
    assert expected in message, message


def test_dotted_keys_and_quoted_keys_find_their_line(tmp_path):
    message, path = error(tmp_path, 'mass = 1\n"wind_q" = 3\n')
    assert message.startswith(f"{path}:2: parameter 'wind_q' is unknown")
    message, path = error(tmp_path, 'mass = 1\nwindy.dist = "constant"\nwindy.value = 3\n')
    assert message.startswith(f"{path}:2: parameter 'windy' is unknown")


def test_an_empty_file_varies_nothing(tmp_path):
    assert load(tmp_path, "# nothing\n").draw(RngTree(1), 3) == [{}, {}, {}]


# -- a replay's values (given, not drawn) ------------------------------------------------------------------------

def _given(values, vary=None, first_world=0):
    """world_values for a run of len(values) worlds of astro_max_base (four rotors), given these values."""
    from types import SimpleNamespace

    from nexus.worlds.drawn import world_values

    options = SimpleNamespace(worlds=len(values), vary=vary, first_world=first_world, vehicle="astro_max_base",
                              seed=0)
    return world_values(options, SimpleNamespace(rotors=[0, 1, 2, 3]), (), given=values, names=NAMES)


def test_given_values_are_taken_as_they_are():
    assert _given([{}, {"mass": 5.5, "base_force_x": 1.0}]) == [{}, {"mass": 5.5, "base_force_x": 1.0}]


def test_a_given_name_no_owner_declares_gets_the_resolvers_sentence():
    with pytest.raises(BuildError) as raised:
        _given([{}, {"masss": 5.5}], vary="vary.toml", first_world=3)
    assert str(raised.value) == ("vary.toml: world 4: parameter 'masss' is unknown; did you mean 'mass'? "
                                 "`nexus params --vehicle astro_max_base` lists every name and what reads it")
    with pytest.raises(BuildError, match=r"^the drawn values: world 0: '/vehicle/body/base physics:mass' is another "
                                         r"name of 'mass'; a world's values carry the draw's own name$"):
        _given([{"/vehicle/body/base physics:mass": 5.5}])


def test_a_given_value_outside_its_owners_check_names_the_world():
    with pytest.raises(BuildError, match=r"^the drawn values: world 1: base_force_z = 200, but it must be \|value\| <= 100 "
                                         r"\[N\]$"):
        _given([{}, {"base_force_z": 200.0}])
    with pytest.raises(BuildError, match=r"^1 worlds' values given for a run of 2 worlds$"):
        from types import SimpleNamespace

        from nexus.worlds.drawn import world_values

        world_values(SimpleNamespace(worlds=2, vary=None, first_world=0, vehicle="astro_max_base"),
                     SimpleNamespace(rotors=[0]), (), given=[{}])
