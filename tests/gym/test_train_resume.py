"""``nexus train --resume``: a stopped or finished run goes on from its checkpoint. The models come back as they
were saved (a resume that makes no update exports the saved policy, weight for weight), the curve keeps its rows
and goes on counting steps, wall time and episodes, and a resume that cannot go on is refused in one line before
anything is built."""

from __future__ import annotations

import csv
import json
import shutil
from dataclasses import replace

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import numpy_helper

from nexus.cli import main
from nexus.core.errors import BuildError
from nexus.gym.training import TrainConfig, train

#: 4 worlds x 16 steps a rollout: 64 steps an update; 128 steps are two updates.
TINY = TrainConfig(task="hover", worlds=4, steps=128, rollouts=16, mini_batches=2, epochs=2, checkpoint_every=1)


def _rows(folder):
    return list(csv.DictReader(open(folder / "curve.csv")))


def _weights(path):
    return {i.name: numpy_helper.to_array(i) for i in onnx.load(str(path)).graph.initializer}


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("first")
    train(TINY, out, say=lambda line: None)
    return out


def test_a_resume_goes_on_counting_from_the_checkpoint(first, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(first, out)
    before = _rows(out)
    lines: list[str] = []
    result = train(replace(TINY, steps=256), out, say=lines.append, resume=True)
    rows = _rows(out)
    assert [int(r["steps"]) for r in rows] == [64, 128, 192, 256]
    assert rows[:2] == before  # the earlier rows kept as they were
    assert float(rows[2]["wall_s"]) > float(before[-1]["wall_s"])  # the wall time goes on from the earlier run's
    assert int(rows[2]["episodes"]) >= int(before[-1]["episodes"])
    assert lines[0] == f"train: resumed from {out / 'checkpoint.pt'} at 128 steps" and len(lines) == 3
    assert json.loads((out / "checkpoint.json").read_text()) == {"steps": 256} and result.last["steps"] == 256


def test_a_resume_without_an_update_exports_the_saved_policy(first, tmp_path):
    """Two more steps (an update needs 64): nothing is learnt, so the export is the checkpoint's models and
    scaler; a fresh agent's weights would differ (the scaler's mean is 0 before any step)."""
    out = tmp_path / "run"
    shutil.copytree(first, out)
    saved = _weights(first / "policy.onnx")
    train(replace(TINY, steps=130), out, say=lambda line: None, resume=True)
    again = _weights(out / "policy.onnx")
    assert saved.keys() == again.keys() and len(saved) >= 4
    for name, value in saved.items():
        assert np.array_equal(value, again[name]), name
    fresh = tmp_path / "fresh"
    train(replace(TINY, steps=2), fresh, say=lambda line: None)  # the same seed, no update, nothing loaded
    assert any(not np.array_equal(value, _weights(fresh / "policy.onnx")[name]) for name, value in saved.items())


@pytest.mark.parametrize("args, words", [
    (["--worlds", "8", "--steps", "256"], "was trained with --worlds 4, this run asks --worlds 8; give the same options"),
    (["--worlds", "4", "--steps", "128"], "has trained 128 steps already; give --steps above that"),
])
def test_a_resume_that_cannot_go_on_is_refused_in_one_line(first, tmp_path, args, words):
    out = tmp_path / "run"
    shutil.copytree(first, out)
    # The tiny run's own hyperparameters are not options of the command: write them as the command's defaults.
    saved = json.loads((out / "train.json").read_text())
    saved.update(rollouts=32, mini_batches=4, epochs=5, checkpoint_every=10)
    (out / "train.json").write_text(json.dumps(saved))
    result = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", *args])
    assert result.exit_code == 2, result.output
    assert words in result.output and len(result.output.strip().splitlines()) == 1


def test_a_resume_of_a_folder_without_a_checkpoint_is_refused(tmp_path):
    with pytest.raises(BuildError) as caught:
        train(replace(TINY, steps=256), tmp_path / "none", say=lambda line: None, resume=True)
    assert f"--resume: {tmp_path / 'none' / 'checkpoint.pt'} is missing" in str(caught.value)
