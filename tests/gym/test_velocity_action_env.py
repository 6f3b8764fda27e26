"""The velocity action in the learning environment (``action="velocity"``): hover held by a zero action, a forward
command flown by the vehicle's own PID cascade, the policy controller's kernel giving the environment's controls bit
for bit, a tiny ``nexus train --task swap --action velocity`` whose ONNX declares its action and limits and which
``nexus run`` flies, and bad input refused in one line."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import onnxruntime as ort
import pytest
import warp as wp
from click.testing import CliRunner

from nexus.cli import main
from nexus.control.allocation import MixTables
from nexus.control.pid import PidParams, PidState
from nexus.control.policy import PolicyController
from nexus.core.errors import BuildError
from nexus.estimation.pose_twist import PoseTwist
from nexus.gym.agent import Layout, apply_action
from nexus.gym.env import NexusVectorEnv
from nexus.gym.tasks import TASKS
from tests.control.test_policy import _model  # a linear ONNX model with the metadata given

OWN_LAYOUT = "position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1"  # 12 values
#: Hover at the target, level, still, heading north: nothing drawn, so the flight is the hand calculation's.
STILL_START = replace(TASKS["hover"], spawn_position=0.0, spawn_velocity=0.0, spawn_tilt=0.0, spawn_yaw=0.0,
                      max_error=10.0, episode_s=10.0)


@pytest.fixture(scope="module")
def flown():
    """Two worlds, 2 s (100 policy steps): world 0 holds action 0, world 1 asks for +1 m/s forward (a₀ = 0.5 of
    2 m/s), north."""
    env = NexusVectorEnv(num_envs=2, task=STILL_START, action="velocity", noise=0.0, estimator="truth")
    try:
        obs, _ = env.reset(seed=0)
        actions = np.zeros((2, 4), np.float32)
        actions[1, 0] = 0.5
        rows = [obs.copy()]
        for _ in range(100):
            obs, _, terminated, truncated, _ = env.step(actions)
            assert not terminated.any() and not truncated.any()
            rows.append(obs.copy())
        yield env, np.array(rows)
    finally:
        env.close()


def test_zero_action_from_hover_holds_hover(flown):
    """Velocity goal 0 from a still hover: after 2 s the vehicle is within 2 cm of its start; it never moves
    sideways faster than 1 mm/s, and vertically under 5 cm/s (the velocity integral trims the file's hover
    command to the vehicle's true hover thrust)."""
    _, rows = flown
    assert np.abs(rows[-1, 0, 0:3]).max() < 0.02  # position error [m]
    assert np.abs(rows[:, 0, 3:5]).max() < 0.001  # horizontal velocity [m/s], at every step
    assert np.abs(rows[:, 0, 5]).max() < 0.05 and abs(rows[-1, 0, 5]) < 0.005  # vertical


def test_forward_command_tilts_forward_and_settles_to_one_metre_a_second(flown):
    """The thrust axis leans forward at once (the body's down axis points backwards: tilt_heading x < 0), and the
    velocity loop brings the forward speed to 1 m/s within 10 % by 1.6 s and keeps it there to 2 s; nothing sideways
    beyond 1 mm/s, vertically 4 cm/s. (An ideal first-order lag at the velocity gain's 1.8 /s would be at
    1 - exp(-1.8 x 1.6) = 94 % by 1.6 s; the tilt takes its first tenth of a second.)"""
    _, rows = flown
    forward = rows[:, 1, 3]
    assert rows[10, 1, 6] < -0.1  # at 0.2 s: leaning forward, sin of the tilt over 0.1
    assert forward[15] > 0.15  # moving forward by 0.3 s
    assert np.all(np.abs(forward[80:] - 1.0) < 0.1), forward[80:]  # 1.6 s to 2 s
    assert np.abs(rows[:, 1, 4]).max() < 0.001 and np.abs(rows[:, 1, 5]).max() < 0.04


@wp.kernel
def environment_controls(estimate: wp.array(dtype=PoseTwist), actions: wp.array2d(dtype=wp.float32), layout: Layout,
                         params: wp.array(dtype=PidParams), mix: MixTables, pid: wp.array(dtype=PidState),
                         goals: wp.array(dtype=wp.vec3), controls: wp.array2d(dtype=wp.float32)):
    w = wp.tid()
    apply_action(w, estimate[w], actions, layout, params, mix, pid, controls, goals[w])


@pytest.mark.parametrize("goal_gain, goal_fade, power", [(0.0, 0.0, 1.0), (1.5, 0.0, 1.0), (1.5, 2.0, 1.0),
                                                          (1.5, 2.0, 2.0)])
def test_the_policy_controller_flies_the_environments_controls_bit_for_bit(flown, tmp_path, goal_gain, goal_fade,
                                                                            power):
    """The same estimates and velocity actions, five ticks (the cascade's state carried): the environment's
    ``apply_action`` and the policy controller's kernel write the same ESC commands, bit for bit; with a go-to-goal
    law too, and with its correction fading near the goal, linearly or as the square (the environment's goals and
    the controller's setpoints the same points)."""
    env, _ = flown
    agent = env.agent
    layout = agent.layout
    if goal_gain:
        layout = Layout()
        for name in Layout.vars:
            setattr(layout, name, getattr(agent.layout, name))
        layout.goal_gain, layout.goal_fade, layout.goal_fade_power = goal_gain, goal_fade, power
    meta = {"nexus:observation": OWN_LAYOUT, "nexus:action": "velocity:4",
            "nexus:velocity_limits": "2.0,1.0,1.5", "nexus:policy_hz": "50"}
    if goal_gain:
        meta["nexus:velocity_goal_gain"] = repr(goal_gain)
    if goal_fade:
        meta["nexus:velocity_goal_fade"] = repr(goal_fade)
    if power != 1.0:
        meta["nexus:velocity_goal_fade_power"] = repr(power)
    path = _model(tmp_path / "v.onnx", 12, 4, meta)
    policy = PolicyController("/vehicle/controller", path, allocation=agent.allocation,
                              thrust_model_factor=agent.rate_params.thrust_model_factor)
    policy.cascade_params = agent.rate_params
    policy.prepare(SimpleNamespace(dt=0.004, worlds=2, vehicles=1, device="cpu"))
    pid = wp.zeros(2, dtype=PidState, device="cpu")
    rng = np.random.default_rng(7)
    for tick in range(5):
        estimates = []
        for _ in range(2):
            e = PoseTwist()
            q = rng.normal(0.0, 0.1, 4) + np.array([0.0, 0.0, 0.0, 1.0])
            e.attitude = wp.quat(*(q / np.linalg.norm(q)))
            e.velocity, e.rates, e.position = (wp.vec3(*rng.normal(0.0, 0.5, 3)) for _ in range(3))
            estimates.append(e)
        estimate = wp.array(estimates, dtype=PoseTwist, device="cpu")
        actions = rng.uniform(-1.2, 1.2, (2, 4)).astype(np.float32)
        goals = rng.normal(0.0, 2.0, (2, 3)).astype(np.float32)
        ours = wp.zeros((2, 16), dtype=wp.float32, device="cpu")
        wp.launch(environment_controls, 2, inputs=[estimate, wp.array(actions, dtype=wp.float32, device="cpu"),
                                                   layout, agent.params, agent.mix, pid,
                                                   wp.array(goals, dtype=wp.vec3, device="cpu")], outputs=[ours],
                  device="cpu")
        theirs = policy.fly_velocity(actions, estimate.numpy(), np.ones(2, np.int32), goals)
        assert np.array_equal(ours.numpy().view(np.uint32), theirs.view(np.uint32)), tick
        assert ours.numpy()[:, :4].max() > 0.0 and ours.numpy()[:, 4:].max() == 0.0  # four rotors driven


def test_a_velocity_model_without_its_limits_is_refused_in_one_line(tmp_path):
    path = _model(tmp_path / "v.onnx", 12, 4, {"nexus:observation": OWN_LAYOUT, "nexus:action": "velocity:4"})
    with pytest.raises(BuildError) as caught:
        PolicyController("/vehicle/controller", path)
    message = str(caught.value)
    assert "its metadata has no 'nexus:velocity_limits', which scales its velocity:4 action" in message
    assert "\n" not in message


def test_a_velocity_action_of_the_wrong_width_is_refused(tmp_path):
    path = _model(tmp_path / "v.onnx", 12, 4, {"nexus:observation": OWN_LAYOUT, "nexus:action": "velocity:3",
                                            "nexus:velocity_limits": "2,1,1.5"})
    with pytest.raises(BuildError, match="gives 'velocity' width 3, but the signal's 'velocity' has width 4"):
        PolicyController("/vehicle/controller", path)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One world of four vehicles, velocity actions, 256 vehicle steps: two updates."""
    out = tmp_path_factory.mktemp("swap_velocity")
    result = CliRunner().invoke(main, ["train", "--task", "swap", "--action", "velocity", "--worlds", "1", "--steps",
                                       "256", "--seed", "3", "--no-vehicle-contact", "--no-evaluate", "--out",
                                       str(out)])
    assert result.exit_code == 0, result.output
    return out / "policy.onnx"


def test_the_export_declares_the_velocity_action_and_its_limits(trained):
    session = ort.InferenceSession(str(trained), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    assert meta["nexus:action"] == "velocity:4" and meta["nexus:velocity_limits"] == "2.0,1.0,1.5"
    assert "nexus:ctbr_hover_thrust" not in meta and meta["nexus:vehicles"] == "4"
    # Trained on the velocity reward: closeness from 1.4 m at weight 1 (docs/fleets.md says why).
    assert meta["nexus:reward"] == ("w_progress=10,w_goal=1,w_proximity=1,safe_distance=1.4,w_rates=0.02,"
                                    "w_action=0.01,crash_penalty=30,collision_distance=1")
    (actions,) = session.run(None, {"observation": np.zeros((4, 30), np.float32)})
    assert actions.shape == (4, 4)


def test_the_swap_evaluation_flies_it_with_velocity_actions(trained):
    from nexus.gym.swarm_evaluate import OnnxPolicy

    assert OnnxPolicy(trained).action == "velocity"


def test_nexus_run_flies_the_velocity_policy_on_every_vehicle(trained, tmp_path):
    """1 s at 250 Hz, the policy at 50 Hz: 50 inferences of four rows."""
    from tests.worlds.flights import fly

    flown = fly(tmp_path / "run", "--controller", "policy", "--policy", str(trained), "--vehicles", "4",
                "--duration", "1")
    assert flown.info["controller_stats"]["inferences"] == 50
    assert sorted(flown.record["vehicle"].unique().tolist()) == [0, 1, 2, 3]


@pytest.mark.parametrize("args, words", [
    (["train", "--task", "swap", "--action", "velocty", "--steps", "256"],
     "--action velocty: unknown action; choose one of ctbr, motors, velocity"),
])
def test_bad_input_exits_2_with_one_line(args, words, tmp_path):
    result = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert words in result.output and len(result.output.strip().splitlines()) == 1


def test_a_velocity_policy_scored_with_ctbr_actions_is_refused(tmp_path):
    """The hover bar flies a policy with the action it was trained with, or refuses it before anything is built."""
    path = _model(tmp_path / "v.onnx", 12, 4, {"nexus:observation": OWN_LAYOUT, "nexus:action": "velocity:4",
                                            "nexus:velocity_limits": "2.0,1.0,1.5", "nexus:policy_hz": "50"})
    result = CliRunner().invoke(main, ["train", "--evaluate-only", path, "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "it was trained with velocity actions (nexus:action velocity:4); pass --action velocity" in result.output
    assert len(result.output.strip().splitlines()) == 1
