"""Bad scenario files and ``nexus test`` options: one line naming the file and the key, before any run."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.scenario.runner import Case, ScenarioOptions, prepare
from nexus.scenario.spec import ScenarioError, load

GOOD = """
duration = 6.0

[[step]]
do = "takeoff"
height = 1.0

[[step]]
do = "land"

[[check]]
measure = "ended"
"""

#: A PX4 scenario (skipped: no binary) whose link is lost over [1, 2) s.
PX4_LOSS = ('duration = 6.0\n[controller]\nname = "px4"\n[px4]\nbinary = ""\n'
            '[[fault]]\nkind = "link_loss"\nat = 1\nend = 2\n[[check]]\nmeasure = "ended"\n')


def write(folder: Path, text: str, name: str = "s.toml") -> Path:
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, key, fix", [
    ("colour = 'red'\n" + GOOD, "colour", "a scenario holds"),
    (GOOD.replace('do = "land"', 'do = "loop"'), "step[1].do", "choose one of takeoff"),
    (GOOD.replace('do = "land"', 'do = "land"\nheight = 3'), "step[1].height", "step[1] takes do, speed"),
    (GOOD + '[[check]]\nmeasure = "wobble"\nmax = 1\n', "check[1].measure", "unknown check"),
    (GOOD + '[[fault]]\nkind = "engine_fire"\nat = 1\n', "fault[0].kind", "unknown fault"),
    (GOOD + '[[fault]]\nkind = "link_loss"\nat = 1\nend = 2\n', "fault[0].kind", "fly controller.name = \"px4\""),
    (PX4_LOSS.replace('binary = ""', 'binary = ""\nmission = "none"'), "fault[0].kind", 'mission = "nexus"'),
    (PX4_LOSS + '[[step]]\ndo = "takeoff"\nheight = 1.0\n[[step]]\ndo = "turn"\nheading = 90\n', "step[1].do",
     "has no PX4 mission item"),
    (PX4_LOSS + '[[step]]\ndo = "hold"\ntime = 1.0\n', "step[0].do", "put a takeoff step first"),
    (PX4_LOSS.replace('binary = ""', 'binary = ""\nmission = "none"').replace("[[fault]]", "[[f]]").split("[[f]]")[0]
     + '[[step]]\ndo = "takeoff"\nheight = 1.0\n[[check]]\nmeasure = "ended"\n', "step", 'mission = "nexus"'),
    (PX4_LOSS.replace("end = 2", "end = 1"), "fault[0].end", "not after at = 1 s"),
    (PX4_LOSS.replace("end = 2\n", ""), "fault[0].end", "missing"),
    (GOOD + '[[check]]\nmeasure = "contact"\nmax = 1\n', "check[1].max", "takes no bound"),
    (GOOD + '[[check]]\nmeasure = "tilt"\nmax = 10\nwindow = [2.0, 9.0]\n', "check[1].window",
     "is not inside the run [0, 6] s"),
    (GOOD + '[[step]]\ndo = "wait"\n', "step[2]", "never ends"),
    (GOOD + '[[fault]]\nkind = "rotor"\nat = 7\n', "fault[0].at", "not inside the run"),
    (GOOD + '[[fault]]\nkind = "rotor"\nat = 1\nwhen = {step = 1}\n', "fault[0]", "both at and when; give one"),
    (GOOD + '[[fault]]\nkind = "gps_denied"\nat = 1\n[[fault]]\nkind = "sensor"\nsensor = "Gps"\nat = 2\n', "fault[1]",
     "a second fault of sensor 'Gps' (gps_denied faults Gps); fault each sensor once"),
    (GOOD + '[[fault]]\nkind = "rotor"\nat = 1\n[[fault]]\nkind = "rotor"\nrotor = 1\nwhen = {step = 1}\n', "fault[1]",
     "a second rotor fault; a scenario fails one rotor"),
    (GOOD + '[[fault]]\nkind = "rotor"\n', "fault[0].at", "or a condition (when = {altitude_above = 1.0})"),
    (GOOD + '[[fault]]\nkind = "gps_denied"\nwhen = {height_above = 1}\n', "fault[0].when.height_above",
     "unknown condition; choose one of altitude_above, distance_from_start_above, speed_above, step"),
    (GOOD + '[[fault]]\nkind = "rotor"\nwhen = {step = 1, speed_above = 2}\n', "fault[0].when",
     "2 conditions (step, speed_above); give exactly one"),
    (GOOD + '[[fault]]\nkind = "rotor"\nwhen = {}\n', "fault[0].when", "give one condition as a table"),
    (GOOD + '[[fault]]\nkind = "rotor"\nwhen = {altitude_above = -1}\n', "fault[0].when.altitude_above",
     "-1 is out of bounds; give at least 0"),
    (GOOD + '[[fault]]\nkind = "sensor"\nsensor = "Baro"\nwhen = {speed_above = "fast"}\n',
     "fault[0].when.speed_above", "'fast' is not a number"),
    (GOOD + '[[fault]]\nkind = "rotor"\nwhen = {step = 2}\n', "fault[0].when.step",
     "2: give the index of a [[step]] (0 to 1)"),
    (GOOD + '[[fault]]\nkind = "rotor"\nwhen = {step = 1.5}\n', "fault[0].when.step", "a whole number, 0 or more"),
    (GOOD.split("[[step]]")[0] + '[[check]]\nmeasure = "tilt"\nmax = 30\n[[fault]]\nkind = "rotor"\n'
     'when = {step = 0}\n', "fault[0].when.step", "the scenario has no [[step]]s"),
    (PX4_LOSS.replace("at = 1\n", "when = {altitude_above = 1}\n"), "fault[0].when",
     "a link_loss starts at a time only (PX4 flies its own mission, so a condition on the flight is not supported)"),
    (GOOD.replace("duration = 6.0", ""), "duration", "missing"),
    (GOOD + '[[check]]\nmeasure = "reach"\nstep = 5\nmax = 3\n', "check[1].step", "index of a [[step]]"),
    (GOOD + '[controller]\nname = "pid"\ngain_scale = {thrust = 0.1}\n', "controller.gain_scale.thrust",
     "unknown gain"),
    (GOOD + '[[environment.gust]]\nstart = 5\nduration = 2\namplitude = 3\ndirection = 0\n',
     "environment.gust[0].start", "after the run"),
    ('duration = 6.0\n[controller]\nname = "px4"\n[[check]]\nmeasure = "ended"\n', "px4.binary", "missing"),
    (PX4_LOSS + '[[check]]\nmeasure = "px4_failsafe"\nmax = 1\n', "check[1].max", "remove max (or min = N: at least"),
    (PX4_LOSS + '[[check]]\nmeasure = "px4_failsafe"\nmin = 0\n', "check[1].min", "a whole number of failsafe texts"),
    (PX4_LOSS + '[[check]]\nmeasure = "px4_failsafe"\nmin = 1.5\n', "check[1].min", "1 or more"),
    (PX4_LOSS + '[[check]]\nmeasure = "px4_failsafe"\nmin = 1\nmax = 2\n', "check[1].max", "remove max"),
    (PX4_LOSS + '[[step]]\ndo = "takeoff"\nheight = 1.0\n[[step]]\ndo = "hold"\ntime = 1\n[[check]]\n'
     'measure = "reach"\nstep = 1\nmax = 5\n', "check[1].step",
     "1: give the index of a takeoff or goto [[step]] (0); PX4 flies a hold or land itself"),
    ('duration = 6.0\n[controller]\nname = "px4"\n[px4]\nbinary = "no/such/px4"\n[[check]]\nmeasure = "ended"\n',
     "px4.binary", "no such file"),
])
def test_a_bad_scenario_is_one_line_naming_file_key_and_fix(tmp_path, text, key, fix):
    path = write(tmp_path, text)
    with pytest.raises(ScenarioError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: {key}: "), message
    assert fix in message


def test_a_px4_scenario_with_an_empty_binary_is_skipped_with_a_reason(tmp_path):
    path = write(tmp_path, 'duration = 6.0\n[controller]\nname = "px4"\n[px4]\nbinary = ""\n'
                           '[[check]]\nmeasure = "ended"\n')
    scenario = load(path)
    assert scenario.skip == "no PX4 binary: give [px4] binary or nexus test --px4-binary PATH"


def test_a_matrix_above_the_bound_needs_yes(tmp_path):
    seeds = ", ".join(str(s) for s in range(65))  # 65 runs: one more than the bound of 64
    path = write(tmp_path, GOOD + f"[matrix]\nseeds = [{seeds}]\n")
    with pytest.raises(ScenarioError, match="65 scenario runs is more than 64; pass --yes"):
        prepare([path], ScenarioOptions(out=tmp_path / "out"))
    cases, points = prepare([path], ScenarioOptions(out=tmp_path / "out", yes=True))
    assert len(cases) == len(points) == 65


def test_scale_gain_and_seeds_reach_every_point_and_an_unknown_gain_is_refused(tmp_path):
    path = write(tmp_path, GOOD + "[matrix]\nseeds = [0, 1]\n")
    _, points = prepare([path], ScenarioOptions(out=tmp_path, gain_scale={"velocity_p": 0.1}))
    assert [p.config.scenario["gain_scale"] for p in points] == [{"velocity_p": 0.1}] * 2
    assert [p.config.seed for p in points] == [0, 1]
    _, points = prepare([path], ScenarioOptions(out=tmp_path, seeds=[5, 6, 7]))  # --seeds 5,6,7
    assert [p.config.seed for p in points] == [5, 6, 7]
    with pytest.raises(ScenarioError, match="--scale-gain thrust=0.1: unknown gain"):
        prepare([path], ScenarioOptions(out=tmp_path, gain_scale={"thrust": 0.1}))


def test_a_baseline_of_another_scenario_is_refused_before_any_run(tmp_path):
    path = write(tmp_path, 'name = "hover"\n' + GOOD)
    baselines = tmp_path / "baselines"
    baselines.mkdir()
    (baselines / "hover.json").write_text(json.dumps({"scenario": "square", "points": {"seed=0": {}}}))
    with pytest.raises(ScenarioError) as caught:
        prepare([path], ScenarioOptions(out=tmp_path, baseline=baselines))
    assert str(caught.value).startswith(f"{baselines / 'hover.json'}: a baseline of another scenario ('square'), "
                                        "not of 'hover'")


def test_nexus_test_exits_2_with_one_line_and_flies_nothing(tmp_path):
    path = write(tmp_path, "colour = 'red'\n" + GOOD)
    result = CliRunner().invoke(main, ["test", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"error: {path}: colour: unknown key; a scenario holds name, description, duration, tick_hz, vehicle, scene, "
        "seed, estimator, controller, start, environment, fault, step, check, matrix, baseline, px4, fleet "
        "(docs/testing.md)"]
    assert not (tmp_path / "out").exists()


def test_a_case_names_its_matrix_point():
    case = Case(scenario=type("S", (), {"path": Path("a.toml"), "name": "a"})(),
                values={"seed": 1, "vehicle": "/x/hexa_f550.usda"})
    assert case.label == "a.toml::a[seed=1,vehicle=hexa_f550]"


def test_a_battery_check_needs_a_vehicle_with_a_battery(tmp_path):
    with_battery = Path(__file__).resolve().parents[1] / "data" / "astro_max_battery.usda"
    check = '[[check]]\nmeasure = "battery"\nmin = 0.5\n'
    path = write(tmp_path, GOOD + check)
    with pytest.raises(ScenarioError, match=r"check\[1\]\.measure: battery: the vehicle 'astro_max_base' has no "
                                            "battery"):
        load(path)
    assert load(write(tmp_path, f'vehicle = "{with_battery}"\n' + GOOD + check)).checks[1].side == "min"
