"""``nexus render-peer``: the render peer process a run starts for its cameras and lidars."""

from __future__ import annotations

import click

from nexus.render.peer import main


@click.command("render-peer")
def render_peer() -> None:
    """Serve a run's render requests on stdin/stdout (a run starts and stops it; see docs/sensors.md).

    It loads its own copy of the run's vehicle and scene, renders each frame
    the run asks for with Newton's ray tracer, and writes it into the shared
    memory the run named. Typed by hand it waits for a request on stdin.
    """

    main()
