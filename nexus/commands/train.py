"""``nexus train``: PPO on a Nexus task over many worlds of one graph, to an ONNX policy (docs/learning.md)."""

from __future__ import annotations

import logging
import math
import os
from pathlib import Path

import click

from nexus.core.errors import BuildError
from nexus.core.warp_setup import init_warp
from nexus.gym.evaluate import check_policy, evaluate, write_evaluation
from nexus.gym.training import TrainConfig, train as run_training
from nexus.runtime.config import RunConfig
from nexus.runtime.stopping import StopSignals

#: The option of each TrainConfig field, so an error names what the command line takes (``--worlds 0``, not the
#: Python keyword ``worlds=0``).
OPTIONS = {"task": "--task", "worlds": "--worlds", "steps": "--steps", "seed": "--seed", "action": "--action",
           "policy_hz": "--policy-hz", "noise": "--noise", "vary": "--vary", "vehicle": "--vehicle",
           "shards": "--shards"}
#: The same for the evaluation's settings (:func:`nexus.gym.evaluate.check_policy`).
EVALUATE_OPTIONS = {"policy": "--evaluate-only", "action": "--action", "policy_hz": "--policy-hz"}


@click.command()
@click.option("--task", default="hover", show_default=True, help="hover, waypoint or track (docs/learning.md).")
@click.option("--worlds", type=int, default=64, show_default=True, help="Worlds flown at once in one graph.")
@click.option("--steps", type=float, default=2e6, show_default=True, help="Environment steps in all (all worlds).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder: curve.csv, curve.png, checkpoint.pt, policy.onnx, train.json.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the worlds' starts and of PPO.")
@click.option("--action", default="ctbr", show_default=True, help="ctbr (thrust and body rates) or motors.")
@click.option("--policy-hz", type=float, default=50.0, show_default=True,
              help="Policy rate [Hz]; must divide the 250 Hz tick into a whole number of ticks.")
@click.option("--noise", type=float, default=1.0, show_default=True, help="Observation noise scale (0: none).")
@click.option("--vary", type=click.Path(dir_okay=False), default=None,
              help="Variation file (TOML, docs/worlds.md): each world draws mass, thrust_scale, drag_scale, "
                   "base_force_x, base_force_y, base_force_z, esc_lag_scale and noise_scale afresh at the start of "
                   "every episode, and its other parameters once, when the environment is built.")
@click.option("--vehicle", default="astro_max_base", show_default=True, help="Vehicle name or .usda path.")
@click.option("--shards", type=int, default=None,
              help="Processes the worlds step in (default: one per core when each gets 16 worlds or more, else 1); "
                   "every world's bits are the same for any count (docs/learning.md).")
@click.option("--evaluate/--no-evaluate", default=True, show_default=True,
              help="After training a hover policy: score it against the success bar (OUT/evaluation.json).")
@click.option("--evaluate-only", type=click.Path(path_type=Path), default=None,
              help="Score this exported hover policy (ONNX) against the success bar into OUT; train nothing.")
@click.pass_context
def train(ctx, task, worlds, steps, out, seed, action, policy_hz, noise, vary, vehicle, shards, evaluate,
          evaluate_only):
    """Train a policy with PPO (skrl) and export it as OUT/policy.onnx.

    Exit status: 0 when trained, 2 for bad input (nothing trained), 130 on Ctrl-C and 143 on SIGTERM (the
    checkpoint, curve and ONNX of the policy so far are kept).
    """

    # Every value is checked before Warp starts, anything is built or OUT is made.
    if not math.isfinite(steps) or steps != int(steps):
        raise BuildError(f"--steps {steps:g}: give a whole number of environment steps, 1 or more (e.g. 2e6)")
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: a file is there; give a folder (it is made if missing)")
    config = TrainConfig(task=task, worlds=worlds, steps=int(steps), seed=seed, action=action, policy_hz=policy_hz,
                         noise=noise, vary=vary, vehicle=vehicle, shards=shards)
    config.check(OPTIONS)
    if evaluate_only is not None:
        if task != "hover":
            raise BuildError(f"--evaluate-only with --task {task}: the success bar scores hover policies; drop --task")
        check_policy(evaluate_only, action, policy_hz, EVALUATE_OPTIONS)
    if vary is not None:
        RunConfig(vehicle=vehicle, vary=vary, worlds=worlds).check()
    init_warp(bool((ctx.obj or {}).get("verbose", False)))  # no banner, no missing-driver line (as `nexus run`)
    _skrl_log_once()
    if evaluate_only is not None:
        with StopSignals():
            _evaluate(evaluate_only, out, action, policy_hz, vehicle)
        return
    with StopSignals():
        last = run_training(config, out, say=lambda text: click.echo(text, err=True)).last
    click.echo(f"trained: {last.get('steps', 0):,} steps in {last.get('wall_s', 0.0):.0f} s, mean return "
               f"{last.get('mean_return', float('nan')):.2f}; policy {out / 'policy.onnx'}")
    if evaluate and task == "hover":
        with StopSignals():
            _evaluate(out / "policy.onnx", out, action, policy_hz, vehicle)


def _skrl_log_once() -> None:
    """skrl's log lines once each, coloured only on a terminal.

    skrl logs through a handler of its own on the ``skrl`` logger, with colour codes in every line, and lets each
    record propagate to the root logger too, where the ``nexus`` command's handler printed it a second time. Here it
    stops at skrl's handler, whose colour codes are dropped when its stream is not a terminal (or ``NO_COLOR`` is
    set): a redirected log reads ``[skrl:INFO] Seed: 0``.
    """
    import skrl  # noqa: PLC0415  (reason: skrl, of the learn extra, loads only to train)

    skrl.logger.propagate = False
    for handler in skrl.logger.handlers:
        stream = getattr(handler, "stream", None)
        terminal = bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")
        if not terminal:
            handler.setFormatter(logging.Formatter("[%(name)s:%(levelname)s] %(message)s"))


def _evaluate(policy: Path, out: Path, action: str, policy_hz: float, vehicle: str) -> None:
    """Score ``policy`` against the hover bar (64 episodes, noise on) into OUT/evaluation.json (OUT is made once the
    score is in, so a policy refused when the environment is built leaves no folder)."""

    result = evaluate(policy, action=action, policy_hz=policy_hz, vehicle=vehicle, labels=EVALUATE_OPTIONS)
    out.mkdir(parents=True, exist_ok=True)
    write_evaluation(result, out / "evaluation.json")
    verdict = "meets" if result["passed"] else "misses"
    click.echo(f"evaluation: {result['share']:.0%} of {result['worlds']} episodes within {result['rms_bar_m']} m RMS "
               f"over {result['hold_s']:g} s (median {result['rms_median_m']:.3f} m, {result['ended_early']} ended "
               f"early): {verdict} the bar (90 %); {out / 'evaluation.json'}")
