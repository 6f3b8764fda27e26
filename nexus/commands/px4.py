"""``nexus px4``: the group of PX4 SITL helpers (``params``, ``mission``, ``compare``; one module each, loaded
when that subcommand runs)."""

from __future__ import annotations

import click

from nexus.commands.lazy_group import LazyGroup

#: ``nexus px4``'s subcommands: name -> (module:command, the one-line help ``nexus px4 --help`` shows).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "compare": ("nexus.commands.px4_compare:px4_compare",
                "Where two PX4 flights first differ: the record's first differing tick and, with --ulog, each PX4 "
                "topic's."),
    "mission": ("nexus.commands.px4_mission:px4_mission",
                "Take off, sweep yaw 0 -> +90 -> -90 -> 0 deg, and land, on a running PX4 (no fixed ticks: see "
                "--px4-mission)."),
    "params": ("nexus.commands.px4_params:px4_params",
               "Print PX4_PARAM_<NAME>=value settings derived from the vehicle file."),
}


@click.group(cls=LazyGroup, lazy=SUBCOMMANDS)
def px4():
    """PX4 SITL helpers: parameters for a vehicle, and a mission commander."""
