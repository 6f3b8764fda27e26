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

#: The bar of issue 34: RMS position error [m] over the hold, and the share of episodes that must meet it.
RMS_BAR_M, SHARE_BAR = 0.1, 0.9


def evaluate(policy: Path, worlds: int = 64, seed: int = 100_000, noise: float = 1.0, settle_s: float = 2.0,
             hold_s: float = 5.0, action: str = "ctbr", policy_hz: float = 50.0) -> dict:
    """Fly ``policy`` (an exported ONNX) for one episode in each of ``worlds`` worlds; the scores as a dict."""
    import onnxruntime as ort  # noqa: PLC0415

    from nexus.gym.env import NexusVectorEnv  # noqa: PLC0415
    from nexus.gym.tasks import TASKS  # noqa: PLC0415

    session = ort.InferenceSession(str(policy), providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    task = replace(TASKS["hover"], episode_s=settle_s + hold_s + 1.0)
    env = NexusVectorEnv(num_envs=worlds, task=task, action=action, policy_hz=policy_hz, noise=noise)
    try:
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
