"""``nexus train --task swap``: a tiny run of the shared policy end to end (the flattened batch, the curve, the ONNX
whose metadata declares the neighbours), ``nexus run --controller policy --vehicles 4`` flying that ONNX, the
straight-line baseline failing the crossing, and bad input refused in one line. The long training is a figure in
docs/fleets.md, not a test."""

from __future__ import annotations

import csv

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from nexus.cli import main

#: Own features (12), then three neighbours of six: the layout of four vehicles a world.
FOUR_VEHICLE_LAYOUT = ("position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1,"
                       + ",".join(["neighbour_position_heading:3,neighbour_velocity_heading:3"] * 3))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One world of four vehicles is four learner environments; 32-step rollouts make 128 steps an update: two."""
    out = tmp_path_factory.mktemp("swap")
    result = CliRunner().invoke(main, ["train", "--task", "swap", "--worlds", "1", "--steps", "256", "--seed", "3",
                                       "--no-vehicle-contact", "--no-evaluate", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, result.output


def test_the_shared_policy_learns_on_every_vehicle_of_every_world(trained):
    out, output = trained
    rows = list(csv.DictReader(open(out / "curve.csv")))
    assert [int(r["steps"]) for r in rows] == [128, 256]  # 4 vehicles x 32 steps an update
    assert output.splitlines()[-1].startswith("trained: 256 steps in ")


@pytest.mark.parametrize("cap", [1e-2, 4.5e-4])
def test_the_curve_shows_the_learning_rate_and_the_exploration_capped(cap, tmp_path):
    """The policy starts at log std -1.6 (std 0.2019); capped at -1.7 its actions' std is e^-1.7 = 0.1827 on every
    row, whatever the updates do to the parameter. The learning rate starts at 3e-4 and skrl's KL-adaptive rule
    moves it by a factor of 1.5 after each of an update's 5 epochs (up when the epoch's KL is under half of 0.01,
    down when over twice, else not): from row to row by 1.5^k, |k| at most 5, never above the cap (this run's
    rate rises to 6.75e-4 = 3e-4 x 1.5² on its third update uncapped, 4.5e-4 = 3e-4 x 1.5 capped)."""
    result = CliRunner().invoke(main, ["train", "--task", "swap", "--worlds", "1", "--steps", "512", "--seed", "3",
                                       "--no-vehicle-contact", "--no-evaluate", "--max-log-std", "-1.7",
                                       "--max-learning-rate", str(cap), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(tmp_path / "curve.csv")))
    assert [float(r["action_std"]) for r in rows] == [0.1827] * 4
    rates = [float(r["learning_rate"]) for r in rows]
    for earlier, later in zip([3e-4, *rates], rates):
        k = np.log(later / earlier) / np.log(1.5)
        assert abs(k - round(k)) < 2e-3 and abs(round(k)) <= 5, (earlier, later)
    assert max(rates) == pytest.approx(6.75e-4 if cap == 1e-2 else 4.5e-4, rel=1e-3)


def test_the_onnx_declares_the_neighbours_and_the_vehicles(trained):
    out, _ = trained
    session = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    assert meta["nexus:observation"] == FOUR_VEHICLE_LAYOUT
    assert meta["nexus:vehicles"] == "4" and meta["nexus:task"] == "swap" and meta["nexus:action"] == "ctbr:4"
    assert meta["nexus:reward"] == ("w_progress=10,w_goal=1,w_proximity=3,safe_distance=1.6,w_rates=0.02,w_action=0.01,"
                                    "crash_penalty=30,collision_distance=1")
    assert session.get_inputs()[0].shape[-1] == 30  # 12 + 3 x 6
    (actions,) = session.run(None, {"observation": np.zeros((4, 30), np.float32)})
    assert actions.shape == (4, 4)


def test_nexus_run_flies_the_swap_policy_on_every_vehicle(trained, tmp_path):
    """1 s at 250 Hz, the policy at 50 Hz: 50 inferences, each of the four vehicles' rows in one call."""
    from tests.worlds.flights import fly

    out, _ = trained
    flown = fly(tmp_path / "run", "--controller", "policy", "--policy", str(out / "policy.onnx"), "--vehicles", "4",
                "--duration", "1")
    assert flown.info["controller_stats"]["inferences"] == 50
    assert sorted(flown.record["vehicle"].unique().tolist()) == [0, 1, 2, 3]
    assert flown.info["exit_reason"] == "duration"


def test_nexus_run_refuses_the_swap_policy_for_another_fleet_size(trained, tmp_path):
    out, _ = trained
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "run"),
                                       "--controller", "policy", "--policy", str(out / "policy.onnx"),
                                       "--vehicles", "3", "--duration", "1"])
    assert result.exit_code == 2, result.output
    assert ("its nexus:observation has 3 neighbours, so it flies 4 vehicles a world; this run has 3: give "
            "--vehicles 4") in result.output


def test_the_straight_line_baseline_meets_head_on():
    """Vehicles 1 and 2 start 2 m apart and fly straight at each other's start: their bases come within the 1.0 m
    that is a collision, so no episode of the baseline succeeds."""
    from nexus.gym.swarm_evaluate import evaluate_swap

    score = evaluate_swap(None, worlds=2, episodes=1, vehicle_contact=False)
    assert score["episodes"] == 2 and score["success"] == 0 and score["ended_early"] == 2


def test_the_straight_line_baseline_alone_ends_within_the_bar():
    """With no collision distance (and no contact) the vehicles fly through each other: the baseline then brings
    every vehicle within 0.2 m of its goal by 7.98 s (6 m at most 1.5 m/s takes 4 s and the rest to settle), so it
    fails the swap for the crossing alone."""
    from dataclasses import replace

    from nexus.gym.swarm_evaluate import evaluate_swap
    from nexus.gym.swarm_tasks import SWARM_TASKS

    score = evaluate_swap(None, worlds=2, episodes=1, vehicle_contact=False,
                          task=replace(SWARM_TASKS["swap"], collision_distance=0.0))
    assert score["success"] == 2 and score["ended_early"] == 0
    assert score["median_final_error_m"] < 0.05


@pytest.mark.parametrize("args, words", [
    (["--task", "swap", "--vehicles", "1"], "--vehicles 1: the swap task flies 2 to 64 vehicles a world"),
    (["--task", "swap", "--spacing", "0"], "--spacing 0: give the distance between neighbouring vehicles in metres"),
    (["--task", "swap", "--vary", "v.toml"], "--vary v.toml: the swap task draws no variation file yet"),
    (["--task", "swap", "--shards", "2"], "--shards 2: the swap task steps in one process"),
    (["--vehicles", "4"], "--vehicles with --task hover: a hover world flies one vehicle"),
    (["--task", "swap", "--evaluate-only", "none.onnx"], "--evaluate-only none.onnx: no such file"),
    (["--task", "swarm"], "--task swarm: unknown task; choose one of hover, waypoint, track, swap"),
    (["--task", "swap", "--goal-gain", "1"], "--goal-gain 1: the go-to-goal law is a velocity the policy corrects; "
                                             "give --action velocity too"),
    (["--task", "swap", "--action", "velocity", "--goal-gain", "-1"], "--goal-gain -1: give the go-to-goal law's "
                                                                      "gain in 1/s, 0 or more"),
    (["--action", "velocity", "--goal-gain", "1"], "--goal-gain 1: the go-to-goal law is for the multi-agent tasks"),
    (["--action", "velocity", "--goal-fade", "1"], "--goal-fade 1: the go-to-goal law is for the multi-agent tasks"),
    (["--task", "swap", "--action", "velocity", "--goal-fade", "1"], "--goal-fade 1: it fades the correction to a "
                                                                     "go-to-goal law; give --goal-gain too"),
    (["--task", "swap", "--action", "velocity", "--goal-gain", "1", "--goal-fade", "-2"],
     "--goal-fade -2: give the radius in metres within which the correction fades at the goal"),
    (["--task", "swap", "--action", "velocity", "--goal-gain", "1", "--goal-fade", "1", "--goal-fade-power", "0.5"],
     "--goal-fade-power 0.5: give the fade's power, from 1 to 4"),
    (["--task", "swap", "--action", "velocity", "--goal-gain", "1", "--goal-fade-power", "2"],
     "--goal-fade-power 2: it shapes the correction's fade; give --goal-fade too"),
    (["--goal-fade-power", "2"], "--goal-fade-power 2: the go-to-goal law is for the multi-agent tasks"),
    (["--score-every", "1e6"], "--score-every 1000000: scoring by the bar during training is for the multi-agent "
                               "tasks"),
    (["--task", "swap", "--score-every", "-1"], "--score-every -1: give the environment steps between scores"),
    (["--task", "swap", "--score-every", "1.5"], "--score-every 1.5: give a whole number of environment steps"),
    (["--task", "swap", "--score-every", "1e6", "--score-episodes", "0"],
     "--score-episodes 0: give the episodes of each score by the bar, a whole number from 1 to 1024"),
    (["--task", "swap", "--score-episodes", "8"], "--score-episodes 8 without --score-every: nothing is scored"),
    (["--task", "swap", "--episode-s", "0.5"], "--episode-s 0.5: give the episode's length in seconds, from 1 to 60"),
    (["--episode-s", "12"], "--episode-s 12: it sets a multi-agent task's episode (swap)"),
    (["--max-learning-rate", "1e-4"], "--max-learning-rate 0.0001: give the largest learning rate, at least the "
                                      "starting 0.0003 and at most 0.01"),
    (["--max-log-std", "3"], "--max-log-std 3: give the largest log standard deviation of the policy's actions, "
                             "above -5 and at most 2"),
])
def test_bad_input_exits_2_with_one_line(args, words, tmp_path):
    """Refused before anything is built (no OUT folder)."""
    result = CliRunner().invoke(main, ["train", "--out", str(tmp_path / "t"), *args])
    assert result.exit_code == 2, result.output
    assert words in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_a_scenario_names_the_policy_from_its_folder(trained, tmp_path):
    """``[controller] policy`` is ``--policy``, its path taken from the scenario's folder; a missing file and a
    policy for another controller are refused in one line naming the key."""
    import shutil

    from nexus.scenario.spec import ScenarioError, load

    out, _ = trained
    shutil.copy(out / "policy.onnx", tmp_path / "swap.onnx")
    text = ('name = "s"\nduration = 1.0\n[controller]\nname = "{name}"\npolicy = "{policy}"\n'
            '[[check]]\nmeasure = "ended"\n')
    (tmp_path / "s.toml").write_text(text.format(name="policy", policy="swap.onnx"))
    assert load(tmp_path / "s.toml").run["controller_options"]["model"] == str((tmp_path / "swap.onnx").resolve())
    (tmp_path / "s.toml").write_text(text.format(name="policy", policy="gone.onnx"))
    with pytest.raises(ScenarioError, match="controller.policy: 'gone.onnx': no such file"):
        load(tmp_path / "s.toml")
    (tmp_path / "s.toml").write_text(text.format(name="pid", policy="swap.onnx"))
    with pytest.raises(ScenarioError, match='controller.policy: names a policy model; set controller.name = "policy"'):
        load(tmp_path / "s.toml")
