"""The swap's policy kept by the bar's own score during training, not by the learning curve's return.

The curve's mean return is the training episodes' (the stochastic policy's, the vehicles not in contact when
trained with ``--no-vehicle-contact``), and on the swap it is a poor proxy for the bar: of two checkpoints of one
run, the one with the better return met the bar in 11 episodes of 256 and the other in 110 (docs/fleets.md).
Every ``score_every`` environment steps :class:`BarBest` exports the policy, flies it on ``episodes`` swap
episodes scored as the bar scores them (:class:`~nexus.gym.swarm_evaluate.SwapScorer`: in contact, on the truth,
one episode a world), appends a row to ``bar.csv`` and, when it beats every earlier score, keeps it as
``policy_bar.onnx`` with its row in ``bar.json``. A policy beats another with more successes, or as many and
fewer episodes ended early.

The scoring episodes are drawn from :data:`SCORING_SEED`, which neither the training (its ``--seed`` moved on by
the steps) nor the final evaluation (seed 1000) draws: picking the best of many checkpoints on some episodes
flatters them, so the kept policy is scored afresh on the evaluation's 256 (``nexus train --evaluate``).
The scoring runs in the training's process, between updates; it does not touch the learner's random streams,
so a run's curve is the same bits with scoring or without (``tests/gym/test_bar_best.py``).
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

#: The scoring episodes' seed (module doc).
SCORING_SEED = 2000
#: ``bar.csv``'s columns: the steps trained, then the score's own fields.
BAR_COLUMNS = ("steps", "success", "episodes", "ended_early", "vehicles_within", "median_final_error_m",
               "mean_flown_s")


def beats(score: dict, kept: dict | None) -> bool:
    """True when ``score`` is better on the bar than ``kept``: more successes, or as many and fewer ended early."""
    if kept is None:
        return True
    return (score["success"], -score["ended_early"]) > (kept["success"], -kept["ended_early"])


class BarBest:
    """Score the policy every ``every`` steps and keep the best by the bar (module doc).

    ``make_scorer()`` builds the :class:`~nexus.gym.swarm_evaluate.SwapScorer` on the first score (so a run
    stopped before it never builds one); ``resumed``: a resumed run keeps the rows and the kept policy of the
    run it goes on from, a fresh one drops those an earlier run left in the folder.
    """

    def __init__(self, folder: Path, every: int, make_scorer, resumed: bool, say=print):
        self.folder, self.every, self.make_scorer, self.say = Path(folder), int(every), make_scorer, say
        self.scorer = None
        self.last = 0  # the steps of the last score, or of the start
        self.csv = self.folder / "bar.csv"
        if not resumed:
            for name in ("bar.csv", "bar.json", "policy_bar.onnx"):
                (self.folder / name).unlink(missing_ok=True)
        path = self.folder / "bar.json"
        #: The kept policy's row (None: none kept yet).
        self.kept: dict | None = json.loads(path.read_text()) if path.is_file() else None

    def due(self, steps: int) -> bool:
        """True when ``steps`` (a checkpoint's) has passed a multiple of ``every`` since the last score (or the
        start: a resumed run goes on from its checkpoint's steps, which :meth:`start` gives)."""
        return self.every > 0 and steps // self.every > self.last // self.every

    def start(self, steps: int) -> None:
        """The run begins at ``steps`` (0, or a resumed checkpoint's)."""
        self.last = steps

    def offer(self, steps: int, export) -> dict:
        """Score the policy ``export(path)`` writes; keep it when it beats the kept one. Returns the row."""
        candidate = self.folder / "policy_scored.onnx"
        export(candidate)
        if self.scorer is None:
            self.scorer = self.make_scorer()
        score = self.scorer.score(candidate)
        self.last = steps
        row = {"steps": steps, **{name: score[name] for name in BAR_COLUMNS[1:]}}
        fresh = not self.csv.is_file()
        with open(self.csv, "a", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=BAR_COLUMNS)
            if fresh:
                writer.writeheader()
            writer.writerow(row)
        kept = beats(row, self.kept)
        if kept:
            os.replace(candidate, self.folder / "policy_bar.onnx")
            self.kept = row
            temporary = self.folder / "bar.json.tmp"
            temporary.write_text(json.dumps(row) + "\n")
            os.replace(temporary, self.folder / "bar.json")
        else:
            candidate.unlink(missing_ok=True)
        self.say(f"train: the bar at {steps:,} steps: {row['success']} of {row['episodes']} episodes, "
                 f"{row['ended_early']} ended early" + ("; kept as policy_bar.onnx" if kept else
                                                       f" (kept: {self.kept['success']} at {self.kept['steps']:,})"))
        return row

    def close(self) -> None:
        """The scorer's environment closed, and a policy a stop caught mid-score removed."""
        (self.folder / "policy_scored.onnx").unlink(missing_ok=True)
        if self.scorer is not None:
            self.scorer.close()
            self.scorer = None
