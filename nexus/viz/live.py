"""``nexus run --view``: the flight drawn in the browser while it flies.

The run calls :meth:`LiveView.update` after each replay of its graphs (with
the sim time). The view draws only when its time budget allows: after a
frame that cost ``c`` seconds of wall time it waits ``c / BUDGET`` before the
next, so drawing takes at most ``BUDGET`` of the loop's wall time whatever
the machine, and the display rate is whatever that leaves (capped at
``MAX_HZ``). The vehicle is drawn from a display copy of its model, loaded
from the same files, so nothing the viewer does can touch the simulated one.
"""

from __future__ import annotations

import time

import numpy as np

from nexus.viz.truth import ENU_TO_NED
from nexus.viz.viewer import FlightView, check_port, load_model

#: Largest share of the loop's wall time the view may take [-].
BUDGET = 0.03
#: The share a paced run's view may take (``--realtime``): the run sleeps most of its wall time, so the view
#: draws at up to MAX_HZ while the pacer keeps up; a run that cannot keep up sees the view's share grow.
PACED_BUDGET = 0.5
#: Highest display rate [Hz].
MAX_HZ = 30.0
#: Redraw the flown path every this many frames (a path is one message of all its segments).
PATH_EVERY = 10
#: ``nexus run``'s names for the view's port and address (``nexus view`` calls them --port and --host).
PORT_OPTION, HOST_OPTION = "--view-port", "--view-host"


class LiveView:
    def __init__(self, flight, host: str = "127.0.0.1", port: int = 8080, budget: float = BUDGET):
        #: The largest share of the loop's wall time the view may take [-] (:data:`BUDGET`, :data:`PACED_BUDGET`).
        self.budget = budget
        plant = flight.vehicle.plant
        self.view = FlightView(load_model(plant.vehicle_path, plant.scene_path), host, port,
                               label="Nexus: live", port_option=PORT_OPTION, host_option=HOST_OPTION)
        self.plant = plant
        self.body = flight.loop.output("body/base")
        try:
            self.setpoint = flight.loop.output("setpoint")
        except KeyError:
            self.setpoint = None
        self.flown: list[np.ndarray] = []
        self.wanted: list[np.ndarray] = []
        self.frames = 0
        self.cost_s = 0.0
        self.next_at = 0.0
        self.framed = False

    @property
    def url(self) -> str:
        return self.view.url

    def update(self, sim_time: float, force: bool = False) -> None:
        """Draw the vehicle's current pose if the budget allows (always with ``force``)."""
        now = time.perf_counter()
        if not force and now < self.next_at:
            return
        pose = np.asarray(self.body.numpy()[0]["pose"], dtype=np.float64)
        self.flown.append(pose[:3])
        if self.setpoint is not None:
            origin = self.plant.ned_origin.numpy()[0].astype(np.float64)
            self.wanted.append(np.asarray(self.setpoint.numpy()[0]["position"], dtype=np.float64) @ ENU_TO_NED + origin)
        if not self.framed:
            self.view.look_at(pose[:3] + np.array([0.0, 0.0, 2.0]), distance=8.0)  # the ground to a 5 m climb
            self.framed = True
        self.view.show(pose, sim_time)
        if self.frames % PATH_EVERY == 0 or force:
            self.view.paths(np.array(self.flown), np.array(self.wanted) if self.wanted else None)
        self.frames += 1
        spent = time.perf_counter() - now
        self.cost_s += spent
        self.next_at = now + max(spent / self.budget, 1.0 / MAX_HZ)

    def close(self) -> None:
        self.view.close()


class LiveWatch:
    """What ``nexus run --view`` hands to ``run_flight(watch=...)``.

    Built before the run (so a busy port fails before anything is written);
    called with the built flight, it starts the viewer, says where, and returns
    the :class:`LiveView` the run updates. :meth:`close` draws nothing more and
    stops the server.
    """

    def __init__(self, host: str, port: int, say=print, budget: float = BUDGET):
        self.host, self.port, self.say = host, check_port(host, port, PORT_OPTION, HOST_OPTION), say
        self.budget = budget
        self.live: LiveView | None = None
        self.wall_started = 0.0

    def __call__(self, flight) -> LiveView:
        self.live = LiveView(flight, self.host, self.port, self.budget)
        self.say(f"live view at {self.live.url}")
        self.wall_started = time.perf_counter()
        return self.live

    def close(self) -> str | None:
        """Stop the server; returns a line on what the view cost (None if it never started)."""
        if self.live is None:
            return None
        wall = max(time.perf_counter() - self.wall_started, 1e-9)
        live, self.live = self.live, None
        live.close()
        return (f"live view: {live.frames} frames in {wall:.2f} s ({live.frames / wall:.1f} Hz), drawing took "
                f"{100.0 * live.cost_s / wall:.1f}% of the run's wall time")
