"""The swap's policy kept by the bar during training (nexus.gym.bar_best): which score beats which, when a score
is due, the files kept, and a tiny training scored between its updates whose curve and policy are those of the
same training unscored, and whose bar.csv row is what the scorer gives that policy afresh."""

from __future__ import annotations

import csv
import json

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.gym.bar_best import BarBest, beats


def test_more_successes_win_then_fewer_early_ends():
    kept = {"success": 10, "ended_early": 30}
    assert beats({"success": 11, "ended_early": 60}, kept)
    assert beats({"success": 10, "ended_early": 29}, kept)
    assert not beats({"success": 10, "ended_early": 30}, kept)  # a tie keeps the earlier
    assert not beats({"success": 9, "ended_early": 0}, kept)
    assert beats({"success": 0, "ended_early": 64}, None)


def test_a_score_is_due_once_per_multiple_passed(tmp_path):
    """Every 1,000,000 steps, checkpoints every 81,920 (10 updates of 8,192): due at the first checkpoint past each
    multiple, 1,064,960 (13 x 81,920), not at 983,040 (12 x); next at 2,048,000 (25 x), not before."""
    bar = BarBest(tmp_path, 1_000_000, make_scorer=None, resumed=False, say=lambda text: None)
    bar.start(0)
    assert not bar.due(983_040) and bar.due(1_064_960)
    bar.last = 1_064_960  # what offer() sets after scoring
    assert not bar.due(1_966_080) and bar.due(2_048_000)
    bar.start(1_064_960)  # a run resumed from that checkpoint
    assert not bar.due(1_966_080) and bar.due(2_048_000)
    assert not BarBest(tmp_path, 0, None, False).due(10**9)  # 0: never


class _Scores:
    """Gives the scores listed, in turn (the keeping logic alone; the real scorer is flown below)."""

    def __init__(self, *scores):
        self.scores = list(scores)

    def score(self, path):
        success, early = self.scores.pop(0)
        return {"success": success, "episodes": 64, "ended_early": early, "vehicles_within": 0.5,
                "median_final_error_m": 0.1, "mean_flown_s": 6.0}

    def close(self):
        pass


def test_the_best_is_kept_and_a_fresh_run_drops_an_earlier_ones(tmp_path):
    bar = BarBest(tmp_path, 100, lambda: _Scores((3, 40), (5, 50), (5, 60)), resumed=False, say=lambda text: None)
    for steps, text in ((100, "first"), (200, "second"), (300, "third")):
        bar.offer(steps, lambda path, text=text: path.write_text(text))
    assert (tmp_path / "policy_bar.onnx").read_text() == "second"
    assert json.loads((tmp_path / "bar.json").read_text())["steps"] == 200
    rows = list(csv.DictReader(open(tmp_path / "bar.csv")))
    assert [(int(r["steps"]), int(r["success"])) for r in rows] == [(100, 3), (200, 5), (300, 5)]
    assert not (tmp_path / "policy_scored.onnx").exists()
    resumed = BarBest(tmp_path, 100, None, resumed=True)
    assert resumed.kept["steps"] == 200 and (tmp_path / "bar.csv").is_file()
    BarBest(tmp_path, 100, None, resumed=False)
    assert not any((tmp_path / name).exists() for name in ("bar.csv", "bar.json", "policy_bar.onnx"))


def _train(out, *extra):
    result = CliRunner().invoke(main, ["train", "--task", "swap", "--worlds", "1", "--vehicles", "2", "--steps", "768",
                                       "--seed", "3", "--no-vehicle-contact", "--no-evaluate", "--out", str(out),
                                       *extra])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A tiny swap training twice (one world of two: 64 steps an update, a checkpoint every 10 updates, 12
    updates): unscored, and scored on 2 episodes at its checkpoint of 640 steps, two updates before its end."""
    plain, scored = tmp_path_factory.mktemp("plain"), tmp_path_factory.mktemp("scored")
    _train(plain)
    output = _train(scored, "--score-every", "640", "--score-episodes", "2")
    return plain, scored, output


def test_scoring_changes_nothing_of_the_learning(scored):
    plain, scored_out, _ = scored
    keep = ("steps", "episodes", "mean_return", "mean_length")
    rows = [[{k: r[k] for k in keep} for r in csv.DictReader(open(out / "curve.csv"))] for out in (plain, scored_out)]
    assert rows[0] == rows[1]
    obs = np.random.default_rng(0).normal(size=(8, 18)).astype(np.float32)  # 12 own features, 6 of one neighbour
    actions = [ort.InferenceSession(str(out / "policy.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"observation": obs})[0] for out in (plain, scored_out)]
    np.testing.assert_array_equal(actions[0], actions[1])


def test_the_checkpoint_is_scored_and_kept_as_the_scorer_scores_it_afresh(scored):
    """One score, at 640 steps (the end, 768, is not a multiple past it): kept, and the row is the bar's own
    evaluation of that policy on the scoring seed's 2 episodes, one world each."""
    from nexus.gym.swarm_evaluate import evaluate_swap

    _, out, output = scored
    rows = list(csv.DictReader(open(out / "bar.csv")))
    assert len(rows) == 1 and rows[0]["steps"] == "640" and rows[0]["episodes"] == "2"
    assert "train: the bar at 640 steps: " in output and "the bar's best " in output.splitlines()[-1]
    again = evaluate_swap(out / "policy_bar.onnx", worlds=2, episodes=1, vehicles=2, seed=2000)
    assert int(rows[0]["success"]) == again["success"] and int(rows[0]["ended_early"]) == again["ended_early"]
    assert float(rows[0]["mean_flown_s"]) == again["mean_flown_s"]
    assert json.loads((out / "bar.json").read_text())["steps"] == 640
