"""The TorchScript policy (an optional extra): the shipped policy exported by tools/train_policy.py flies as the
ONNX one does, its layouts come from extra files and are checked, and without torch a .pt is a clear error."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from nexus.control.policy import DEFAULT_MODEL, PolicyController
from nexus.core.errors import BuildError

ROOT = Path(__file__).resolve().parents[2]
NO_TORCH = "torch is an optional extra (pip install nexus[torch]); the TorchScript policy tests need it"


@pytest.fixture
def torch():
    return pytest.importorskip("torch", reason=NO_TORCH)


def _train_policy():
    spec = importlib.util.spec_from_file_location("train_policy", ROOT / "tools" / "train_policy.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def shipped_pt(torch, tmp_path) -> Path:
    """The shipped ONNX policy's weights as TorchScript, as `train_policy.py --from-onnx ... --torchscript` writes it."""
    tool = _train_policy()
    out = tmp_path / "pid_imitation.pt"
    tool.export_torchscript(*tool.weights_from_onnx(DEFAULT_MODEL), out)
    return out


def _module(torch, path, inputs: int, outputs: int, extra: dict) -> Path:
    """A TorchScript Linear layer (zero weights, bias 0.5) saved with ``extra`` as its extra files."""
    layer = torch.nn.Linear(inputs, outputs)
    torch.nn.init.zeros_(layer.weight)
    torch.nn.init.constant_(layer.bias, 0.5)
    with warnings.catch_warnings():  # torch 2.10+ calls TorchScript deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.jit.save(torch.jit.script(layer), str(path), _extra_files=extra)
    return path


def _states(count: int, seed: int = 3):
    """Random but plausible (estimate, setpoint, setpoint velocity, setpoint acceleration) around a hover at 2 m."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        q = np.array([*rng.normal(0.0, 0.05, 3), 1.0])
        yield (SimpleNamespace(position=np.array([0.0, 0.0, -2.0]) + rng.normal(0.0, 0.5, 3),
                               velocity=rng.normal(0.0, 0.5, 3), attitude=q / np.linalg.norm(q),
                               rates=rng.normal(0.0, 0.3, 3)),
               SimpleNamespace(position=np.array([0.0, 0.0, -2.0]) + rng.normal(0.0, 0.5, 3), yaw=rng.normal(0.0, 0.3)),
               rng.normal(0.0, 0.5, 3), rng.normal(0.0, 0.5, 3))


def test_torchscript_export_gives_the_onnx_actions(shipped_pt):
    onnx_policy = PolicyController("/vehicle/controller", DEFAULT_MODEL)
    ts_policy = PolicyController("/vehicle/controller", shipped_pt)
    assert type(ts_policy.runner).__name__ == "TorchScriptRunner"
    assert ts_policy.observation == onnx_policy.observation and ts_policy.action == onnx_policy.action
    for estimate, setpoint, velocity, acceleration in _states(8):
        expected = onnx_policy.act(estimate, setpoint, velocity, acceleration)
        got = ts_policy.act(estimate, setpoint, velocity, acceleration)
        # The same float32 constants and operations: the two runtimes agree to float32 rounding.
        assert got.shape == (4,) and np.allclose(got, expected, atol=1e-5), (got, expected)
    # vehicles/astro_max_base.usda: nexus:hoverThrust = 0.572, the PID's hover command; the fit lands within 0.03.
    level = SimpleNamespace(position=np.array([0.0, 0.0, -2.0]), velocity=np.zeros(3),
                            attitude=np.array([0.0, 0.0, 0.0, 1.0]), rates=np.zeros(3))
    hover = ts_policy.act(level, SimpleNamespace(position=np.array([0.0, 0.0, -2.0]), yaw=0.0))
    assert np.allclose(hover, 0.572, atol=0.03)


def test_torchscript_runner_shares_the_observation_with_the_tensor(shipped_pt, torch):
    policy = PolicyController("/vehicle/controller", shipped_pt)
    observation = np.zeros((1, 18), dtype=np.float32)
    first = policy.runner.run(observation).copy()
    observation[0, 2] = -1.0  # 1 m below the goal (heading frame, z down): every rotor asks for more
    assert (policy.runner.run(observation) > first + 0.05).all()
    # DLPack: the tensor the module sees is the NumPy row itself, not a copy.
    assert torch.from_dlpack(observation).data_ptr() == observation.ctypes.data


def _fly_short(model, device: str = "cpu"):
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig
    from nexus.runtime.startup import start

    flight = build_flight(RunConfig(controller="policy", mission="short", controller_options={"model": str(model)},
                                    estimator="truth"), device)  # the policy's precision: the true state
    start(flight.loop, flight.vehicle.plant)
    estimate = flight.loop.output("estimate")
    done, drift = False, 0.0
    for _ in range(15 * 250):
        done = flight.loop.tick()
        drift = max(drift, float(np.hypot(*estimate.numpy()[0]["position"][:2])))
        if done:
            break
    return flight, done, drift


def test_torchscript_policy_flies_the_short_mission_to_done(shipped_pt, capsys):
    flight, done, drift = _fly_short(shipped_pt)
    stats = flight.vehicle.controller.stats()
    with capsys.disabled():
        print(f"\ntorchscript policy: short mission done={done} at {flight.loop.sim_time:.2f} s sim, drift {drift:.3f} m, "
              f"inference median {stats['inference_us_median']} us")
    # The ONNX policy flies it in 9.15 s (docs/controllers.md); the same weights must too, within the same 12 s.
    assert done and flight.loop.sim_time < 12.0
    assert drift < 0.1  # the mission never leaves the vertical above the start
    assert stats["model"].endswith(".pt") and stats["inferences"] > 1000  # 250 Hz for more than 4 s, armed


@pytest.mark.cuda
def test_torchscript_policy_flies_the_short_mission_on_cuda(shipped_pt, torch):
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    flight, done, _ = _fly_short(shipped_pt, "cuda:0")
    runner = flight.vehicle.controller.runner
    assert runner.device.startswith("cuda") and next(runner.module.buffers()).is_cuda
    assert done and flight.loop.sim_time < 12.0


def test_action_width_mismatch_names_the_extra_file_and_both_widths(torch, tmp_path):
    layout = "position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1"  # 12 values
    path = _module(torch, tmp_path / "m.pt", 12, 3, {"nexus_observation": layout, "nexus_action": "controls:4"})
    with pytest.raises(BuildError, match=rf"policy {tmp_path / 'm.pt'}: nexus_action \(controls:4\) names 4 controls, "
                                         r"but the module's output on a zeros observation gives 3"):
        PolicyController("/vehicle/controller", path)


def test_observation_width_mismatch_is_a_build_error_naming_the_width(torch, tmp_path):
    layout = "position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1"  # 12 values
    path = _module(torch, tmp_path / "m.ts", 10, 4, {"nexus_observation": layout, "nexus_action": "controls:4"})
    with pytest.raises(BuildError, match=r"the module fails on a zeros observation of 12 values \(the width of "
                                         r"nexus_observation\): .*(1x12 and 10x4|shapes)"):
        PolicyController("/vehicle/controller", path)


@pytest.mark.parametrize("extra, needle", [
    ({"nexus_action": "controls:4"}, "its extra files have no 'nexus_observation'"),
    ({"nexus_observation": "rates:3"}, "its extra files have no 'nexus_action'"),
    ({"nexus_observation": "altitude:1", "nexus_action": "controls:4"}, "nexus_observation names 'altitude', which Nexus does not know"),
])
def test_missing_or_bad_extra_file_is_a_build_error(torch, tmp_path, extra, needle):
    path = _module(torch, tmp_path / "m.pt", 3, 4, extra)
    with pytest.raises(BuildError, match=needle):
        PolicyController("/vehicle/controller", path)


def test_unloadable_torchscript_file_is_a_build_error(torch, tmp_path):
    path = tmp_path / "m.pt"
    path.write_bytes(b"not a zip archive")
    with pytest.raises(BuildError, match=rf"policy {path}: torch.jit.load cannot load it"):
        PolicyController("/vehicle/controller", path)


def test_torchscript_without_torch_is_a_build_error_saying_to_install_it(tmp_path, monkeypatch):
    # Runs everywhere: torch is made unimportable whether or not it is installed.
    monkeypatch.setitem(sys.modules, "torch", None)
    path = tmp_path / "policy.pt"
    path.write_bytes(b"\0")  # the file exists; torch is checked before it is read
    with pytest.raises(BuildError, match=rf"policy {path}: a TorchScript policy needs torch: pip install torch"):
        PolicyController("/vehicle/controller", path)
