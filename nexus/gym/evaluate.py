"""The hover success bar: an exported policy holds within 0.1 m RMS of the target for 5 s, sensor noise on.

Each of ``worlds`` evaluation episodes starts as training does (a start drawn
within 0.5 m of the hover point, seeds the training never used), gets
``settle_s`` to reach the point, then is scored over the next ``hold_s``: the
RMS of the *true* position error (the estimate of the truth estimator, not the
noisy observation the policy sees). An episode that ends early fails. The policy
runs in ONNX Runtime on the same observations, at the same rate.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from nexus.core.errors import BuildError
from nexus.gym.env import NexusVectorEnv, said
from nexus.gym.tasks import TASKS

#: The bar of issue 34: RMS position error [m] over the hold, and the share of episodes that must meet it.
RMS_BAR_M, SHARE_BAR = 0.1, 0.9
#: How the errors of :func:`check_policy` name its settings, as keywords of :func:`evaluate`; ``nexus train`` passes
#: its options instead.
KEYWORDS = {"policy": "policy=", "action": "action=", "policy_hz": "policy_hz="}


def check_policy(policy, action: str = "ctbr", policy_hz: float = 50.0, labels: dict | None = None):
    """Refuse in one line a ``policy`` that cannot be scored against the hover bar, before anything is built: a
    missing file, a file ONNX Runtime cannot load, or a model whose input is not the hover task's observation, whose
    output is not ``action``'s width, or whose metadata names another task, action or rate. Returns the session."""
    import onnxruntime as ort  # noqa: PLC0415  (reason: onnxruntime loads only to run a policy)


    names = {**KEYWORDS, **(labels or {})}
    where = said(names["policy"], str(policy))
    again = "give the policy.onnx that `nexus train --task hover` wrote"
    path = Path(policy)
    if not path.is_file():
        raise BuildError(f"{where}: {'a folder, not a file' if path.is_dir() else 'no such file'}; {again}")
    try:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001  (ONNX Runtime raises its own types for what it cannot load)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BuildError(f"{where}: not an ONNX model ONNX Runtime can load ({first}); {again}") from None
    meta = dict(session.get_modelmeta().custom_metadata_map)
    task = TASKS["hover"]
    if meta.get("nexus:task", "hover") != "hover":
        raise BuildError(f"{where}: it was trained for the {meta['nexus:task']} task (nexus:task); the bar scores "
                         f"hover policies; {again}")
    inputs, outputs = session.get_inputs(), session.get_outputs()
    if len(inputs) != 1 or len(outputs) != 1:
        raise BuildError(f"{where}: it has {len(inputs)} inputs and {len(outputs)} outputs; a policy has one of each "
                         f"(observation in, action out); {again}")
    for kind, tensor in (("input", inputs[0]), ("output", outputs[0])):
        if tensor.type != "tensor(float)" or len(tensor.shape) != 2:
            raise BuildError(f"{where}: its {kind} '{tensor.name}' is {tensor.type} of shape {tensor.shape}; a policy's "
                             f"is float of shape [batch, width]; {again}")
    width = inputs[0].shape[-1]
    if isinstance(width, int) and width != task.observation_width:
        raise BuildError(f"{where}: its input '{inputs[0].name}' takes {width} values, but the hover task observes "
                         f"{task.observation_width} ({task.layout}); {again}")
    declared = meta.get("nexus:action", "")
    trained = next((mode for prefix, mode in (("ctbr", "ctbr"), ("controls", "motors"), ("velocity", "velocity"))
                    if declared.startswith(prefix)), None)
    if trained is not None and trained != action:
        raise BuildError(f"{where}: it was trained with {trained} actions (nexus:action {declared}); pass "
                         f"{said(names['action'], trained)}")
    given = outputs[0].shape[-1]
    if action in ("ctbr", "velocity") and isinstance(given, int) and given != 4:
        meaning = "thrust and three body rates" if action == "ctbr" else "a velocity and a yaw rate"
        raise BuildError(f"{where}: its output '{outputs[0].name}' gives {given} values, but {action} actions are 4 "
                         f"({meaning}); " + again)
    rate = meta.get("nexus:policy_hz")
    try:
        differs = rate is not None and float(rate) != float(policy_hz)
    except ValueError:
        raise BuildError(f"{where}: its metadata nexus:policy_hz is {rate!r}; it must be a rate [Hz]") from None
    if differs:
        raise BuildError(f"{where}: it acts at {float(rate):g} Hz (nexus:policy_hz), not {float(policy_hz):g} Hz; "
                         f"pass {said(names['policy_hz'], float(rate))}")
    return session


def evaluate(policy: Path, worlds: int = 64, seed: int = 100_000, noise: float = 1.0, settle_s: float = 2.0,
             hold_s: float = 5.0, action: str = "ctbr", policy_hz: float = 50.0, vehicle: str = "astro_max_base",
             labels: dict | None = None) -> dict:
    """Fly ``policy`` (an exported ONNX) for one episode in each of ``worlds`` worlds; the scores as a dict.

    A policy that cannot be scored is refused first (:func:`check_policy`; ``labels`` as there)."""

    session = check_policy(policy, action, policy_hz, labels)
    name = session.get_inputs()[0].name
    task = replace(TASKS["hover"], episode_s=settle_s + hold_s + 1.0)
    # The score reads the true position: the truth estimator writes `estimate` (the shipped vehicles declare the
    # EKF, whose estimate carries its own errors); the policy sees that state plus the observation noise.
    env = NexusVectorEnv(num_envs=worlds, task=task, action=action, policy_hz=policy_hz, noise=noise, vehicle=vehicle,
                         estimator="truth")
    try:
        given = session.get_outputs()[0].shape[-1]
        if isinstance(given, int) and given != env.action_width:  # motor commands: one per rotor of the vehicle
            raise BuildError(f"{said({**KEYWORDS, **(labels or {})}['policy'], str(policy))}: its output gives {given} "
                             f"values, but {vehicle} takes {env.action_width} {action} actions; give a policy "
                             "trained on this vehicle")
        estimate = env.loop.output("estimate")
        settle = int(round(settle_s * policy_hz))
        steps = settle + int(round(hold_s * policy_hz))
        obs, _ = env.reset(seed=seed)
        ended = np.zeros(worlds, dtype=bool)
        squared = np.zeros(worlds)
        for k in range(steps):
            actions = session.run(None, {name: obs})[0]
            if action == "motors":  # the ONNX maps to [0, 1]; the environment takes [-1, 1]
                actions = 2.0 * actions - 1.0
            obs, _, terminated, truncated, _ = env.step(actions)
            ended |= terminated | truncated
            if k >= settle:
                error = env.agent.goal.numpy() - estimate.numpy()["position"]
                squared += (error.astype(np.float64) ** 2).sum(axis=1)
        rms = np.sqrt(squared / (steps - settle))
        ok = (~ended) & (rms < RMS_BAR_M)
        return {"policy": str(policy), "worlds": worlds, "seed": seed, "noise": noise, "settle_s": settle_s,
                "hold_s": hold_s, "rms_bar_m": RMS_BAR_M, "share": float(ok.mean()), "passed": bool(ok.mean() >= SHARE_BAR),
                "ended_early": int(ended.sum()), "rms_median_m": float(np.median(rms)),
                "rms_p90_m": float(np.percentile(rms, 90)), "rms_m": [round(float(x), 5) for x in rms]}
    finally:
        env.close()


def write_evaluation(result: dict, path: Path) -> None:
    Path(path).write_text(json.dumps(result, indent=2) + "\n")
