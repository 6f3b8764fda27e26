"""A sweep file that names a policy model by a relative path: the path is read from the sweep file's folder (as
``vary`` and ``vehicle`` are), not from wherever a worker process happens to run."""

from nexus.sweep.runner import SweepOptions, prepare
from tests.sweep.conftest import write_sweep


def test_a_relative_policy_model_is_taken_from_the_sweep_files_folder(tmp_path):
    (tmp_path / "models").mkdir()
    sweep = write_sweep(tmp_path / "models", '[run]\ncontroller = "policy"\ndevice = "cpu"\nduration = 1.0\n'
                        'controller_options = {model = "hover/policy.onnx"}\n[grid]\nseed = [0, 1]\n')
    _, points = prepare(sweep, SweepOptions(out=tmp_path / "out", progress=False))
    models = {point.as_dict()["config"]["controller_options"]["model"] for point in points}
    assert models == {str((tmp_path / "models" / "hover" / "policy.onnx").resolve())}
