"""``nexus train``: a tiny run shows the loop, the checkpoint, the curve and the ONNX export work, the exported
ONNX gives the torch policy's actions (normalisation included), a stop keeps what was written, and bad input
is refused before anything is built. The long training is a figure in docs/learning.md, not a test."""

from __future__ import annotations

import csv
import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from click.testing import CliRunner

from nexus.cli import main
from nexus.gym.training import TrainConfig, train

#: 4 worlds x 16 steps a rollout x 2 rollouts: two PPO updates.
TINY = dict(task="hover", worlds=4, steps=128, rollouts=16, mini_batches=2, epochs=2, checkpoint_every=1)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("train")
    lines: list[str] = []
    result = train(TrainConfig(**TINY), out, say=lines.append)
    return out, result, lines


def test_the_curve_has_a_row_per_update_and_progress_is_shown(trained):
    out, result, lines = trained
    rows = list(csv.DictReader(open(out / "curve.csv")))
    assert [int(r["steps"]) for r in rows] == [64, 128]
    assert set(rows[0]) == {"steps", "wall_s", "steps_per_s", "episodes", "mean_return", "mean_length",
                            "learning_rate", "action_std"}
    # The policy starts at log std -1.6 (std 0.2019) and the rate at 3e-4; two updates move both a little.
    assert all(0.15 < float(r["action_std"]) < 0.25 and 1e-6 <= float(r["learning_rate"]) <= 1e-2 for r in rows)
    assert len(lines) == 2 and "steps/s" in lines[0] and "mean return" in lines[0] and "episode length" in lines[0]
    assert (out / "curve.png").stat().st_size > 0
    assert (out / "checkpoint.pt").is_file() and result.last["steps"] == 128


def test_the_best_checkpoint_s_policy_is_kept_beside_the_last(trained):
    out, _, _ = trained
    rows = list(csv.DictReader(open(out / "curve.csv")))
    returns = [float(r["mean_return"]) for r in rows]  # a checkpoint every update (checkpoint_every=1)
    first_best = returns.index(max(returns))  # a later equal return does not replace it
    kept = json.loads((out / "best.json").read_text())
    assert kept == {"steps": int(rows[first_best]["steps"]), "mean_return": returns[first_best]}
    assert (out / "policy_best.onnx").stat().st_size > 0
    assert not (out / "best.json.tmp").exists()


def test_a_policy_is_kept_only_when_its_return_beats_every_earlier_one(tmp_path):
    from nexus.gym.training import BestPolicy

    (tmp_path / "best.json").write_text('{"steps": 1, "mean_return": 99.0}')  # an earlier run's, in the same folder
    exported: list[str] = []
    best = BestPolicy(tmp_path, resumed=False)  # a fresh run forgets it
    for steps, mean_return in ((64, 2.0), (128, 5.0), (192, 5.0), (256, 3.0), (320, 6.5)):
        best.offer({"steps": steps, "mean_return": mean_return}, lambda path: exported.append(path.name))
    assert exported == ["policy_best.onnx"] * 3 and best.kept == {"steps": 320, "mean_return": 6.5}
    resumed = BestPolicy(tmp_path, resumed=True)  # a resumed run goes on from the kept one
    assert resumed.kept == {"steps": 320, "mean_return": 6.5}
    assert not resumed.offer({"steps": 384, "mean_return": 6.5}, lambda path: exported.append(path.name))


def test_training_on_two_shards_learns_what_one_process_does(trained, tmp_path):
    """The worlds' bits do not depend on the processes, so neither does PPO's curve (the wall time aside)."""
    out, _, _ = trained
    train(TrainConfig(**TINY, shards=2), tmp_path, say=lambda line: None)
    drop = ("wall_s", "steps_per_s")
    one = [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(open(out / "curve.csv"))]
    two = [{k: v for k, v in row.items() if k not in drop} for row in csv.DictReader(open(tmp_path / "curve.csv"))]
    assert two == one and len(one) == 2


def test_the_onnx_gives_the_torch_policys_mean_action_with_the_scaler_inside(trained):
    out, result, _ = trained
    agent = result.agent
    scaler = agent._observation_preprocessor
    assert not torch.allclose(scaler.running_mean.float(), torch.zeros(12)), "the scaler learnt nothing"
    rng = np.random.default_rng(0)
    obs = rng.normal(0.0, 0.5, size=(32, 12)).astype(np.float32)
    with torch.no_grad():
        _, outputs = agent.models["policy"].act({"observations": scaler(torch.from_numpy(obs))}, role="policy")
    expected = outputs["mean_actions"].numpy()
    session = ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"])
    got = session.run(None, {"observation": obs})[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    meta = {p.key: p.value for p in onnx.load(str(out / "policy.onnx")).metadata_props}
    assert meta["nexus:observation"] == ("position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,"
                                         "yaw_error:1")
    assert meta["nexus:action"] == "ctbr:4" and meta["nexus:policy_hz"] == "50"
    # The action's scaling, for every consumer to read: the Astro Max hovers at thrust fraction 0.4496
    # (hover command 0.572 through f = 0.5: 0.5 · 0.572 + 0.5 · 0.572² = 0.4496), rates ±(3, 3, 1.5) rad/s.
    assert float(meta["nexus:ctbr_hover_thrust"]) == pytest.approx(0.4496, abs=5e-4)
    assert meta["nexus:ctbr_max_rates"] == "3.0,3.0,1.5"


def test_nexus_run_flies_the_export_at_the_policys_rate(trained, tmp_path):
    """0.2 s at 250 Hz is 50 ticks; at 50 Hz the model runs on ticks 0, 5, ..., 45: 10 times."""
    from tests.worlds.flights import fly

    out, _, _ = trained
    flown = fly(tmp_path / "run", "--controller", "policy", "--policy", str(out / "policy.onnx"), "--duration", "0.2",
                "--mission", "short")
    assert flown.info["controller_stats"]["inferences"] == 10


def test_a_stop_keeps_the_checkpoint_curve_and_onnx(tmp_path):
    def stop_after_first(line):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(TrainConfig(**TINY), tmp_path, say=stop_after_first)
    rows = list(csv.DictReader(open(tmp_path / "curve.csv")))
    assert [int(r["steps"]) for r in rows] == [64]
    assert (tmp_path / "checkpoint.pt").is_file() and (tmp_path / "policy.onnx").is_file()
    assert (tmp_path / "checkpoint.json").read_text().strip() == '{"steps": 64}'


@pytest.mark.parametrize("args, words", [
    (["--task", "loop"], "--task loop: unknown task; choose one of hover, waypoint, track"),
    (["--worlds", "0"], "--worlds 0: training flies at least one world"),
    (["--policy-hz", "60"], "--policy-hz 60: the tick rate 250 Hz / 60 Hz is 4.16667 ticks, not a whole number"),
    (["--policy-hz", "-5"], "--policy-hz -5: give a positive rate [Hz]"),
    (["--vary", "nowhere.toml"], "--vary nowhere.toml: no such file"),
    (["--noise", "-1"], "--noise -1: the observation noise scale is 0 (no noise) or more"),
    (["--noise", "nan"], "--noise nan: the observation noise scale is 0 (no noise) or more"),
    (["--seed", "-1"], "--seed -1: give a whole number, 0 or more"),
    (["--steps", "0"], "--steps 0: give a whole number of environment steps, 1 or more"),
    (["--steps", "inf"], "--steps inf: give a whole number of environment steps, 1 or more"),
    (["--steps", "100.5"], "--steps 100.5: give a whole number of environment steps, 1 or more"),
    (["--worlds", "4", "--shards", "5"], "--shards 5: give a whole number of processes from 1 to the 4 worlds"),
])
def test_bad_input_exits_2_with_one_line(args, words, tmp_path):
    """Refused before anything is built (no OUT folder)."""
    result = CliRunner().invoke(main, ["train", "--out", str(tmp_path / "t"), *args])
    assert result.exit_code == 2, result.output
    assert words in result.output and len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "t").exists()


def test_a_variation_file_naming_an_unknown_parameter_is_refused_before_out_is_made(tmp_path):
    vary = tmp_path / "vary.toml"
    vary.write_text('wingspan = { dist = "uniform", low = 1.0, high = 2.0 }\n')
    result = CliRunner().invoke(main, ["train", "--worlds", "2", "--vary", str(vary), "--out", str(tmp_path / "t")])
    assert result.exit_code == 2, result.output
    assert f"{vary}:1: parameter 'wingspan' is unknown" in result.output
    assert not (tmp_path / "t").exists()


def test_a_motor_policy_exports_esc_commands_in_0_1(trained, tmp_path):
    """For motor actions the ONNX ends in (clip(a, -1, 1) + 1) / 2 and declares controls:4."""
    from nexus.gym.env import NexusVectorEnv
    from nexus.gym.export import export_onnx

    _, result, _ = trained
    agent = result.agent
    env = NexusVectorEnv(num_envs=1, action="motors")
    try:
        path = export_onnx(agent, env, tmp_path / "motors.onnx", None)
    finally:
        env.close()
    obs = np.random.default_rng(1).normal(0.0, 3.0, size=(16, 12)).astype(np.float32)
    with torch.no_grad():
        _, outputs = agent.models["policy"].act({"observations": agent._observation_preprocessor(torch.from_numpy(obs))},
                                                role="policy")
    expected = (np.clip(outputs["mean_actions"].numpy(), -1.0, 1.0) + 1.0) / 2.0
    got = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"observation": obs})[0]
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    meta = {p.key: p.value for p in onnx.load(str(path)).metadata_props}
    assert meta["nexus:action"] == "controls:4"


ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("policy, extra, words", [
    ("README.md", [], "--evaluate-only {policy}: not an ONNX model ONNX Runtime can load (["),
    ("nowhere.onnx", [], "--evaluate-only {policy}: no such file; give the policy.onnx that `nexus train --task "
                         "hover` wrote"),
    ("nexus/control/policy/pid_imitation.onnx", [], "--evaluate-only {policy}: its input 'observation' takes 18 "
                                                     "values, but the hover task observes 12"),
    ("TRAINED", ["--action", "motors"], "--evaluate-only {policy}: it was trained with ctbr actions (nexus:action "
                                        "ctbr:4); pass --action ctbr"),
    ("TRAINED", ["--policy-hz", "125"], "--evaluate-only {policy}: it acts at 50 Hz (nexus:policy_hz), not 125 Hz; "
                                        "pass --policy-hz 50"),
    ("TRAINED", ["--task", "waypoint"], "--evaluate-only with --task waypoint: the success bar scores hover policies"),
])
def test_evaluate_only_refuses_what_is_not_a_hover_policy_in_one_line(policy, extra, words, trained, tmp_path):
    """Exit 2, one line naming the option and the fix, and no OUT folder (it was exit 1 with ONNX Runtime's
    InvalidProtobuf, and OUT made, for README.md)."""
    path = trained[0] / "policy.onnx" if policy == "TRAINED" else ROOT / policy
    result = CliRunner().invoke(main, ["train", "--evaluate-only", str(path), "--out", str(tmp_path / "e"), *extra])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("error: " + words.format(policy=path)), result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "e").exists()


def test_vary_help_and_the_docs_say_which_values_are_drawn_every_episode():
    """The code draws these eight afresh each episode (nexus/gym/episode_draws.py) and the rest once per world; the
    help said every value was drawn once."""
    result = CliRunner().invoke(main, ["train", "--help"], terminal_width=400)
    words = " ".join(result.output.split())
    assert ("each world draws mass, thrust_scale, drag_scale, base_force_x, base_force_y, base_force_z, esc_lag_scale and "
            "noise_scale "
            "afresh at the start of every episode, and its other parameters once, when the environment is built"
            ) in words
    docs = " ".join((ROOT / "docs" / "learning.md").read_text().split())
    assert ("Per episode it draws `mass` (the base body's, its inertia left as built), `thrust_scale`, `drag_scale`, "
            "`base_force_x`, `base_force_y`, `base_force_z`, `esc_lag_scale` and `noise_scale`") in docs
    assert "drawn once per world when the environment is built" in docs


@pytest.fixture(scope="module")
def command_output(tmp_path_factory):
    """`nexus train` as a new user runs it, its output redirected to files (not a terminal): 2 worlds x 32 steps,
    one update."""
    import os
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("cli") / "t"
    env = {k: v for k, v in os.environ.items() if k not in ("NEXUS_VERBOSE", "NO_COLOR")}
    done = subprocess.run([sys.executable, "-m", "nexus.cli", "train", "--worlds", "2", "--steps", "64", "--no-evaluate",
                           "--out", str(out)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


def test_train_prints_no_warp_banner_nor_cuda_warning(command_output):
    stdout, stderr = command_output
    assert stdout.splitlines()[0].startswith("trained: 64 steps in "), stdout
    assert len(stdout.splitlines()) == 1, stdout
    assert "policy_best.onnx (64 steps, mean return " in stdout, stdout  # one checkpoint: the best is the last
    assert "Warp" not in stdout + stderr and "CUDA" not in stdout + stderr, stdout + stderr


def test_train_prints_each_skrl_line_once(command_output):
    lines = command_output[1].splitlines()
    skrl = [line for line in lines if "[skrl:" in line]
    assert skrl[:3] == ["[skrl:INFO] Seed: 0",
                        "[skrl:WARNING] PyTorch/cuDNN deterministic algorithms are enabled. This may affect performance",
                        "[skrl:INFO] Environment wrapper: Gymnasium"], lines
    assert "Seed: 0" not in lines and "Environment wrapper: Gymnasium" not in lines  # the root logger's copies


def test_train_writes_no_colour_codes_when_not_on_a_terminal(command_output):
    stdout, stderr = command_output
    assert "\x1b[" not in stdout and "\x1b[" not in stderr
