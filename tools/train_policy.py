"""Train the shipped policy: imitate the PID controller on recorded flights, export ONNX.

    .venv/bin/python tools/train_policy.py [--out nexus/control/policy/pid_imitation.onnx] [--torchscript OUT.pt]
    .venv/bin/python tools/train_policy.py --from-onnx nexus/control/policy/pid_imitation.onnx --torchscript OUT.pt

1. Fly the PID (truth estimator, captured, CPU) on the short mission and on
   the figure-eight scene, keeping every airborne tick's estimate and
   setpoint; add three random neighbours of each, and label all of them with
   the command the PID's own kernel gives from rest (its law as a function of
   the state: no integrator, derivative or feed-forward history).
2. Fit a linear policy by least squares (NumPy): the features of
   :mod:`nexus.control.policy.features` (errors and motion in the heading
   frame, tilt, rates, heading error) plus a constant, to the rotors' thrust
   fractions in the allocation's terms, each output on its own features. No
   learning framework is needed.
3. Write it as an ONNX ``Gemm`` followed by the ESC's thrust model inverted,
   with the onnx package's helper API, the layouts in its metadata
   (``nexus:observation``, ``nexus:action``).
4. With ``--torchscript OUT.pt`` (needs torch), write the same policy as a
   TorchScript module too, the layouts as its extra files (``nexus_observation``,
   ``nexus_action``). ``--from-onnx`` takes the weights of an exported ONNX
   model instead of training again.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LAYOUT = ("position_error_heading:3,velocity_heading:3,tilt_heading:2,rates:3,yaw_error:1,setpoint_velocity_heading:3,"
          "setpoint_acceleration_heading:3")
ACTION = "controls:4"


def record(scene: str, mission: str, seconds: float) -> tuple[list[tuple], object]:
    """(estimate, setpoint, controls[:4]) for every armed tick of a PID flight more than 0.3 m above the start."""
    from nexus.runtime.config import RunConfig
    from nexus.runtime.flight_session import FlightSession

    with FlightSession(RunConfig(scene=scene, mission=mission, device="cpu")) as session:  # no record: rows below
        flight = session.flight
        loop = flight.loop
        estimate, setpoint, controls = loop.output("estimate"), loop.output("setpoint"), loop.output("controls")
        rows = []
        previous = setpoint.numpy()[0]["position"].astype(np.float64)
        previous_velocity = np.zeros(3)
        for _ in range(int(seconds * 250)):
            done = loop.tick()
            e, s, c = estimate.numpy()[0], setpoint.numpy()[0], controls.numpy()[0, :4].copy()
            goal_velocity = (s["position"].astype(np.float64) - previous) * 250.0  # the setpoint's change [m/s]
            previous = s["position"].astype(np.float64)
            goal_acceleration = (goal_velocity - previous_velocity) * 250.0
            previous_velocity = goal_velocity
            # Airborne: on the ground the PID's commands follow its integrators.
            if c.max() > 0.0 and e["position"][2] < -0.3:
                rows.append((SimpleNamespace(position=e["position"].copy(), velocity=e["velocity"].copy(),
                                             attitude=e["attitude"].copy(), rates=e["rates"].copy()),
                             SimpleNamespace(position=s["position"].copy(), yaw=float(s["yaw"]), velocity=goal_velocity,
                                             acceleration=goal_acceleration), c))
            if done:
                break
    return rows, flight.vehicle.controller


def perturbed(rows, copies: int, seed: int = 0) -> list[tuple]:
    """``copies`` random neighbours of each recorded (estimate, setpoint): position ±0.3 m, velocity ±0.5 m/s,
    attitude up to about ±6°, rates ±0.4 rad/s, heading goal ±0.2 rad (1σ). Smooth flights alone leave the
    errors and the speeds moving together, and least squares cannot tell their gains apart; the neighbours
    decorrelate them."""
    rng = np.random.default_rng(seed)
    out = []
    for estimate, setpoint, _ in rows:
        for _ in range(copies):
            half = 0.5 * rng.normal(0.0, 0.1, 3)  # small rotation vector [rad], halved for the quaternion
            dq = np.array([*half, 1.0]) / np.linalg.norm([*half, 1.0])
            x, y, z, w = estimate.attitude
            a, b, c, d = dq  # q·dq, both (x, y, z, w)
            attitude = np.array([w * a + x * d + y * c - z * b, w * b - x * c + y * d + z * a,
                                 w * c + x * b - y * a + z * d, w * d - x * a - y * b - z * c])
            out.append((SimpleNamespace(position=estimate.position + rng.normal(0.0, 0.3, 3),
                                        velocity=estimate.velocity + rng.normal(0.0, 0.5, 3),
                                        attitude=attitude, rates=estimate.rates + rng.normal(0.0, 0.4, 3)),
                        SimpleNamespace(position=setpoint.position, yaw=setpoint.yaw + rng.normal(0.0, 0.2),
                                        velocity=setpoint.velocity, acceleration=setpoint.acceleration), None))
    return out


def label(rows, controller) -> list[tuple]:
    """Each (estimate, setpoint) with the command the PID's own kernel gives it: integrators empty, and a
    previous tick that leaves only the setpoint's velocity and acceleration to feed forward (no derivative or
    heading-rate terms): the PID's law as a function of the state and the setpoint's motion."""
    import warp as wp

    from nexus.control.allocation import mix_tables
    from nexus.control.pid import PidParams, PidState, device_params, pid_control
    from nexus.estimation.pose_twist import PoseTwist
    from nexus.guidance.setpoint import Setpoint
    from nexus.plant.controls import CONTROLS_WIDTH

    params = wp.array([device_params(controller.gains, controller.thrust_model_factor, controller.gravity)],
                      dtype=PidParams, device="cpu")
    armed = wp.array([1], dtype=wp.int32, device="cpu")
    controls = wp.zeros((1, CONTROLS_WIDTH), dtype=wp.float32, device="cpu")
    tables, clock = mix_tables(controller.allocation, 1, "cpu"), wp.zeros(1, dtype=wp.int64, device="cpu")
    labelled = []
    for estimate, setpoint, _ in rows:
        e, s = PoseTwist(), Setpoint()
        e.position, e.velocity = wp.vec3(*estimate.position), wp.vec3(*estimate.velocity)
        e.attitude, e.rates = wp.quat(*estimate.attitude), wp.vec3(*estimate.rates)
        s.position, s.yaw = wp.vec3(*setpoint.position), float(setpoint.yaw)
        previous = PidState()
        previous.previous_velocity, previous.previous_rates = e.velocity, e.rates
        previous.previous_goal = wp.vec3(*(np.asarray(setpoint.position) - setpoint.velocity * 0.004))
        previous.previous_goal_velocity = wp.vec3(*(setpoint.velocity - setpoint.acceleration * 0.004))
        previous.previous_yaw_goal, previous.primed = float(setpoint.yaw), 1.0
        state = wp.array([previous], dtype=PidState, device="cpu").reshape((1, 1))  # (worlds, 1), as the engine holds it
        wp.launch(pid_control, dim=1, inputs=[wp.array([e], dtype=PoseTwist, device="cpu"),
                                              wp.array([s], dtype=Setpoint, device="cpu"), armed, params, state,
                                              0.004, tables, clock], outputs=[state, controls], device="cpu")
        labelled.append((estimate, setpoint, controls.numpy()[0, :4].copy()))
    return labelled


#: Which features (indices into LAYOUT) each of the mixer's four outputs may use: a structured fit, so the few
#: smooth flights cannot make up couplings that the PID does not have. Heading frame: x forward, y right, z down.
STRUCTURE = {
    "collective": (2, 5, 14, 17),  # height error, climb rate, the setpoint's climb rate and vertical acceleration
    "roll": (1, 4, 7, 8, 13, 16),  # right error and speed, tilt to the right, roll rate, the setpoint's right speed, acceleration
    "pitch": (0, 3, 6, 9, 12, 15),  # the same forward
    "yaw": (11, 10),  # heading error, yaw rate
}


def fit(rows, layout, thrust_model_factor: float, allocation, ridge: float = 1e-6) -> tuple[np.ndarray, np.ndarray]:
    """Weights (features, 4) and bias (4,) from the features to the rotors' thrust fractions.

    The PID's commands u become thrust fractions t = (1 − f)·u + f·u² (the ESC's thrust model), and those the
    allocation's collective and roll, pitch, yaw torques (the quad-X mix's four orthogonal columns); each of the
    four is fitted by least squares on its own features (:data:`STRUCTURE`) and a constant, then mixed back to the
    four rotors.
    """
    from nexus.control.policy.features import observe

    x = np.array([observe(layout, e, s, s.velocity, s.acceleration) for e, s, _ in rows], dtype=np.float64)
    u = np.array([c for _, _, c in rows], dtype=np.float64)
    f = thrust_model_factor
    thrust = (1.0 - f) * u + f * u * u
    mix = allocation.mix[:, [3, 0, 1, 2]]  # rotor fractions = basis @ mix.T (collective, roll, pitch, yaw)
    basis = thrust @ np.linalg.inv(mix).T  # (n, 4): collective, roll, pitch, yaw
    weights = np.zeros((x.shape[1], 4))
    bias = np.zeros(4)
    for column, (name, features) in enumerate(STRUCTURE.items()):
        a = np.hstack([x[:, features], np.ones((len(x), 1))])
        solution = np.linalg.solve(a.T @ a + ridge * np.eye(a.shape[1]), a.T @ basis[:, column])
        weights[list(features), column], bias[column] = solution[:-1], solution[-1]
        residual = basis[:, column] - a @ solution
        print(f"  {name}: RMS residual {np.sqrt(np.mean(residual**2)):.4f}, weights {np.round(solution, 3)}")
    print(f"fit on {len(x)} ticks")
    return (weights @ mix.T).astype(np.float32), (mix @ bias).astype(np.float32)


def export(weights: np.ndarray, bias: np.ndarray, thrust_model_factor: float, out: Path) -> None:
    """Gemm to thrust fractions, then the ESC's thrust model inverted: u = (√((1 − f)² + 4·f·t) − (1 − f)) / (2·f)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    f = float(thrust_model_factor)
    constants = {"weights": weights, "bias": bias, "four_f": np.float32(4 * f), "linear_sq": np.float32((1 - f) ** 2),
                 "zero": np.float32(0.0), "linear": np.float32(1 - f), "two_f": np.float32(2 * f)}
    nodes = [
        helper.make_node("Gemm", ["observation", "weights", "bias"], ["thrust"]),
        helper.make_node("Max", ["thrust", "zero"], ["thrust_pos"]),
        helper.make_node("Mul", ["thrust_pos", "four_f"], ["scaled"]),
        helper.make_node("Add", ["scaled", "linear_sq"], ["radicand"]),
        helper.make_node("Sqrt", ["radicand"], ["root"]),
        helper.make_node("Sub", ["root", "linear"], ["numerator"]),
        helper.make_node("Div", ["numerator", "two_f"], ["action"]),
    ]
    graph = helper.make_graph(
        nodes, "pid_imitation",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", weights.shape[0]])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, ["batch", weights.shape[1]])],
        [numpy_helper.from_array(np.asarray(v, dtype=np.float32), k) for k, v in constants.items()],
    )
    model = helper.make_model(graph, producer_name="nexus tools/train_policy.py", opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # readable by ONNX Runtime 1.18 and later
    helper.set_model_props(model, {"nexus:observation": LAYOUT, "nexus:action": ACTION,
                                   "nexus:trained_on": "PID, short mission + figure-eight, astro_max_base"})
    onnx.checker.check_model(model)
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def weights_from_onnx(path: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """The weights, bias and thrust model factor of a model :func:`export` wrote (its initializers)."""
    import onnx
    from onnx import numpy_helper

    constants = {t.name: numpy_helper.to_array(t) for t in onnx.load(str(path)).graph.initializer}
    return constants["weights"], constants["bias"], float(constants["two_f"]) / 2.0


def torchscript_module(weights: np.ndarray, bias: np.ndarray, thrust_model_factor: float):
    """The ONNX graph of :func:`export` as a scripted ``nn.Module``, the constants as float32 buffers (the same
    rounding as the ONNX initializers, so the two agree to float32 precision)."""
    import torch

    f = float(thrust_model_factor)

    class PidImitation(torch.nn.Module):
        """thrust = max(observation · weights + bias, 0); action = (√((1 − f)² + 4·f·thrust) − (1 − f)) / (2·f)."""

        def __init__(self):
            super().__init__()
            for name, value in {"weights": weights, "bias": bias, "four_f": 4 * f, "linear_sq": (1 - f) ** 2,
                                "linear": 1 - f, "two_f": 2 * f}.items():
                self.register_buffer(name, torch.from_numpy(np.array(value, dtype=np.float32)))

        def forward(self, observation: torch.Tensor) -> torch.Tensor:
            thrust = torch.clamp(observation @ self.weights + self.bias, min=0.0)
            return (torch.sqrt(thrust * self.four_f + self.linear_sq) - self.linear) / self.two_f

    return torch.jit.script(PidImitation().eval())


def export_torchscript(weights: np.ndarray, bias: np.ndarray, thrust_model_factor: float, out: Path) -> None:
    """:func:`torchscript_module` saved with the layouts as extra files ``nexus_observation`` and ``nexus_action``."""
    import torch

    out.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():  # torch 2.10+ calls TorchScript deprecated; Nexus reads it while torch does
        warnings.simplefilter("ignore", DeprecationWarning)
        module = torchscript_module(weights, bias, thrust_model_factor)
        torch.jit.save(module, str(out), _extra_files={"nexus_observation": LAYOUT, "nexus_action": ACTION})
    print(f"wrote {out} ({out.stat().st_size} bytes)")


def main() -> None:
    from nexus.control.policy.features import FEATURES, parse_layout

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "nexus/control/policy/pid_imitation.onnx")
    parser.add_argument("--torchscript", type=Path, default=None, metavar="OUT.pt",
                        help="also write the policy as a TorchScript module (needs torch)")
    parser.add_argument("--from-onnx", type=Path, default=None, metavar="FILE.onnx",
                        help="with --torchscript: take the weights of this exported model instead of training")
    args = parser.parse_args()
    if args.torchscript is not None:
        try:
            import torch  # noqa: F401
        except ImportError:
            parser.error("--torchscript needs torch: pip install torch (or pip install nexus[torch])")
    if args.from_onnx is not None:
        if args.torchscript is None:
            parser.error("--from-onnx only converts: give --torchscript OUT.pt too")
        export_torchscript(*weights_from_onnx(args.from_onnx), args.torchscript)
        return
    layout = parse_layout(LAYOUT, FEATURES, "layout", "train_policy")
    rows, controller = [], None
    for scene, mission, seconds in (("empty", "short", 12.0), ("figure_eight", "scene", 30.0)):
        flown, controller = record(scene, mission, seconds)
        rows += flown
    rows = label(rows + perturbed(rows, 3), controller)
    factor = controller.thrust_model_factor
    weights, bias = fit(rows, layout, factor, controller.allocation)
    export(weights, bias, factor, args.out)
    if args.torchscript is not None:
        export_torchscript(weights, bias, factor, args.torchscript)


if __name__ == "__main__":
    main()
