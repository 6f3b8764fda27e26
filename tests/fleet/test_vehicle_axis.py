"""The vehicle axis: K vehicles in each world, laid out as slots, each with its own random streams and place.

Two worlds of three Astro Maxes, 2.5 m apart, 4 s of the scene's mission on the vehicle's EKF: slot s is vehicle
s % 3 of world s // 3. Without vehicle contact each vehicle has a Newton world of its own, so vehicle 2 of world 1,
flown alone (``--world-of RUN:1:2``: world 1's branch, vehicle 2's branch, vehicle 2's place 5 m east), computes
the same bits as in the fleet.
"""

from __future__ import annotations

import numpy as np
import pytest

from click.testing import CliRunner

from nexus.cli import main
from nexus.core.rng import RngTree
from tests.worlds.flights import bits_differ, fly


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    return fly(tmp_path_factory.mktemp("fleet") / "run", "--vehicles", "3", "--worlds", "2", "--spacing", "2.5",
               "--no-vehicle-contact", "--duration", "4")


def test_every_vehicle_of_every_world_has_its_rows(fleet):
    record = fleet.record
    assert list(record.columns[:3]) == ["time", "world", "vehicle"]
    assert record.groupby(["world", "vehicle"]).size().to_dict() == {(w, k): 1000 for w in (0, 1) for k in range(3)}
    assert fleet.info["worlds"] == 2 and fleet.info["vehicles"] == 3
    assert fleet.info["options"]["vehicles"] == 3 and fleet.info["options"]["spacing"] == 2.5
    assert fleet.info["stage_plan"].endswith(" x16, 2 worlds x 3 vehicles")
    summary = fleet.summary
    assert summary[["world", "vehicle"]].values.tolist() == [[w, k] for w in (0, 1) for k in range(3)]


def test_vehicle_k_starts_k_spacings_east_and_takes_its_origin_there(fleet):
    first = fleet.record[fleet.record.time == fleet.record.time.min()].sort_values(["world", "vehicle"])
    east = first["body/base.pose[0]"].to_numpy()
    assert east == pytest.approx([0.0, 2.5, 5.0, 0.0, 2.5, 5.0], abs=1e-6)
    origins = np.asarray(fleet.info["ned_origins_enu_m"])
    assert origins[:, 0] == pytest.approx([0.0, 2.5, 5.0, 0.0, 2.5, 5.0], abs=1e-6)
    # Each flies the scene's mission from its own origin: at 4 s every one is climbing over its own start.
    last = fleet.record[fleet.record.time == fleet.record.time.max()].sort_values(["world", "vehicle"])
    assert last["body/base.pose[0]"].to_numpy() - origins[:, 0] == pytest.approx([0.0] * 6, abs=0.3)
    assert (last["body/base.pose[2]"].to_numpy() > 2.0).all()


def test_each_vehicle_draws_its_own_noise(fleet):
    # At rest on the ground, the first gyro samples of two vehicles differ by their noise alone: the IMU's white
    # noise is 0.0035 rad/s a sample or so, where the same stream on both would leave them equal to 1e-9.
    record = fleet.record
    first = record[record.time == record.time.min()]
    gyro = first[first.world == 0].sort_values("vehicle")[["imu.gyro[0]", "imu.gyro[1]", "imu.gyro[2]"]].to_numpy()
    assert np.abs(gyro[1] - gyro[0]).max() > 1e-4 and np.abs(gyro[2] - gyro[1]).max() > 1e-4


def test_vehicle_2_of_world_1_flown_alone_computes_the_same_bits(fleet, tmp_path):
    alone = fly(tmp_path / "alone", "--world-of", f"{fleet.out}:1:2")
    assert alone.info["options"]["first_vehicle"] == 2 and alone.info["options"]["first_world"] == 1
    rows = fleet.record[(fleet.record.world == 1) & (fleet.record.vehicle == 2)]
    rows = rows.drop(columns=["world", "vehicle"]).reset_index(drop=True)
    assert bits_differ(rows, alone.record.reset_index(drop=True)) == []


def refused(*args: str) -> str:
    """``nexus run ARGS``'s output, which must end in a refusal (exit status 2)."""
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", *args])
    assert result.exit_code == 2, result.output
    return result.output


def test_a_vehicle_index_the_run_did_not_fly_is_refused(fleet, tmp_path):
    said = refused("--out", str(tmp_path / "no"), "--world-of", f"{fleet.out}:0:3")
    assert "flew 3 vehicles a world (0..2); choose one of them" in said


def test_vehicles_that_would_overlap_at_the_start_are_refused(tmp_path):
    # The Astro Max's colliding shapes (arms, gear) reach 0.445 m from its base: two need more than 0.890 m.
    said = refused("--out", str(tmp_path / "overlap"), "--vehicles", "2", "--spacing", "0.5", "--duration", "1")
    assert ("astro_max_base.usda: --spacing 0.5 m puts the 2 vehicles of a world overlapping at the start: the "
            "vehicle's shapes reach 0.445 m from its base; give a spacing above 0.890 m") in said
    assert "nothing flew" in said


def test_vehicle_0_is_the_world_s_own_tree_and_vehicle_k_a_branch_of_it():
    world = RngTree(7).world(3)
    assert world.vehicle(0) is world
    assert world.vehicle(2).path == "world/3/vehicle/2"
    assert world.vehicle(2).seed32 != world.vehicle(1).seed32 != world.seed32
    with pytest.raises(ValueError, match="a vehicle index is 0 or more"):
        world.vehicle(-1)


def test_offsets_place_each_vehicle_where_they_say(tmp_path):
    flown = fly(tmp_path / "offsets", "--vehicles", "3", "--offset", "0,0", "--offset", "3,0", "--offset", "0,-3",
                "--duration", "0.2")
    origins = np.asarray(flown.info["ned_origins_enu_m"])  # ENU: east, north
    assert origins[:, :2].ravel() == pytest.approx([0.0, 0.0, 0.0, 3.0, -3.0, 0.0], abs=1e-6)
    assert flown.info["options"]["offsets"] == ["0,0", "3,0", "0,-3"]


def test_offsets_too_few_too_close_or_unreadable_are_refused(tmp_path):
    out = str(tmp_path / "no")
    assert ("--offset: 2 offsets for 3 vehicles a world; give one --offset NORTH,EAST per vehicle, vehicle 0's first"
            in refused("--out", out, "--vehicles", "3", "--offset", "0,0", "--offset", "4,0", "--duration", "1"))
    assert ("--offset puts vehicles 0 and 1 0.500 m apart at the start, overlapping: the vehicle's shapes reach "
            "0.445 m from its base; move them more than 0.890 m apart"
            in refused("--out", out, "--vehicles", "2", "--offset", "0,0", "--offset", "0.5,0", "--duration", "1"))
    assert "--offset 0,x: give NORTH,EAST in metres" in refused(
        "--out", out, "--vehicles", "2", "--offset", "0,x", "--offset", "4,0", "--duration", "1")


def test_a_scenario_gives_one_offset_per_vehicle(tmp_path):
    from nexus.scenario.spec import ScenarioError, load

    path = tmp_path / "pair.toml"
    body = 'duration = 2.0\n[fleet]\nvehicles = 2\noffsets = [[0.0, 0.0]{more}]\n[[check]]\nmeasure = "ended"\n'
    path.write_text(body.format(more=", [0.0, 3.0]"))
    assert load(path).run["offsets"] == ["0.0,0.0", "0.0,3.0"]
    path.write_text(body.format(more=""))
    with pytest.raises(ScenarioError, match=r"fleet\.offsets.*1 offsets for 2 vehicles"):
        load(path)


def test_a_fleet_split_over_two_processes_is_the_same_dataset(fleet, tmp_path):
    split = fly(tmp_path / "split", "--vehicles", "3", "--worlds", "2", "--spacing", "2.5", "--no-vehicle-contact",
                "--duration", "4", "--shards", "2")
    assert split.info["worlds"] == 2 and split.info["vehicles"] == 3 and len(split.info["shards"]) == 2
    assert split.info["stage_plan"] == fleet.info["stage_plan"]  # each shard's 1 world x 3, the run's 2 worlds x 3
    order = ["time", "world", "vehicle"]
    one = fleet.record.sort_values(order).reset_index(drop=True)
    two = split.record.sort_values(order).reset_index(drop=True)
    assert bits_differ(one, two) == []


def test_a_fleets_distribution_lines_count_vehicles():
    from nexus.worlds.summary import distribution_lines

    nan = float("nan")
    columns = {"vehicle": np.array([0, 1, 2, 0, 1, 2]), "done_time": np.full(6, nan),
               "max_altitude_error": np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), "max_yaw_error": np.full(6, 2.0),
               "landing_error": np.array([0.5, nan, nan, nan, nan, nan])}
    lines = distribution_lines(columns)
    assert lines[0] == "  done_time            (no vehicle has it)"
    assert lines[1].endswith("max         6  (6 vehicles)") and "median       3.5" in lines[1]
    assert lines[3].endswith("(1 vehicle)")
    one = distribution_lines({**columns, "vehicle": np.zeros(6, int)})
    assert one[1].endswith("(6 worlds)")
