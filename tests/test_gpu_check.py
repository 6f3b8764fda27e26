"""``tools/gpu_check.sh`` and what a GPU machine without the optional packages needs (issue 36).

The GPU machine gets no CasADi, Ray, polars or imageio-ffmpeg (../shared/GPU.md): a default flight must load
none of them, a suite that needs one is skipped with a line that says so, and the check keeps every step's
result when one fails. The check itself runs here on the CPU (``--device cpu``), a few steps at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import cuda_present

ROOT = Path(__file__).resolve().parents[1]
BIN = str(Path(sys.executable).parent)
OPTIONAL = ("casadi", "ray", "polars", "imageio_ffmpeg")
STEPS = ["flight1", "flight2", "compare", "flight", "worlds", "pytest", "diff", "render", "engine", "plant", "sensors"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEXUS_GPU_CHECK")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def test_a_default_flight_loads_none_of_the_packages_the_gpu_machine_lacks(tmp_path):
    # `nexus run` as gpu_check.sh flies it (default vehicle, scene, mission and controller), cut to 0.2 s.
    script = (
        "import sys\n"
        "from nexus.cli import main\n"
        f"code = main(['run', '--device', 'cpu', '--duration', '0.2', '--quiet', '--out', {str(tmp_path / 'run')!r}],"
        " standalone_mode=False)\n"
        f"print('loaded:', sorted(m for m in {OPTIONAL!r} if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=_env(), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "loaded: []" in done.stdout.splitlines()
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (info["status"], info["ticks"]) == ("finished", 50)  # it flew: 0.2 s at 250 Hz


def _blocked(tmp_path: Path, *modules: str) -> str:
    """A folder of stub packages that fail to import, as on a machine without ``modules``."""
    folder = tmp_path / "without"
    for module in modules:
        (folder / module).mkdir(parents=True)
        stub = f"raise ModuleNotFoundError('no {module} here', name='{module}')\n"
        (folder / module / "__init__.py").write_text(stub)
    return str(folder)


def test_a_suite_whose_optional_package_is_missing_is_skipped_with_a_line_that_says_so(tmp_path):
    out = tmp_path / "host.json"
    env = _env(PYTHONPATH=_blocked(tmp_path, "casadi") + os.pathsep + str(ROOT))
    done = subprocess.run([sys.executable, "tools/gpu_check.py", "bench", "host", "cpu", "--json-out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 75, done.stdout + done.stderr
    note = "suite host skipped: it needs casadi, which this Python cannot import (pip install casadi)"
    assert note in done.stdout
    assert json.loads(out.read_text()) == {"suite": "host", "skipped": note}


@pytest.mark.skipif(cuda_present(), reason="on a GPU machine the check runs for real")
def test_without_a_gpu_the_check_says_so_and_exits_0(tmp_path):
    done = subprocess.run(["bash", "tools/gpu_check.sh", "--results", str(tmp_path / "r"), BIN], cwd=ROOT,
                          env=_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "gpu-check: no CUDA device on this machine" in done.stdout
    assert (tmp_path / "r" / "summary.txt").read_text() == "no CUDA device on this machine: nothing checked\n"


def test_a_failing_and_a_hanging_step_leave_the_others_running_and_every_result_written(tmp_path):
    results = tmp_path / "r"
    # flight1 only sleeps (it is faked), so a 1 s limit ends it as surely as a longer one.
    env = _env(NEXUS_GPU_CHECK_FAIL="flight1:hang compare", NEXUS_GPU_CHECK_LIMITS="flight1=1 pytest=600")
    done = subprocess.run(["bash", "tools/gpu_check.sh", "--device", "cpu", "--without", " ".join(OPTIONAL),
                           "--only", "flight1 compare pytest", "--results", str(results), BIN],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 1, done.stdout + done.stderr  # a step failed: the check fails, at its end
    status = {p.name.split(".")[0].split("-", 1)[1]: json.loads(p.read_text())
              for p in results.glob("*.status.json")}
    assert sorted(status) == sorted(STEPS)  # every step has its status file, run or not
    flight1 = status["flight1"]
    assert (flight1["status"], flight1["rc"], flight1["limit_s"]) == ("timed out", 124, 1)
    assert (status["compare"]["status"], status["compare"]["rc"]) == ("failed", 1)
    # The step after the failures ran: pytest -m cuda on the CPU, every cuda test skipped, the optional
    # packages unimportable (a test file importing one at its top would fail the step).
    assert (status["pytest"]["status"], status["pytest"]["rc"]) == ("ok", 0)
    assert "skipped" in (results / "06-pytest.log").read_text()
    assert (results / "06-pytest.xml").is_file()
    others = [name for name in STEPS if name not in ("flight1", "compare", "pytest")]
    assert {status[name]["status"] for name in others} == {"not selected"}
    summary = (results / "summary.txt").read_text().splitlines()
    listed = [line.split()[0] for line in summary if line[:2].isdigit()]
    assert listed == [f"{i:02d}-{s}" for i, s in enumerate(STEPS, 1)]
    assert summary[-1] == "steps: 1 ok, 1 failed, 1 timed out, 8 not selected"
    compare = json.loads((results / "summary.json").read_text())["steps"][2]
    assert (compare["step"], compare["status"], compare["note"]) == ("compare", "failed", "exit status 1")


def _helper():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_check_helper", ROOT / "tools" / "gpu_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_summary_checks_a_gpu_run_s_figures_against_the_gpu_targets(tmp_path):
    steps = [("04-flight", "flight"), ("05-worlds", "worlds"), ("07-diff", "diff"), ("08-render", "render")]
    plan = {"device": "cuda", "started_utc": "2026-12-03T00:00:00Z", "code": "abc1234 2026-12-03",
            "steps": [{"id": i, "step": s, "limit_s": 60, "title": s} for i, s in steps]}
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    suites = {
        "flight": {"rtf_captured": 18.5, "loop_vs_bare": 1.2, "view_cost": 0.05},
        "worlds": {"rows": [{"worlds": 1, "drone_steps_per_s": 3000.0, "worlds_vs_bare": 1.1},
                            {"worlds": 16384, "drone_steps_per_s": 12.5e6, "worlds_vs_bare": 1.4}]},
        "diff": {"backward_over_forward": 2.5, "captured_gradients_equal": True, "checkpointed_gradients_equal": False},
        "render": {"rtf_plain": 10.0, "rtf_camera": 6.5},  # the camera costs 35 % of the flight's speed
    }
    for stem, name in steps:
        (tmp_path / f"{stem}.status.json").write_text(json.dumps({"id": stem, "step": name, "status": "ok", "rc": 0}))
        (tmp_path / f"{stem}.json").write_text(json.dumps(suites[name]))
    assert _helper().summary(tmp_path) == 0
    verdicts = {(step["step"], row["figure"]): row["met"]
                for step in json.loads((tmp_path / "summary.json").read_text())["steps"]
                for row in step["figures"] if "target" in row}
    assert verdicts == {
        ("flight", "rtf_captured"): False,  # 18.5 < 19, the one-drone GPU target
        ("flight", "loop_vs_bare"): True, ("flight", "view_cost"): True,
        ("worlds", "drone_steps_per_s@16384"): True,  # 12.5 M >= 10 M
        ("diff", "backward_over_forward"): True, ("diff", "captured_gradients_equal"): True,
        ("diff", "checkpointed_gradients_equal"): False,
        ("render", "rtf_camera_over_plain"): False,  # 6.5 / 10 = 0.65 < 0.7
    }
    text = (tmp_path / "summary.txt").read_text()
    assert "rtf_captured" in text and "18.5   target >= 19: NOT MET" in text
