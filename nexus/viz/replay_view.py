"""``nexus view RUN``: a recorded flight replayed in the browser with a time slider and play/pause.

The server keeps the clock: while playing, sim time advances with wall time
(times the speed chosen), the slider follows, and each displayed frame poses
the vehicle from the record row at that time. Dragging the slider while
paused scrubs the flight.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from nexus.runtime.run_folder import world_count
from nexus.viz.fleet import check_vehicle, is_fleet
from nexus.viz.fleet_view import open_fleet_replay
from nexus.viz.player import Replay, add_sensor_panels, model_files
from nexus.viz.run_data import load_run
from nexus.viz.truth import ENU_TO_NED
from nexus.viz.viewer import FlightView, check_port, load_model
from nexus.viz.worlds import check_world, is_many_worlds
from nexus.viz.worlds_view import open_worlds_replay


def open_replay(folder: Path, host: str, port: int, world: int | None = None, vehicle: int | None = None) -> Replay:
    """Check RUN, build its vehicle's model, start the viewer and draw the paths and the first frame.

    A run of several vehicles a world opens the fleet replay (:mod:`nexus.viz.fleet_view`: every vehicle of the
    world ``world``, the camera following ``vehicle`` when given); a run of several worlds the worlds replay
    (:mod:`nexus.viz.worlds_view`), ``world`` selected (default 0); a one-world run accepts only ``world`` 0, and
    a run of one vehicle a world only ``vehicle`` 0 (its one vehicle, viewed as without it).
    """

    if is_fleet(folder):
        return open_fleet_replay(folder, host, port, world, vehicle)
    if vehicle is not None:
        check_vehicle(Path(folder), vehicle, 1)
    if is_many_worlds(folder):
        return open_worlds_replay(folder, host, port, world)
    run = load_run(folder)
    if world is not None:
        check_world(run.folder, world, world_count(run.info))
    check_port(host, port)  # fail on a busy port before the model takes seconds to build
    model = load_model(*model_files(run.folder, run.info))
    view = FlightView(model, host, port, label=f"Nexus: {run.folder.name}")
    origin = run.ned_origin_enu
    flown = run.vector("body/base.pose", 3)
    setpoint = None
    if run.has("setpoint.position[0]"):
        setpoint = run.vector("setpoint.position", 3) @ ENU_TO_NED + origin  # NED -> ENU, both ways the same swap
    view.paths(flown, setpoint)
    low, high = flown.min(axis=0), flown.max(axis=0)
    view.look_at((low + high) / 2.0, distance=max(3.0, 1.6 * float(np.linalg.norm(high - low))))  # the whole flight
    replay = Replay(run, view)
    add_sensor_panels(replay, run.folder, run.info, lambda world: (replay.time, replay.poses))
    replay.frame(0.0)
    return replay
