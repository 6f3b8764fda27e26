"""``nexus px4 mission``: take off, sweep yaw and land on a running PX4 over MAVLink (no fixed ticks)."""

from __future__ import annotations

import click

from nexus.px4.mission import MissionError, Px4Mission


@click.command("mission")
@click.option("--url", default="udpin:127.0.0.1:14540", show_default=True, help="PX4's MAVLink API stream.")
@click.option("--altitude", type=click.FloatRange(min=0.5), default=2.5, show_default=True, help="Takeoff altitude [m].")
@click.option("--hold", "hold_s", type=click.FloatRange(min=0.0), default=4.0, show_default=True,
              help="Hold after takeoff [s, PX4 time].")
@click.option("--yaw-hold", "yaw_hold_s", type=click.FloatRange(min=0.5), default=8.0, show_default=True,
              help="Time at each yaw of the sweep [s, PX4 time].")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1.0), default=600.0, show_default=True,
              help="Give up after this long [s, wall].")
@click.option("--connect-timeout", "connect_timeout_s", type=click.FloatRange(min=0.1), default=30.0,
              show_default=True, help="Give up when PX4 sent nothing to --url this long [s, wall].")
def px4_mission(url, altitude, hold_s, yaw_hold_s, timeout_s, connect_timeout_s):
    """Take off, sweep yaw 0 -> +90 -> -90 -> 0 deg, and land, on a running PX4 (no fixed ticks: see --px4-mission)."""

    mission = Px4Mission(url, altitude=altitude, hold_s=hold_s, yaw_hold_s=yaw_hold_s, timeout_s=timeout_s,
                         connect_timeout_s=connect_timeout_s, say=lambda text: click.echo(text))
    try:
        report = mission.run()
    except MissionError:
        for line in mission.report.lines():
            click.echo(f"  {line}")
        raise
    for line in report.lines():
        click.echo(f"  {line}")
