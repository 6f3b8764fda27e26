"""One table of parameter names per vehicle (``nexus params``), and one sentence for a name it lacks.

The expected rows are read off ``vehicles/astro_max_base.usda`` (prim paths, attributes) and the specs'
units and bounds by hand; the sentences are written out whole.
"""

import json
import re

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.runtime.params import parameters, variation_names
from nexus.sweep.runner import SweepOptions, prepare
from nexus.sweep.spec import SweepError, parse
from nexus.worlds.variation import load_variation

SENSORS = ["Imu", "Mag", "Baro", "Gps"]
POINTER = "`nexus params --vehicle astro_max_base` lists every name and what reads it"


def listed(*args) -> dict[str, dict]:
    result = CliRunner().invoke(main, ["params", *args, "--json"])
    assert result.exit_code == 0, result.output
    return {row["name"]: row for row in map(json.loads, result.output.splitlines())}


@pytest.fixture(scope="module")
def rows():
    return listed("--vehicle", "astro_max_base")


# name -> (aliases, kind, unit, bounds, read by, sets), from the vehicle file and the specs.
EXPECTED = {
    "/vehicle/body/base/Drag nexus:rotorDragCoefficient": (
        ["drag.rotor"], "attribute", "N/((m/s)(rad/s))", ">= 0", ["sweep", "gradient"],
        ["/vehicle/body/base/Drag nexus:rotorDragCoefficient"]),
    "/vehicle/body/base/Drag nexus:bodyDragCoefficient[0]": (
        ["drag.cd.x"], "element", "-", ">= 0", ["gradient"], ["/vehicle/body/base/Drag nexus:bodyDragCoefficient[0]"]),
    "/vehicle/body/base physics:mass": (["mass"], "attribute", "kg", "> 0", ["sweep", "variation", "gradient"],
                                        ["/vehicle/body/base physics:mass"]),
    "/vehicle/controller nexus:positionP[2]": (["pid.position_p.z", "pid.position_p.yaw", "pid.kp_z"], "element",
                                               "1/s", ">= 0", ["gradient"],
                                               ["/vehicle/controller nexus:positionP[2]"]),
    "/vehicle/controller nexus:rateP[2]": (["pid.rate_p.z", "pid.rate_p.yaw", "pid.kd_yaw"], "element", "s/rad",
                                           ">= 0", ["gradient"], ["/vehicle/controller nexus:rateP[2]"]),
    "/vehicle/controller nexus:positionP": ([], "attribute", "1/s", ">= 0", ["sweep"],
                                            ["/vehicle/controller nexus:positionP"]),
    "/vehicle/controller nexus:hoverThrust": ([], "attribute", "-", "in (0, 1]", ["sweep"],
                                              ["/vehicle/controller nexus:hoverThrust"]),
    "/vehicle/propeller_1 nexus:thrustCoefficient": (["rotor1.kt"], "attribute", "N/(rad/s)^2", "> 0",
                                                     ["sweep", "gradient"],
                                                     ["/vehicle/propeller_1 nexus:thrustCoefficient"]),
    "/vehicle/propeller_4 nexus:thrustCoefficient": (["rotor4.kt"], "attribute", "N/(rad/s)^2", "> 0",
                                                     ["sweep", "gradient"],
                                                     ["/vehicle/propeller_4 nexus:thrustCoefficient"]),
    "/vehicle/body/base physics:diagonalInertia[0]": (["inertia.xx"], "element", "kg m^2", ">= 0", ["gradient"],
                                                      ["/vehicle/body/base physics:diagonalInertia[0]"]),
    "/vehicle/body/base/Imu nexus:gyroNoiseSigma": ([], "attribute", "rad/s", ">= 0", ["sweep"],
                                                    ["/vehicle/body/base/Imu nexus:gyroNoiseSigma"]),
    "esc.tau_up": ([], "shared", "s", "> 0", ["gradient"],
                   [f"/vehicle/esc_{i} nexus:motor:timeConstantUp" for i in (1, 2, 3, 4)]),
    "init.vz": ([], "state", "m/s", "finite", ["gradient"], []),
    "thrust_scale": ([], "draw", "-", "> 0", ["variation"], []),
    "start_yaw": ([], "draw", "deg", "|value| <= 360", ["variation"], []),
    "base_force_x": ([], "draw", "N", "|value| <= 100", ["variation"], []),
    "noise_scale": ([], "draw", "-", ">= 0", ["variation"], []),
    "rotor_fail_index": ([], "draw", "-", "an integer in 0..rotors-1", ["variation"], []),
    "seed": ([], "run", "-", "int, >= 0", ["sweep"], []),
}


# name -> the part its drawn value goes to (nexus/vocab/drawn.py): the owner each module declares beside itself.
OWNERS = {
    "/vehicle/body/base physics:mass": "nexus.plant.placement.vary_mass",
    "com_x": "nexus.plant.placement.vary_mass",
    "start_yaw": "nexus.plant.placement.place_worlds",
    "thrust_scale": "nexus.plant.propeller.Propeller",
    "rotor_fail_index": "nexus.plant.propeller.Propeller",
    "esc_lag_scale": "nexus.plant.esc.Esc",
    "noise_scale": "nexus.sensors.sensor.Sensor",
    "gyro_bias_z": "nexus.sensors.imu.Imu",
    "base_force_x": "nexus.plant.base_force.BaseForce",
    "sensor_fault_mode": "nexus.sensors.faults.SensorFaults",
    "gust_amplitude": "nexus.air.gust.Gust",
    "battery_capacity": "nexus.plant.battery.Battery",
    "ground_effect_scale": "nexus.plant.ground_effect.GroundEffect",
    "/vehicle/propeller_1 nexus:thrustCoefficient": None,  # no variation draws it
    "seed": None,
}


@pytest.mark.parametrize("name", list(OWNERS))
def test_each_drawn_name_says_which_part_takes_it(rows, name):
    assert rows[name]["owner"] == OWNERS[name]


@pytest.mark.parametrize("name", list(EXPECTED))
def test_the_default_vehicle_lists_each_name_with_unit_bounds_and_readers(rows, name):
    aliases, kind, unit, bounds, readers, sets = EXPECTED[name]
    row = rows[name]
    assert (row["aliases"], row["kind"], row["unit"], row["bounds"], row["read_by"], row["sets"]) == (
        aliases, kind, unit, bounds, readers, sets)


def test_the_table_has_every_prim_parameter_and_no_name_twice(rows):
    # 4 ESCs x 11 parameters, 4 propellers x 4 and their discs' 4 (NexusRotorInflowAPI) each, the controller's 12, the EKF's 40 (the shipped estimator: its
    # EKF2_* tuning, fusions, limits and timeouts, the no-aid fake position's timeout and noise, the GPS drift's
    # two random walks, and a plane's airspeed and sideslip: EKF2_ARSP_THR, EAS_NOISE, TAS_GATE, WIND_NSD,
    # fuseSideslip, BETA_NOISE, BETA_GATE), the four sensors' own (IMU 9, magnetometer 4, barometer 6 with
    # its dynamic-pressure coefficient and drift, GPS 10) and the drag's 4: 44 + 32 + 12 + 40 + 29 + 4 = 161 prim
    # attributes. (With the truth estimator, whose one attribute is its rate, and no discs, it was 106.)
    prim_attributes = [r for r in rows.values() if r["kind"] == "attribute" and " nexus:" in r["name"]]
    assert len(prim_attributes) == 161
    names = [n for r in rows.values() for n in (r["name"], *r["aliases"])]
    assert len(names) == len(set(names))
    # 8 PID gains x 3 axes, 3 inertia components and 3 body drag coefficients are elements; 6 start-state names;
    # 2 shared ESC lags.
    assert sum(r["kind"] == "element" for r in rows.values()) == 30
    assert sum(r["kind"] == "state" for r in rows.values()) == 6
    assert sum(r["kind"] == "shared" for r in rows.values()) == 2


def test_the_table_lines_up_its_columns():
    result = CliRunner().invoke(main, ["params", "--reader", "variation"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["name", "aliases", "unit", "bounds", "read by"]
    mass = next(line for line in lines if line.startswith("/vehicle/body/base physics:mass "))
    assert re.split(r"\s{2,}", mass) == ["/vehicle/body/base physics:mass", "mass", "kg", "> 0",
                                          "sweep, variation, gradient; drawn into nexus.plant.placement.vary_mass"]
    # The variation reader's names: mass plus the 47 draws of the variation table (com 3, four scales, accel and
    # gyro bias 3 each, the IMU's bias-walk scale, start 3, wind force 3, the air 3, a gust 5, the pack 3, ground
    # effect 1, rotor failure 4, sensor fault 4, the IMU bias-step fault 7: its time, gyro 3 and accel 3), under
    # the heading.
    assert len(lines) == 1 + 1 + 47


SENTENCE = f"parameter 'mas' is unknown; did you mean 'mass'? {POINTER}"


def test_one_misspelling_gives_one_sentence_in_a_variation_file_a_sweep_and_optimize(tmp_path):
    vary = tmp_path / "vary.toml"
    vary.write_text("mas = 5.0\n")
    with pytest.raises(BuildError) as raised:
        load_variation(vary, rotors=4, sensors=SENSORS, names=variation_names())
    assert str(raised.value) == f"{vary}:1: {SENTENCE}"

    sweep = tmp_path / "sweep.toml"
    sweep.write_text("[grid]\nmas = [5.0, 5.5]\n")
    with pytest.raises(SweepError) as raised:
        parse(sweep)
    assert str(raised.value) == f"{sweep}: [grid]: {SENTENCE}"

    result = CliRunner().invoke(main, ["optimize", "--params", "mas", "--steps", "1", "--out", str(tmp_path / "x")])
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == f"Error: --params mas: {SENTENCE}"
    assert not (tmp_path / "x").exists()


def test_a_name_the_place_does_not_read_says_who_reads_it(tmp_path):
    vary = tmp_path / "vary.toml"
    vary.write_text('mass = 5.0\n"pid.kp_z" = 1.0\n')  # quoted: TOML reads pid.kp_z as a table pid
    with pytest.raises(BuildError) as raised:
        load_variation(vary, rotors=4, sensors=SENSORS, names=variation_names())
    assert str(raised.value) == (f"{vary}:2: 'pid.kp_z' ('/vehicle/controller nexus:positionP[2]') is not read by a "
                                 f"variation file; it is read by gradient: {POINTER}")
    sweep = tmp_path / "sweep.toml"
    sweep.write_text("[grid]\nthrust_scale = [1.0, 1.1]\n")
    with pytest.raises(SweepError) as raised:
        parse(sweep)
    assert str(raised.value) == (f"{sweep}: [grid]: 'thrust_scale' is not read by a sweep axis; it is read by "
                                 f"variation: {POINTER}")


def test_a_variation_file_may_name_the_mass_by_its_attribute(tmp_path):
    vary = tmp_path / "vary.toml"
    vary.write_text('"/vehicle/body/base physics:mass" = 5.5\n')
    variation = load_variation(vary, rotors=4, sensors=SENSORS, names=variation_names())
    assert variation.names == ("mass",)
    vary.write_text('mass = 5.0\n"/vehicle/body/base physics:mass" = 5.5\n')
    with pytest.raises(BuildError, match=r"vary.toml:2: parameter 'mass' is given twice"):
        load_variation(vary, rotors=4, sensors=SENSORS, names=variation_names())


def test_a_sweep_axis_may_name_an_attribute_by_its_alias(tmp_path):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text("[grid]\nmass = [5.0, 5.5]\n\"rotor1.kt\" = [0.0002, 0.00025]\n")
    spec = parse(sweep)
    assert [(a.key, a.prim, a.attribute) for a in spec.axes] == [
        ("/vehicle/body/base physics:mass", "/vehicle/body/base", "physics:mass"),
        ("/vehicle/propeller_1 nexus:thrustCoefficient", "/vehicle/propeller_1", "nexus:thrustCoefficient")]
    _, points = prepare(sweep, SweepOptions(out=tmp_path / "out"))
    assert sorted(tuple(p.attributes.values()) for p in points) == [
        (5.0, 0.0002), (5.0, 0.00025), (5.5, 0.0002), (5.5, 0.00025)]


@pytest.mark.parametrize(("text", "message"), [
    ("[grid]\nmass = [5.0]\n\"/vehicle/body/base physics:mass\" = [5.5]\n",
     "'/vehicle/body/base physics:mass' is varied twice (under two of its names); keep one axis"),
    ("[run]\nmass = 5.0\n[grid]\nseed = [0]\n",
     "[run]: 'mass' names the attribute '/vehicle/body/base physics:mass'; [run] holds RunConfig fields: vary it "
     "in [grid] or [random] (a one-value list in [grid] sets it for every point)"),
    ("[run]\n\"/vehicle/controller nexus:hoverThrust\" = 0.56\n[grid]\nseed = [0]\n",
     "[run]: '/vehicle/controller nexus:hoverThrust' is an attribute; [run] holds RunConfig fields: vary it in [grid] "
     "or [random] (a one-value list in [grid] sets it for every point)"),
    ("[grid]\nvehicle = [\"astro_max_base\", \"astro_max_vision\"]\nmass = [5.0]\n",
     "[grid]: 'mass' is the short name of '/vehicle/body/base physics:mass', but the sweep varies the vehicle; "
     "write the attribute itself, \"<prim path> <attribute name>\""),
])
def test_a_sweep_refuses_an_alias_it_cannot_place(tmp_path, text, message):
    sweep = tmp_path / "sweep.toml"
    sweep.write_text(text)
    with pytest.raises(SweepError) as raised:
        parse(sweep)
    assert str(raised.value) == f"{sweep}: {message}"


def test_every_alias_resolves_to_the_attribute_it_sets():
    table = parameters("astro_max_base")
    assert table.resolve("pid.kd_z").name == "/vehicle/controller nexus:velocityP[2]"
    assert table.resolve("pid.velocity_d.pitch").name == "/vehicle/controller nexus:velocityD[1]"
    assert table.resolve("pid.kp_yaw").name == "/vehicle/controller nexus:attitudeP[2]"
    assert table.resolve("inertia.zz").name == "/vehicle/body/base physics:diagonalInertia[2]"
    assert table.resolve("rotor3.kt").name == "/vehicle/propeller_3 nexus:thrustCoefficient"
    assert table.resolve("esc.tau_down").targets == tuple(
        f"/vehicle/esc_{i} nexus:motor:timeConstantDown" for i in (1, 2, 3, 4))
