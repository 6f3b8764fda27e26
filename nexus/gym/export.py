"""The trained policy as ONNX: the frozen observation scaler, the policy network's mean action, the action map.

Written node by node with ``onnx.helper`` from the weights (no exporter, no
onnxscript). The metadata states what ``nexus run --controller policy`` needs
to fly it through the same observation pipeline at the same rate:
``nexus:observation`` (the task's layout), ``nexus:action`` (``ctbr:4``: the
CTBR action in [-1, 1]; ``controls:N``: ESC commands, mapped from [-1, 1] to
[0, 1] inside the graph), ``nexus:policy_hz`` and ``nexus:tick_hz``; for
``ctbr:4`` also its scaling, ``nexus:ctbr_hover_thrust`` (the trained
vehicle's hover thrust fraction) and ``nexus:ctbr_max_rates`` (the rates
[rad/s] at ±1), which ``nexus run`` and ``--px4-offboard-policy`` read
(:class:`nexus.control.policy.features.CtbrScaling`); ``velocity:4`` (a velocity in the heading frame and a yaw
rate, :mod:`nexus.control.velocity_action`) with its ``nexus:velocity_limits``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nexus.control.policy.features import CTBR_LAYOUT, CtbrScaling
from nexus.control.velocity_action import VELOCITY_LAYOUT, VELOCITY_LIMITS, VelocityScaling
from nexus.gym.agent import MAX_RATES


def policy_arrays(agent) -> dict:
    """The scaler's mean, scale and clip, and the policy MLP's layers (weight, bias, activation after)."""
    import torch  # noqa: PLC0415  (reason: torch, of the learn extra, loads only for a policy)

    scaler = agent._observation_preprocessor
    mean = scaler.running_mean.float().cpu().numpy()
    std = torch.sqrt(scaler.running_variance.float()).cpu().numpy() + np.float32(scaler.epsilon)
    layers = []
    modules = list(agent.models["policy"].net)
    for i, module in enumerate(modules):
        if isinstance(module, torch.nn.Linear):
            after = modules[i + 1] if i + 1 < len(modules) else None
            layers.append((module.weight.detach().cpu().numpy().T.astype(np.float32),
                           module.bias.detach().cpu().numpy().astype(np.float32),
                           "tanh" if isinstance(after, torch.nn.Tanh) else None))
    return {"mean": mean.astype(np.float32), "std": std.astype(np.float32), "clip": float(scaler.clip_threshold),
            "layers": layers}


def export_onnx(agent, env, path: Path, config, extra: dict[str, str] | None = None) -> Path:
    """Write ``path``: normalise, clip, MLP, and (motor actions) the map to [0, 1]; ``extra`` adds metadata keys
    (a multi-agent policy's ``nexus:vehicles``)."""
    import onnx  # noqa: PLC0415  (reason: onnx loads only to export a policy)
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415  (reason: onnx loads only to export a policy)

    arrays = policy_arrays(agent)
    nodes, inits = [], []

    def constant(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=np.float32), name))
        return name

    nodes.append(helper.make_node("Sub", ["observation", constant("obs_mean", arrays["mean"])], ["centred"]))
    nodes.append(helper.make_node("Div", ["centred", constant("obs_std", arrays["std"])], ["scaled"]))
    nodes.append(helper.make_node("Clip", ["scaled", constant("clip_low", -arrays["clip"]),
                                           constant("clip_high", arrays["clip"])], ["x0"]))
    current = "x0"
    for k, (weight, bias, activation) in enumerate(arrays["layers"]):
        nodes.append(helper.make_node("MatMul", [current, constant(f"w{k}", weight)], [f"m{k}"]))
        nodes.append(helper.make_node("Add", [f"m{k}", constant(f"b{k}", bias)], [f"a{k}"]))
        current = f"a{k}"
        if activation == "tanh":
            nodes.append(helper.make_node("Tanh", [current], [f"t{k}"]))
            current = f"t{k}"
    width = env.action_width
    if env.action_mode == "motors":  # ESC commands in [0, 1], as the policy controller writes them
        nodes.append(helper.make_node("Clip", [current, constant("one_low", -1.0), constant("one_high", 1.0)], ["c"]))
        nodes.append(helper.make_node("Add", ["c", constant("one", 1.0)], ["c1"]))
        nodes.append(helper.make_node("Mul", ["c1", constant("half", 0.5)], ["action"]))
        action_layout = f"controls:{width}"
    else:
        nodes.append(helper.make_node("Identity", [current], ["action"]))
        action_layout = VELOCITY_LAYOUT if env.action_mode == "velocity" else CTBR_LAYOUT
    graph = helper.make_graph(
        nodes, "nexus_policy",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["batch", env.observation_width])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, ["batch", width])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="nexus train")
    model.ir_version = 8
    metadata = {"nexus:observation": env.task.layout, "nexus:action": action_layout,
                "nexus:policy_hz": f"{env.policy_hz:g}", "nexus:tick_hz": f"{env.tick_hz:g}",
                "nexus:task": env.task.name, "nexus:trained_by": "nexus train (skrl PPO)"}
    if action_layout == CTBR_LAYOUT:
        metadata.update(CtbrScaling(env.hover_fraction, MAX_RATES).metadata())
    if action_layout == VELOCITY_LAYOUT:
        metadata.update(VelocityScaling(VELOCITY_LIMITS).metadata())
    metadata.update(extra or {})
    for key, value in metadata.items():
        entry = model.metadata_props.add()
        entry.key, entry.value = key, value
    onnx.checker.check_model(model)
    path = Path(path)
    temporary = path.with_suffix(".onnx.tmp")
    onnx.save(model, str(temporary))
    temporary.replace(path)
    return path
