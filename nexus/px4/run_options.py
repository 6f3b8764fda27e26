"""What ``nexus run`` does for PX4 beyond the controller's own options: the built-in mission flown from inside
the loop (``--px4-mission``), a PX4 started as instance K (``--px4-instance``), and the ground-station relay.

Registered with the controller (:func:`nexus.control.registry.register`'s ``run_hooks``), so the command
line holds no PX4 knowledge: ``nexus run`` adds :func:`options`, and calls :func:`check` before anything
is written and :func:`start` once the run folder is ready.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click

from nexus.px4.api_link import ApiLinkError, parse_url
from nexus.px4.ground_station import relayed
from nexus.px4.instance import instance_options
from nexus.px4.mission import MissionReport

#: The controller these options belong to (its registered name).
CONTROLLER = "px4"
#: The parameter names of :func:`options`, as ``nexus run`` hands them back.
NAMES = ("px4_mission", "px4_mission_url", "px4_instance")


def options() -> list:
    """``--px4-mission``, ``--px4-mission-url`` and ``--px4-instance`` (click option decorators, in order)."""
    return [
        click.option("--px4-mission", is_flag=True,
                     help="With --controller px4: also fly the takeoff, yaw sweep and landing over MAVLink (a plane: "
                          "its mission uploaded to PX4, from a catapult launch to the landing), each command on a fixed "
                          "sim tick (the clock holds until PX4 has it), and end the run after it."),
        click.option("--px4-mission-url", default="udpin:127.0.0.1:14540", show_default=True,
                     help="Where the mission commander listens for PX4's MAVLink."),
        click.option("--px4-instance", type=click.IntRange(min=0), default=None, metavar="K",
                     help="With --controller px4: fly against PX4 started as `px4 -i K` (TCP 4560+K, MAVLink UDP "
                          "14540+K); with --vehicles N, vehicle k against instance K+k."),
    ]


def check(ctx, run, values: dict):
    """The run's configuration with the ground station and the instance applied, before anything is written;
    ``values`` holds :data:`NAMES`. Refuses (click usage errors) these options with another controller."""
    if run.controller == CONTROLLER:
        run = _ground_station(ctx, run)
    if values["px4_mission"] and run.controller != CONTROLLER:
        raise click.UsageError("--px4-mission needs --controller px4")
    if values["px4_instance"] is not None:
        run, values["px4_mission_url"] = instance_options(ctx, run, values["px4_instance"], values["px4_mission_url"])
    return run


def start(run, values: dict):
    """The run's configuration with the built-in mission flown from inside the loop (``--px4-mission``), and
    what reports it when the run has ended (None without the mission)."""
    if not values["px4_mission"]:
        return run, None
    url = values["px4_mission_url"]
    try:
        parse_url(url)  # a malformed URL is refused before the run starts
    except ApiLinkError as error:
        raise click.BadParameter(str(error), param_hint="--px4-mission-url") from None
    run = replace(run, controller_options=replace(run.controller_options, mission={"url": url}))
    return run, report_mission


def _ground_station(ctx, run):
    """PX4's ground-station relay: ``--px4-gcs off`` (or ``none``) turns it off; paced (``--realtime``), a ground
    station on this machine's QGroundControl port is relayed unless ``--px4-gcs`` says otherwise."""
    given = ctx.get_parameter_source("px4_gcs") == click.core.ParameterSource.COMMANDLINE
    gcs = relayed(run.controller_options.gcs, run.realtime, given)  # a bad address: refused here
    return replace(run, controller_options=replace(run.controller_options, gcs=gcs))


def report_mission(out: Path, info: dict) -> list[str]:
    """The built-in mission's report lines, from run.json's contents ``info``; writes ``out/mission.json`` (with
    several PX4 instances, one report per vehicle under ``vehicles``). None of either when the run stopped before
    PX4 connected (no mission to report)."""
    stats = info.get("controller_stats") or {}
    if not isinstance(stats, dict):
        return []
    if "instances" in stats:  # one PX4 instance per vehicle of the world
        reports = [each.get("mission") for each in stats["instances"]]
        if not all(isinstance(report, dict) for report in reports):
            return []
        (out / "mission.json").write_text(json.dumps({"vehicles": reports}, indent=2, default=str) + "\n")
        return [f"  vehicle {k} (PX4 instance {each['instance']}): {line.strip()}"
                for k, (each, report) in enumerate(zip(stats["instances"], reports)) for line in _lines(report)]
    report = stats.get("mission")
    if not isinstance(report, dict):
        return []
    (out / "mission.json").write_text(json.dumps(report, indent=2, default=str) + "\n")
    return [f"  {line}" for line in _lines(report)]


def _lines(report: dict) -> list[str]:
    fields = {k: v for k, v in report.items() if k in MissionReport.__dataclass_fields__}
    return MissionReport(**fields).lines()
