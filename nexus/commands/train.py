"""``nexus train``: PPO on a Nexus task over many worlds of one graph, to an ONNX policy (docs/learning.md)."""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import replace
from pathlib import Path

import click
from click.core import ParameterSource

from nexus.core.errors import BuildError
from nexus.core.warp_setup import init_warp
from nexus.gym.evaluate import check_policy, evaluate, write_evaluation
from nexus.gym.swarm_tasks import SWARM_TASKS, swarm_task_named
from nexus.gym.training import TrainConfig, check_resume, train as run_training
from nexus.runtime.config import RunConfig
from nexus.runtime.stopping import StopSignals

#: The option of each TrainConfig field, so an error names what the command line takes (``--worlds 0``, not the
#: Python keyword ``worlds=0``).
OPTIONS = {"task": "--task", "worlds": "--worlds", "steps": "--steps", "seed": "--seed", "action": "--action",
           "policy_hz": "--policy-hz", "noise": "--noise", "vary": "--vary", "vehicle": "--vehicle",
           "shards": "--shards", "vehicles": "--vehicles", "spacing": "--spacing",
           "goal_gain": "--goal-gain", "goal_fade": "--goal-fade", "goal_fade_power": "--goal-fade-power",
           "score_every": "--score-every", "score_episodes": "--score-episodes", "max_log_std": "--max-log-std",
           "max_learning_rate": "--max-learning-rate", "episode_s": "--episode-s"}
#: The swap's evaluation: worlds flown at once, and episodes each flies in turn (256 episodes).
SWAP_EVALUATION_WORLDS, SWAP_EVALUATION_EPISODES = 64, 4
#: The same for the evaluation's settings (:func:`nexus.gym.evaluate.check_policy`).
EVALUATE_OPTIONS = {"policy": "--evaluate-only", "action": "--action", "policy_hz": "--policy-hz"}


@click.command()
@click.option("--task", default="hover", show_default=True,
              help="hover, waypoint or track (docs/learning.md), or swap: K vehicles a world swap ends of their line, "
                   "one policy shared by all (docs/fleets.md).")
@click.option("--worlds", type=int, default=64, show_default=True, help="Worlds flown at once in one graph.")
@click.option("--steps", type=float, default=2e6, show_default=True, help="Environment steps in all (all worlds).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder: curve.csv, curve.png, checkpoint.pt, policy.onnx (the last policy), policy_best.onnx and "
                   "best.json (the best checkpoint's by the curve's mean return), train.json.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the worlds' starts and of PPO.")
@click.option("--action", default="ctbr", show_default=True,
              help="ctbr (thrust and body rates), motors, or velocity (a velocity and yaw rate the vehicle's PID "
                   "cascade flies).")
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
@click.option("--vehicles", type=int, default=4, show_default=True, help="With --task swap: vehicles in each world.")
@click.option("--spacing", type=float, default=2.0, show_default=True,
              help="With --task swap: distance between neighbours of the line [m].")
@click.option("--vehicle-contact/--no-vehicle-contact", default=True, show_default=True,
              help="With --task swap: the vehicles of a world share one physics world (they collide and blow on "
                   "each other), or each flies in its own (a collision is still counted by distance).")
@click.option("--goal-gain", type=float, default=0.0, show_default=True,
              help="With --task swap --action velocity: the policy's velocity corrects a go-to-goal law of this gain "
                   "[1/s] (action 0 flies straight at the goal; docs/fleets.md); 0: the policy's velocity alone.")
@click.option("--goal-fade", type=float, default=0.0, show_default=True,
              help="With --goal-gain: the policy's correction fades to 0 within this distance of the goal [m], so the "
                   "law alone lands the vehicle on it; 0: never.")
@click.option("--goal-fade-power", type=float, default=1.0, show_default=True,
              help="With --goal-fade: the fade's power (1: linear; 2: quadratic, under which the law wins inside "
                   "gain x fade^2 / speed of the goal whatever the correction asks).")
@click.option("--episode-s", type=float, default=8.0, show_default=True,
              help="With --task swap: the episode [s], in training and in the evaluation, whose bar is scored at its "
                   "last step (every vehicle within 0.2 m of its goal, no collision).")
@click.option("--score-every", type=float, default=0.0, show_default=True,
              help="With --task swap: every this many environment steps (at the next checkpoint) score the policy on "
                   "the bar itself and keep the best as OUT/policy_bar.onnx (bar.csv, bar.json; docs/fleets.md); "
                   "0: never.")
@click.option("--score-episodes", type=int, default=64, show_default=True,
              help="With --score-every: the episodes of each score (one a world, flown at once, from a seed that "
                   "neither the training nor the final evaluation draws).")
@click.option("--max-log-std", type=float, default=1.0, show_default=True,
              help="The largest log standard deviation of the policy's actions (its exploration): 1 lets it grow to "
                   "2.7 times the action's range; the curve's action_std column shows where it is (docs/learning.md).")
@click.option("--max-learning-rate", type=float, default=1e-2, show_default=True,
              help="The largest learning rate: PPO starts at 3e-4 and skrl's KL-adaptive rule raises it while the "
                   "updates move the policy little (the curve's learning_rate column), up to this.")
@click.option("--resume", is_flag=True, default=False,
              help="Go on from OUT's checkpoint (a run stopped by Ctrl-C or SIGTERM, or one that finished) up to "
                   "--steps in all; every other option must be the one OUT was trained with.")
@click.option("--evaluate/--no-evaluate", default=True, show_default=True,
              help="After training a hover policy: score it against the success bar; a swap policy: score it and "
                   "the straight-line baseline on 256 episodes (OUT/evaluation.json).")
@click.option("--evaluate-only", type=click.Path(path_type=Path), default=None,
              help="Score this exported hover policy (ONNX) against the success bar into OUT (with --task swap: a "
                   "swap policy and the baseline); train nothing.")
@click.pass_context
def train(ctx, task, worlds, steps, out, seed, action, policy_hz, noise, vary, vehicle, shards, vehicles, spacing,
          vehicle_contact, goal_gain, goal_fade, goal_fade_power, episode_s, score_every, score_episodes,
          max_log_std, max_learning_rate, resume, evaluate, evaluate_only):
    """Train a policy with PPO (skrl) and export it as OUT/policy.onnx.

    Exit status: 0 when trained, 2 for bad input (nothing trained), 130 on Ctrl-C and 143 on SIGTERM (the
    checkpoint, curve and ONNX of the policy so far are kept).
    """

    # Every value is checked before Warp starts, anything is built or OUT is made.
    if not math.isfinite(steps) or steps != int(steps):
        raise BuildError(f"--steps {steps:g}: give a whole number of environment steps, 1 or more (e.g. 2e6)")
    if not math.isfinite(score_every) or score_every != int(score_every):
        raise BuildError(f"--score-every {score_every:g}: give a whole number of environment steps, 0 or more (0: "
                         "never; e.g. 1e6)")
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {out}: a file is there; give a folder (it is made if missing)")
    config = TrainConfig(task=task, worlds=worlds, steps=int(steps), seed=seed, action=action, policy_hz=policy_hz,
                         noise=noise, vary=vary, vehicle=vehicle, shards=shards, vehicles=vehicles, spacing=spacing,
                         vehicle_contact=vehicle_contact, goal_gain=goal_gain, goal_fade=goal_fade,
                         goal_fade_power=goal_fade_power, score_every=int(score_every), score_episodes=score_episodes,
                         max_log_std=max_log_std, max_learning_rate=max_learning_rate, episode_s=episode_s)
    config.check(OPTIONS)
    swarm = task in SWARM_TASKS
    if score_every == 0 and ctx.get_parameter_source("score_episodes") is not ParameterSource.DEFAULT:
        raise BuildError(f"--score-episodes {score_episodes} without --score-every: nothing is scored; give "
                         "--score-every too (e.g. 1e6), or drop --score-episodes")
    if not swarm:
        for name, flag in (("vehicles", "--vehicles"), ("spacing", "--spacing"), ("vehicle_contact", "--vehicle-contact")):
            if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT:
                raise BuildError(f"{flag} with --task {task}: a {task} world flies one vehicle; give --task swap for "
                                 "a fleet, or drop it")
    if evaluate_only is not None and swarm:
        if not evaluate_only.is_file():
            raise BuildError(f"--evaluate-only {evaluate_only}: no such file; give the policy.onnx that "
                             "`nexus train --task swap` wrote")
    elif evaluate_only is not None:
        if task != "hover":
            raise BuildError(f"--evaluate-only with --task {task}: the success bar scores hover policies; drop --task")
        check_policy(evaluate_only, action, policy_hz, EVALUATE_OPTIONS)
    if vary is not None:
        RunConfig(vehicle=vehicle, vary=vary, worlds=worlds).check()
    if resume:
        if evaluate_only is not None:
            raise BuildError("--resume with --evaluate-only: the one trains on, the other trains nothing; drop one")
        check_resume(config, out, OPTIONS)
    init_warp(bool((ctx.obj or {}).get("verbose", False)))  # no banner, no missing-driver line (as `nexus run`)
    _skrl_log_once()
    if evaluate_only is not None:
        with StopSignals():
            if swarm:
                _evaluate_swap(evaluate_only, out, config)
            else:
                _evaluate(evaluate_only, out, action, policy_hz, vehicle)
        return
    with StopSignals():
        last = run_training(config, out, say=lambda text: click.echo(text, err=True), resume=resume).last
    best = ""
    if (out / "best.json").is_file():
        kept = json.loads((out / "best.json").read_text())
        best = f"; the best checkpoint's {out / 'policy_best.onnx'} ({kept['steps']:,} steps, mean return " \
               f"{kept['mean_return']:.2f})"
    if (out / "bar.json").is_file():
        kept = json.loads((out / "bar.json").read_text())
        best += f"; the bar's best {out / 'policy_bar.onnx'} ({kept['steps']:,} steps, {kept['success']} of " \
                f"{kept['episodes']} scoring episodes)"
    click.echo(f"trained: {last.get('steps', 0):,} steps in {last.get('wall_s', 0.0):.0f} s, mean return "
               f"{last.get('mean_return', float('nan')):.2f}; policy {out / 'policy.onnx'}{best}")
    if evaluate and task == "hover":
        with StopSignals():
            _evaluate(out / "policy.onnx", out, action, policy_hz, vehicle)
    if evaluate and swarm:
        with StopSignals():
            bar = out / "policy_bar.onnx"
            _evaluate_swap(out / "policy.onnx", out, config, bar if bar.is_file() else None)


def _evaluate_swap(policy: Path, out: Path, config: TrainConfig, bar: Path | None = None) -> None:
    """Score ``policy`` and the straight-line baseline on the same 256 swap episodes (64 worlds x 4, the vehicles in
    contact, ``config``'s vehicles, spacing, vehicle and episode) into OUT/evaluation.json; ``bar``: the policy the
    bar kept during training (policy_bar.onnx) too."""
    from nexus.gym.swarm_evaluate import compare_swap, evaluate_swap, write_swap_evaluation  # noqa: PLC0415  (reason: loads the multi-agent environment only for the swap)

    settings = dict(worlds=SWAP_EVALUATION_WORLDS, episodes=SWAP_EVALUATION_EPISODES, vehicles=config.vehicles,
                    spacing=config.spacing, vehicle=config.vehicle,
                    task=replace(swarm_task_named(config.task), episode_s=float(config.episode_s)))
    result = compare_swap(policy, say=lambda text: click.echo(text, err=True), **settings)
    if bar is not None:  # the policy the bar kept during training, on the same (held-out) episodes
        result["policy_bar"] = evaluate_swap(bar, say=lambda text: click.echo(text, err=True), **settings)
    out.mkdir(parents=True, exist_ok=True)
    write_swap_evaluation(result, out / "evaluation.json")
    for name, score in result.items():
        click.echo(f"evaluation ({name}): {score['success']} of {score['episodes']} episodes "
                   f"({score['success_rate']:.0%}) with every vehicle within {score['radius_m']} m of its goal at "
                   f"{score['time_s']:g} s and no collision ({score['ended_early']} ended early by a crash or "
                   f"collision, after {score['mean_flown_s']:.2f} s on average; {score['vehicles_reached']:.0%} of "
                   f"the vehicles came within {score['radius_m']} m of their goals at some time)")
    click.echo(f"evaluation: {out / 'evaluation.json'}")


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
