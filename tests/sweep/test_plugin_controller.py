"""A controller defined only in a test file (tests/control/test_registry.py) flies a sweep; the file's choices
come from the registry and the solver list."""

import json

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.sweep.runner import SweepOptions, prepare, run_sweep
from nexus.sweep.spec import SweepError
from tests.sweep.conftest import write_sweep

PLUGIN = "tests.control.test_registry"


def test_a_test_file_s_controller_flies_every_point_with_its_options_table(tmp_path, ray_cpus):
    # The workers learn of constant_hover only from the plugins the run's configuration carries.
    path = write_sweep(tmp_path, f'[run]\nplugins = ["{PLUGIN}"]\ncontroller = "constant_hover"\nduration = 0.1\n'
                                 'device = "cpu"\ncontroller_options = {level = 0.25}\n[grid]\nseed = [0, 1]\n')
    result = run_sweep(path, SweepOptions(out=tmp_path / "sweep", progress=False))
    assert result.failed == 0 and len(result.rows) == 2
    for row in result.rows:
        folder = tmp_path / "sweep" / row["folder"]
        options = json.loads((folder / "run.json").read_text())["options"]
        assert (options["controller"], options["plugins"], options["controller_options"]) == (
            "constant_hover", [PLUGIN], {"level": 0.25})
        record = pq.read_table(folder / "record.parquet").to_pandas()
        assert len(record) == 25  # 0.1 s at 250 Hz
        assert np.all(record[[f"controls[{i}]" for i in range(4)]].to_numpy() == np.float32(0.25))


def _refused(tmp_path, text: str) -> str:
    with pytest.raises(SweepError) as caught:
        prepare(write_sweep(tmp_path, text), SweepOptions(out=tmp_path / "out"))
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()
    return str(caught.value)


def test_a_solver_value_is_one_of_the_solvers(tmp_path):
    message = _refused(tmp_path, '[grid]\nsolver = ["mujoco", "bullet"]\n')
    assert "solver = 'bullet'; choose one of mujoco, featherstone" in message


def test_an_unknown_controller_or_plugin_module_is_refused(tmp_path):
    assert "choose one of" in _refused(tmp_path, '[grid]\ncontroller = ["pid", "no_such_controller"]\n')
    message = _refused(tmp_path, '[run]\nplugins = ["no_such_module_here"]\n[grid]\nseed = [0]\n')
    assert "[run] plugins no_such_module_here: cannot import it" in message


def test_an_unknown_option_in_the_options_table_names_it(tmp_path):
    message = _refused(tmp_path, f'[run]\nplugins = ["{PLUGIN}"]\ncontroller = "constant_hover"\n'
                                 'controller_options = {lvl = 0.3}\n[grid]\nseed = [0]\n')
    assert "[run]: controller_options of --controller constant_hover: unknown option 'lvl'" in message
