"""Issue 47's bar on the shipped swap policy: every vehicle within 0.2 m of its goal at the episode's last step
(11.98 s of a 12 s episode) and no collision, where the straight-line baseline meets head on; the full 256
episodes are a figure in docs/fleets.md, here the first episode of 8 worlds (the same draws) and the command
line's evaluation on 2."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from nexus.cli import main

POLICY = Path(__file__).resolve().parents[2] / "policies" / "swap4_velocity_k2_safe.onnx"


def _swap(seconds: float):
    from nexus.gym.swarm_tasks import SWARM_TASKS

    return replace(SWARM_TASKS["swap"], episode_s=seconds)


@pytest.fixture(scope="module")
def scores():
    from nexus.gym.swarm_evaluate import evaluate_swap

    return {seconds: evaluate_swap(POLICY, worlds=8, episodes=1, task=_swap(seconds)) for seconds in (8.0, 12.0)}


def test_every_vehicle_arrives_by_twelve_seconds_without_a_collision(scores):
    score = scores[12.0]
    assert score["time_s"] == 11.98  # 600 steps at 50 Hz, scored on the last
    assert score["success"] == 8 and score["ended_early"] == 0
    assert score["median_final_error_m"] < 0.02


def test_at_eight_seconds_the_same_flights_are_not_all_in(scores):
    """The same draws cut at 7.98 s: no collision either, but not every vehicle within 0.2 m yet."""
    score = scores[8.0]
    assert score["ended_early"] == 0
    assert score["success"] < 8 and score["vehicles_within"] < 1.0


def test_the_command_line_scores_the_episode_it_is_given(tmp_path, monkeypatch):
    import nexus.commands.train as train_command

    monkeypatch.setattr(train_command, "SWAP_EVALUATION_WORLDS", 2)
    monkeypatch.setattr(train_command, "SWAP_EVALUATION_EPISODES", 1)
    result = CliRunner().invoke(main, ["train", "--task", "swap", "--evaluate-only", str(POLICY), "--episode-s", "12",
                                       "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    scored = json.loads((tmp_path / "evaluation.json").read_text())
    assert scored["policy"]["time_s"] == 11.98 and scored["policy"]["success"] == 2
    assert scored["baseline"]["success"] == 0 and scored["baseline"]["ended_early"] == 2
    assert scored["baseline"]["mean_flown_s"] < 1.0  # the middle pair meets head on
