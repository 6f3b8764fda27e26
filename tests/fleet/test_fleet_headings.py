"""A start heading per vehicle: ``--offset NORTH,EAST,YAW`` (a scenario's ``[fleet] offsets`` [n, e, yaw]).

One flight shared by the tests here: three Astro Maxes, vehicle 0 at the file's place and heading, vehicle 1
3 m east turned 90 degrees (clockwise seen from above: its nose from the file's east to south), vehicle 2 3 m
north turned -45 degrees, flown 3 s of the scene's mission without contact, so vehicle 1 flown alone
(``--world-of RUN:0:1``) computes the same bits.

The heading turned from the file's is read off the recorded base quaternion (ENU, (x, y, z, w)) by hand:
the ENU yaw is atan2(2 (w z + x y), 1 - 2 (y^2 + z^2)), counter-clockwise; a compass heading is clockwise,
so a vehicle turned YAW degrees has an ENU yaw of -YAW (the Astro Max's file heading is ENU yaw 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.worlds.flights import bits_differ, fly

POSE = [f"body/base.pose[{i}]" for i in range(7)]


@pytest.fixture(scope="module")
def turned(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("headings") / "turned", "--vehicles", "3", "--offset", "0,0",
               "--offset", "0,3,90", "--offset", "3,0,-45", "--no-vehicle-contact", "--duration", "3")


def compass_turn(rows) -> np.ndarray:
    """Each row's heading turned from the file's [deg, clockwise seen from above], from its base quaternion."""
    x, y, z, w = (rows[POSE[i]].to_numpy(np.float64) for i in range(3, 7))
    return -np.degrees(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


def first_and_last(flown):
    record = flown.record
    return (record[record.time == record.time.min()].sort_values("vehicle"),
            record[record.time == record.time.max()].sort_values("vehicle"))


def test_each_vehicle_starts_at_its_own_heading_and_place(turned):
    first, _ = first_and_last(turned)
    assert compass_turn(first) == pytest.approx([0.0, 90.0, -45.0], abs=0.5)
    # Turned about the vertical through its base: the base stays where the offset puts it (ENU: east, north) and
    # level, so the quaternion is a pure turn about z: x = y = 0, z = sin(+45 deg) for vehicle 1 (ENU yaw -90).
    assert first[POSE[0]].to_numpy() == pytest.approx([0.0, 3.0, 0.0], abs=1e-6)
    assert first[POSE[1]].to_numpy() == pytest.approx([0.0, 0.0, 3.0], abs=1e-6)
    assert first[POSE[5]].to_numpy() == pytest.approx([0.0, -0.707107, 0.382683], abs=1e-5)
    assert turned.info["options"]["offsets"] == ["0,0", "0,3,90", "3,0,-45"]


def test_each_vehicle_flies_the_mission_at_its_own_heading(turned):
    # At 3 s every vehicle is climbing over its own start, its heading held within 3 degrees of where it began
    # (the mission holds the heading each settled at; the unturned vehicle 0 itself drifts 2.3 degrees, on its
    # EKF's heading).
    _, last = first_and_last(turned)
    assert compass_turn(last) == pytest.approx([0.0, 90.0, -45.0], abs=3.0)
    assert (last[POSE[2]].to_numpy() > 1.0).all()
    origins = np.asarray(turned.info["ned_origins_enu_m"])
    assert last[POSE[0]].to_numpy() - origins[:, 0] == pytest.approx([0.0] * 3, abs=0.3)
    assert last[POSE[1]].to_numpy() - origins[:, 1] == pytest.approx([0.0] * 3, abs=0.3)


def test_a_turned_vehicle_flown_alone_computes_the_same_bits(turned, tmp_path):
    alone = fly(tmp_path / "alone", "--world-of", f"{turned.out}:0:1")
    rows = turned.record[turned.record.vehicle == 1].drop(columns=["world", "vehicle"]).reset_index(drop=True)
    assert bits_differ(rows, alone.record.reset_index(drop=True)) == []


def refused(*args: str) -> str:
    """``nexus run ARGS``'s output, which must be a one-line refusal (exit status 2)."""
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", *args])
    assert result.exit_code == 2, result.output
    return result.output


def test_a_bad_start_heading_is_refused_in_one_line_naming_the_option(tmp_path):
    out = str(tmp_path / "no")
    assert ("--offset 0,3,400: the start heading 400 is not a heading; give YAW in degrees, clockwise seen from "
            "above, from -360 to 360") in refused("--out", out, "--vehicles", "2", "--offset", "0,0", "--offset",
                                                  "0,3,400", "--duration", "1")
    assert ("--offset 0,3,east: give NORTH,EAST in metres from the vehicle file's place, and optionally ,YAW the "
            "start heading in degrees") in refused("--out", out, "--vehicles", "2", "--offset", "0,0", "--offset",
                                                   "0,3,east", "--duration", "1")
    assert "--offset 0,3,nan: the start heading nan is not a heading" in refused(
        "--out", out, "--vehicles", "2", "--offset", "0,0", "--offset", "0,3,nan", "--duration", "1")


def test_turned_vehicles_that_would_overlap_are_still_refused(tmp_path):
    # A vehicle's shapes reach 0.445 m from its base whichever way it faces: two need more than 0.890 m.
    assert ("--offset puts vehicles 0 and 1 0.500 m apart at the start, overlapping: the vehicle's shapes reach "
            "0.445 m from its base; move them more than 0.890 m apart"
            in refused("--out", str(tmp_path / "no"), "--vehicles", "2", "--offset", "0,0,45", "--offset",
                       "0.5,0,90", "--duration", "1"))


def test_a_scenario_gives_a_start_heading_per_vehicle(tmp_path):
    from nexus.scenario.spec import ScenarioError, load

    path = tmp_path / "pair.toml"
    body = 'duration = 2.0\n[fleet]\nvehicles = 2\noffsets = [[0.0, 0.0], {second}]\n[[check]]\nmeasure = "ended"\n'
    path.write_text(body.format(second="[0.0, 3.0, 90]"))
    assert load(path).run["offsets"] == ["0.0,0.0", "0.0,3.0,90.0"]
    path.write_text(body.format(second="[0.0, 3.0, 500]"))
    with pytest.raises(ScenarioError, match=r"pair\.toml: fleet\.offsets\[1\]: the start heading 500 is not a "
                                            r"heading; give it in degrees, clockwise seen from above, "
                                            r"from -360 to 360"):
        load(path)
    path.write_text(body.format(second="[0.0, 3.0, 90, 1]"))
    with pytest.raises(ScenarioError, match=r"fleet\.offsets"):
        load(path)
