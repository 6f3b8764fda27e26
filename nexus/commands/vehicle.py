"""``nexus vehicle new``: a vehicle file from a frame, an arm length and a mass (or a TOML description)."""

from __future__ import annotations

import math
import shlex

import click

from nexus.airframe.build import build_vehicle
from nexus.airframe.sizing import AirframeInput
from nexus.core.errors import BuildError

FRAME_NAMES = ("quad-x", "quad-plus", "hexa-x", "hexa-plus", "octo-x", "x8")  # nexus.airframe.frames.FRAMES

#: Options that size the vehicle, each an :class:`~nexus.airframe.sizing.AirframeInput` field.
SIZING = ("frame", "arm", "mass", "thrust_coefficient", "torque_coefficient", "max_speed", "kv", "voltage",
          "diameter", "tau_up", "tau_down", "thrust_model_factor", "gear_height")


@click.group()
def vehicle() -> None:
    """Make vehicle files."""


@vehicle.command("new")
@click.argument("name")
@click.option("--frame", default=None, help=f"Rotor layout, PX4's motor order: {', '.join(FRAME_NAMES)}.  [default: quad-x]")
@click.option("--arm", type=float, default=None, help="Centre to rotor axis [m].")
@click.option("--mass", type=float, default=None, help="Whole vehicle [kg].")
@click.option("--thrust-coefficient", type=float, default=None, help="kT [N/(rad/s)^2]; default from the propeller size.")
@click.option("--torque-coefficient", type=float, default=None, help="kQ [N m/(rad/s)^2]; default from the propeller size.")
@click.option("--max-speed", type=float, default=None,
              help="Rotor speed at full command [rad/s]; default 80 % of kv·V, else thrust-to-weight 2.")
@click.option("--kv", type=float, default=None, help="Motor velocity constant [rpm/V].")
@click.option("--voltage", type=float, default=None, help="Supply voltage [V].")
@click.option("--diameter", type=float, default=None, help="Propeller diameter [m]; default 90 % of the rotor spacing.")
@click.option("--tau-up", type=float, default=None, help="ESC and motor time constant, speeding up [s].  [default: 0.0125]")
@click.option("--tau-down", type=float, default=None, help="ESC and motor time constant, slowing down [s].  [default: 0.025]")
@click.option("--thrust-model-factor", type=float, default=None, help="PX4's THR_MDL_FAC [-].  [default: 0]")
@click.option("--gear-height", type=float, default=None, help="Base origin above the ground at rest [m]; default arm / 2.")
@click.option("--from", "toml_file", type=click.Path(dir_okay=False), default=None,
              help="A TOML vehicle description (keys: docs/vehicles.md); no sizing options with it.")
@click.option("--out", "out", type=click.Path(dir_okay=False), required=True, help="The vehicle file to write (.usda).")
def new(name, toml_file, out, **options):
    """Write a vehicle file NAME: rotors, ESCs, propellers, sensors and PID gains from a few numbers."""

    given_options = {k: v for k, v in options.items() if v is not None}
    if toml_file is not None:
        if given_options:
            names = ", ".join("--" + k.replace("_", "-") for k in given_options)
            raise BuildError(f"--from {toml_file} describes the whole vehicle; drop {names} or put them in the file")
        given, source = AirframeInput.from_toml(toml_file), toml_file
    else:
        given, source = AirframeInput(**given_options), None
    words = [name] + (["--from", toml_file] if toml_file else [])
    words += [w for k, v in given_options.items() for w in ("--" + k.replace("_", "-"), f"{v:g}" if isinstance(v, float) else v)]
    command = "nexus vehicle new " + shlex.join(words)
    airframe, gains = build_vehicle(name, given, out, source, command)
    click.echo(f"wrote {out}: {len(airframe.rotors)} rotors ({airframe.frame}), {airframe.mass:.4g} kg, "
               f"hover {airframe.hover_speed:.1f} rad/s at command {gains.hover_thrust:.3f}, "
               f"thrust/weight {airframe.thrust_to_weight:.2f}, max tilt {math.degrees(gains.max_tilt):.0f} deg")
    click.echo("PID rate P (roll, pitch, yaw) " + ", ".join(f"{v:.4g}" for v in gains.rate_p))
