"""``nexus optimize``: tune vehicle parameters with Adam on the differentiable rollout, then fly the result.

The rollout (:mod:`nexus.diff`) flies the loss's reference on Featherstone;
each step takes the loss and its gradient and moves the parameters. Adam
works on the logarithm of each parameter (every tuned value is positive), so
a step of ``--lr`` 0.15 changes a gain by about 15 % whatever its scale.

The tuned values go where a vehicle file can take them: a USD layer that
sublayers the vehicle and overrides only the tuned attributes
(``tuned.usda``), plus ``tuned.json``. The starting values get a layer too
(``start.usda``), and both fly the normal captured MuJoCo mission
(``--mission short``), so the report sets the tuned flight's errors next to
the starting values'.

``--window`` truncates back-propagation through time; ``--checkpoint`` keeps
a checkpoint every that many ticks and runs the ticks between them again in
the backward pass (the same gradient with less memory; ``auto``, the default,
does so when keeping every tick would pass ``--memory-budget``).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import click
import numpy as np
import pyarrow.parquet as pq

from nexus.commands.options import LaterChoice, LaterOptions, later, vehicle_and_scene
from nexus.core.errors import BuildError
from nexus.core.warp_setup import init_warp
from nexus.diff import Rollout
from nexus.diff.losses import LOSSES
from nexus.diff.rollout import EAGER_TAPED_RUNS, TAPED_CAPTURE_PAYS_FROM
from nexus.runtime.config import RunConfig
from nexus.runtime.params import parameters
from nexus.runtime.run import run_flight
from nexus.runtime.stopping import StopSignals, stop_reason
from nexus.sweep.overrides import write_overrides

def layer_attributes(rollout, names: list[str], vehicle: str) -> dict[str, object]:
    """``"<prim> <attribute>"`` -> value for each tuned parameter's USD attributes (its current value).

    The attributes are those :mod:`nexus.runtime.params` says the name sets; a vector attribute
    (``nexus:positionP[2]`` of ``pid.kp_z``) is written whole, each component from the rollout.
    """

    table = parameters(vehicle)
    attributes: dict[str, object] = {}
    for name in names:
        for target in table.resolve(name, "gradient").targets:
            key, bracket, _ = target.partition("[")
            if not bracket:
                attributes[key] = float(rollout.get(name))
                continue
            components = []
            while (entry := table.get(f"{key}[{len(components)}]")) is not None:
                components.append(float(rollout.get(entry.aliases[0] if entry.aliases else entry.name)))
            attributes[key] = components
    return attributes


def check_tunable(names: list[str], vehicle: str) -> None:
    """Each name is a gradient parameter a Nexus prim of the vehicle file holds, checked before anything is built.

    Names resolve through :mod:`nexus.runtime.params`: an unknown one gets its one "unknown name" sentence.
    """

    table = parameters(vehicle)
    for name in names:
        try:
            entry = table.resolve(name, "gradient")
        except BuildError as error:
            raise BuildError(f"--params {name}: {error}") from None
        if not any(target.split(" ", 1)[1].startswith("nexus:") for target in entry.targets):
            raise BuildError(f"--params {name}: optimize tunes what a vehicle file holds (pid.*, rotor<i>.kt, "
                             "esc.tau_up, esc.tau_down); differentiate other parameters with nexus.diff.Rollout")


def parse_checkpoint(text: str) -> int | str | None:
    """``--checkpoint``: a whole number of ticks, ``auto`` or ``off``."""
    text = text.strip().lower()
    if text == "auto":
        return "auto"
    if text in ("off", "none"):
        return None
    try:
        every = int(text)
    except ValueError:
        every = 0
    if every < 1:
        raise BuildError(f"--checkpoint {text}: give a whole number of ticks, 1 or more, 'auto' or 'off'")
    return every


def adam(rollout, names: list[str], steps: int, lr: float, echo) -> tuple[list[dict], KeyboardInterrupt | None]:
    """Adam on log(parameter): one row per step (loss, gradient norm, values) before each update, and the stop
    (Ctrl-C or SIGTERM, :mod:`nexus.runtime.stopping`) that ended the descent early, or None. The rollout is left
    holding the best values measured, stopped or not; a stop before the first step's row is raised."""
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    theta = np.log([rollout.get(n) for n in names])
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    rows = []
    stopped = None
    try:
        for step in range(steps + 1):
            loss, grads = rollout.value_and_gradients(names)
            values = np.exp(theta)
            g = np.array([grads[n] for n in names]) * values  # d loss / d log p = p · d loss / d p
            norm = float(np.linalg.norm(g))
            rows.append({"step": step, "loss": loss, "grad_norm": norm, **dict(zip(names, values.tolist()))})
            done = int(30 * step / max(steps, 1))
            echo(f"[{'#' * done}{' ' * (30 - done)}] step {step:3d}/{steps}  loss {loss:.6g}  |grad| {norm:.3g}  "
                 + "  ".join(f"{n}={x:.4g}" for n, x in zip(names, values)))
            if step == steps or not math.isfinite(loss) or not np.all(np.isfinite(g)):
                break
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            m_hat = m / (1 - beta1 ** (step + 1))
            v_hat = v / (1 - beta2 ** (step + 1))
            theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
            for n, x in zip(names, np.exp(theta)):
                rollout.set(n, float(x))
    except KeyboardInterrupt as stop:  # the rows measured so far are kept
        if not rows:
            raise
        stopped = stop
    best = min(rows, key=lambda row: row["loss"])
    for n in names:
        rollout.set(n, best[n])
    return rows, stopped


def flight_errors(out: Path) -> dict:
    """How the mission went: its end, and the height error [m] while armed (RMS and largest)."""

    info = json.loads((out / "run.json").read_text())
    table = pq.read_table(out / "record.parquet")
    z = table.column("estimate.position[2]").to_numpy()
    goal = table.column("setpoint.position[2]").to_numpy()
    armed = table.column("armed").to_numpy() != 0
    error = np.abs(z - goal)[armed]
    return {"exit_reason": info.get("exit_reason"), "sim_time_s": info.get("sim_time_s"),
            "altitude_rms_m": float(np.sqrt(np.mean(error ** 2))) if error.size else None,
            "altitude_max_m": float(error.max()) if error.size else None}


def fly(vehicle: str, scene: str, out: Path) -> dict:
    """The normal captured MuJoCo mission (short) with ``vehicle``; its errors."""

    run_flight(RunConfig(vehicle=vehicle, scene=scene, mission="short", device="cpu", duration=12.0), out,
               progress=False, overwrite=True)
    return flight_errors(out)


def write_curve(rows: list[dict], out: Path) -> None:
    """The loss per step as CSV and PNG."""
    with open(out / "loss.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    import matplotlib  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415  (reason: matplotlib loads only to draw)

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.semilogy([r["step"] for r in rows], [r["loss"] for r in rows], marker="o")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("loss")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "loss.png", dpi=110)
    plt.close(fig)


def _losses() -> tuple[str, ...]:
    return LOSSES


@click.command(cls=LaterOptions)
@click.option("--params", "params", required=True, help="Comma-separated parameters, e.g. pid.kp_z,pid.kd_z "
              "(nexus params --vehicle V lists those marked gradient).")
@click.option("--loss", type=LaterChoice(_losses), default="altitude",
              show_default=True, help="What the rollout measures (docs/differentiable.md).")
@click.option("--steps", type=click.IntRange(min=1), default=30, show_default=True, help="Adam steps.")
@click.option("--detune", type=click.FloatRange(min=0.0, min_open=True), default=1.0, show_default=True,
              help="Start from the vehicle's values times this factor.")
@click.option("--lr", type=click.FloatRange(min=0.0, min_open=True), default=0.15, show_default=True,
              help="Adam's step on log(parameter).")
@click.option("--duration", type=click.FloatRange(min=0.0, min_open=True), default=2.0, show_default=True,
              help="Rollout length [s].")
@click.option("--window", type=click.IntRange(min=1), default=None,
              help="Truncate back-propagation to windows of this many ticks (default: the whole rollout).")
@click.option("--checkpoint", "checkpoint", default="auto", show_default=True,
              help="Keep a checkpoint every this many ticks and recompute the ticks between them in the backward "
                   "pass (the same gradient, less memory); 'off' keeps every tick; 'auto' checkpoints every "
                   "ceil(sqrt(ticks)) ticks when keeping every tick would pass --memory-budget.")
@click.option("--memory-budget", "memory_budget", type=click.FloatRange(min=0.0, min_open=True), default=None,
              help="Memory [MB] the rollout may hold before --checkpoint auto checkpoints (default: a quarter of "
                   "the memory available).")
@later(vehicle_and_scene())
@click.option("--no-fly", is_flag=True, help="Tune only; do not fly the mission afterwards.")
@click.option("--out", type=click.Path(file_okay=False), required=True, help="Folder for the results.")
@click.pass_context
def optimize(ctx, params, loss, steps, detune, lr, duration, window, checkpoint, memory_budget, vehicle, scene, no_fly,
             out):
    """Tune parameters on the differentiable rollout (Adam), write them as a USD layer, fly the mission."""

    init_warp(bool((ctx.obj or {}).get("verbose", False)))
    names = [n.strip() for n in params.split(",") if n.strip()]
    if not names:
        raise click.UsageError("--params: name at least one parameter, e.g. pid.kp_z")
    out = Path(out)
    # Ctrl-C or SIGTERM during the descent keeps what it found: the curve so far, the best values as the tuned
    # layer and tuned.json (its "stopped" saying why); the mission is then not flown and the command ends 130 / 143.
    with StopSignals() as signals:
        _optimize(signals, names, loss, steps, detune, lr, duration, window, checkpoint, memory_budget, vehicle,
                  scene, no_fly, out)


def _optimize(signals: StopSignals, names, loss, steps, detune, lr, duration, window, checkpoint, memory_budget,
              vehicle, scene, no_fly, out: Path) -> None:
    try:
        check_tunable(names, vehicle)
        every = parse_checkpoint(checkpoint)
        config = RunConfig(vehicle=vehicle, scene=scene, duration=duration, device="cpu", solver="featherstone")
        # steps + 1 taped calls (the last measures the final values): replayed as graphs where that pays.
        rollout = Rollout.from_config(config, loss=loss, window=window, checkpoint=every,
                                      memory_budget=None if memory_budget is None else memory_budget * 1e6,
                                      capture_tape=steps + 1 >= TAPED_CAPTURE_PAYS_FROM)
        ticks = rollout.ticks
        for name in names:
            rollout.slot(name)  # every name resolved above; the rollout holds each
        for name in names:
            rollout.set(name, rollout.get(name) * detune)
        out.mkdir(parents=True, exist_ok=True)
        start = {name: rollout.get(name) for name in names}
        (out / "start").mkdir(exist_ok=True)
        start_vehicle, _ = write_overrides(out / "start", vehicle, scene, layer_attributes(rollout, names, vehicle))
        click.echo(f"nexus optimize: {', '.join(names)} on the {loss} loss, {ticks} ticks, {steps} Adam steps")
        kept = (f"checkpoint every {rollout.checkpoint} ticks" if rollout.checkpoint else "every tick kept")
        click.echo(f"memory: {kept}: {rollout.bytes_held() / 1e6:.2f} MB of arrays ({rollout.bytes_per_tick():,.0f} "
                   f"bytes a tick), about {rollout.memory_estimate() / 1e6:.0f} MB with their objects and the tape "
                   f"(every tick kept: {rollout.full_bytes / 1e6:.2f} MB, about {rollout.full_memory / 1e6:.0f} MB)")
        graphs = rollout.graph_memory_estimate()
        if graphs:  # steps count from 0: the step after the eager runs captures, the steps after it replay
            click.echo(f"graphs: the taped rollout and its backward pass are captured at step {EAGER_TAPED_RUNS} and "
                       f"replayed after; about {graphs / 1e6:.0f} MB more")
        rows, stopped = adam(rollout, names, steps, lr, click.echo)
        if stopped is not None:
            signals.close()  # a second stop cannot cut the files written below
        tuned = {name: rollout.get(name) for name in names}
        (out / "tuned").mkdir(exist_ok=True)
        tuned_vehicle, _ = write_overrides(out / "tuned", vehicle, scene, layer_attributes(rollout, names, vehicle))
    except BuildError as error:
        raise click.UsageError(str(error)) from None
    write_curve(rows, out)
    first, best = rows[0]["loss"], min(r["loss"] for r in rows)
    result = {"params": names, "loss": loss, "start": start, "tuned": tuned, "loss_start": first, "loss_tuned": best,
              "layers": {"start": str(start_vehicle), "tuned": str(tuned_vehicle)}, "ticks": ticks,
              "window": window, "checkpoint": rollout.checkpoint, "bytes_held": rollout.bytes_held(),
              "memory_estimate": rollout.memory_estimate()}
    click.echo(f"loss {first:.6g} -> {best:.6g} ({100 * (1 - best / first):.1f} % lower); tuned layer {tuned_vehicle}")
    try:
        if stopped is not None:  # written below, with why it stopped
            result["steps_done"] = rows[-1]["step"]
            click.echo(f"{stop_reason(stopped)} after step {rows[-1]['step']} of {steps}: the best values so far are "
                       f"the tuned layer; the mission was not flown", err=True)
            raise stopped
        if not no_fly:
            result["flight_start"] = fly(start_vehicle, scene, out / "flight_start")
            result["flight_tuned"] = fly(tuned_vehicle, scene, out / "flight_tuned")
            for label in ("start", "tuned"):
                f = result[f"flight_{label}"]
                click.echo(f"{label:5s} values, MuJoCo short mission: {f['exit_reason']} at {f['sim_time_s']:.2f} s, "
                           f"altitude error RMS {f['altitude_rms_m']:.3f} m, max {f['altitude_max_m']:.3f} m")
    except KeyboardInterrupt as stop:  # in the descent, or in a flight (which keeps its own folder): the tuning kept
        signals.close()
        result["stopped"] = stop_reason(stop)
        (out / "tuned.json").write_text(json.dumps(result, indent=2))
        raise
    (out / "tuned.json").write_text(json.dumps(result, indent=2))
