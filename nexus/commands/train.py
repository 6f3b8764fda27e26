"""``nexus train``: PPO on a Nexus task over many worlds of one graph, to an ONNX policy (docs/learning.md)."""

from __future__ import annotations

from pathlib import Path

import click


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
              help="Variation file (TOML): each world's values, drawn once (docs/worlds.md).")
@click.option("--vehicle", default="astro_max_base", show_default=True, help="Vehicle name or .usda path.")
@click.option("--evaluate/--no-evaluate", default=True, show_default=True,
              help="After training a hover policy: score it against the success bar (OUT/evaluation.json).")
@click.option("--evaluate-only", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Score this exported hover policy (ONNX) against the success bar into OUT; train nothing.")
def train(task, worlds, steps, out, seed, action, policy_hz, noise, vary, vehicle, evaluate, evaluate_only):
    """Train a policy with PPO (skrl) and export it as OUT/policy.onnx.

    Exit status: 0 when trained, 2 for bad input (nothing trained), 130 on Ctrl-C and 143 on SIGTERM (the
    checkpoint, curve and ONNX of the policy so far are kept).
    """
    from nexus.core.errors import BuildError
    from nexus.gym.training import TrainConfig, train as run_training
    from nexus.runtime.stopping import StopSignals

    if steps != int(steps):
        raise BuildError(f"--steps {steps:g}: give a whole number of environment steps")
    config = TrainConfig(task=task, worlds=worlds, steps=int(steps), seed=seed, action=action, policy_hz=policy_hz,
                         noise=noise, vary=vary, vehicle=vehicle)
    config.check()
    if vary is not None:
        from nexus.runtime.flight import RunConfig

        RunConfig(vehicle=vehicle, vary=vary, worlds=worlds).check()
    if evaluate_only is not None:
        _evaluate(evaluate_only, out, action, policy_hz)
        return
    with StopSignals():
        last = run_training(config, out, say=lambda text: click.echo(text, err=True)).last
    click.echo(f"trained: {last.get('steps', 0):,} steps in {last.get('wall_s', 0.0):.0f} s, mean return "
               f"{last.get('mean_return', float('nan')):.2f}; policy {out / 'policy.onnx'}")
    if evaluate and task == "hover":
        with StopSignals():
            _evaluate(out / "policy.onnx", out, action, policy_hz)


def _evaluate(policy: Path, out: Path, action: str, policy_hz: float) -> None:
    """Score ``policy`` against the hover bar (64 episodes, noise on) into OUT/evaluation.json."""
    from nexus.gym.evaluate import evaluate, write_evaluation

    out.mkdir(parents=True, exist_ok=True)
    result = evaluate(policy, action=action, policy_hz=policy_hz)
    write_evaluation(result, out / "evaluation.json")
    verdict = "meets" if result["passed"] else "misses"
    click.echo(f"evaluation: {result['share']:.0%} of {result['worlds']} episodes within {result['rms_bar_m']} m RMS "
               f"over {result['hold_s']:g} s (median {result['rms_median_m']:.3f} m, {result['ended_early']} ended "
               f"early): {verdict} the bar (90 %); {out / 'evaluation.json'}")
