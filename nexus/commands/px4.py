"""``nexus px4``: the group of PX4 SITL helpers (``params``, ``mission``, ``compare``; one module each)."""

from __future__ import annotations

import click


@click.group()
def px4():
    """PX4 SITL helpers: parameters for a vehicle, and a mission commander."""
