"""The replay player both views share: the clock and the Replay panel, the sensor panels, the run's files.

``nexus view`` replays one vehicle (:mod:`nexus.viz.replay_view`) or many
worlds side by side (:mod:`nexus.viz.worlds_view`); both are a
:class:`Replay` whose clock, slider and buttons live here, so neither view
imports the other.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from nexus.viz.errors import RunFolderError
from nexus.viz.frames import find_streams
from nexus.viz.frames_view import SensorPanels
from nexus.viz.run_data import RunData
from nexus.viz.viewer import FlightView


#: Frames per second the server sends while playing [Hz].
DISPLAY_HZ = 30.0
SPEEDS = ("0.25", "0.5", "1", "2", "4")


class Replay:
    def __init__(self, run: RunData, view: FlightView):
        self.run, self.view = run, view
        #: Lines for the user about what is shown (a killed run's ticks...).
        self.notes = [run.note] if run.note else []
        self.time = run.time.astype(np.float64)
        self.poses = run.vector("body/base.pose", 7)
        self._controls()

    def _controls(self) -> None:
        """The Replay panel: time slider, Play, Pause, speed, Show vehicle (then :meth:`_more_controls`), caption."""
        view = self.view
        self.t0, self.t1 = float(self.time[0]), float(self.time[-1])
        self.shown_row = -1
        self.playing = False
        gui = view.viewer.server.gui
        with gui.add_folder("Replay", order=-1.0):
            self.slider = gui.add_slider("time [s]", min=self.t0, max=max(self.t1, self.t0 + 1e-3),
                                         step=max(float(np.median(np.diff(self.time))) if len(self.time) > 1 else 0.01,
                                                  1e-3), initial_value=self.t0)
            self.play_button = gui.add_button("Play")
            self.pause_button = gui.add_button("Pause")
            self.speed = gui.add_dropdown("speed", SPEEDS, initial_value="1")
            self.show_vehicle = gui.add_checkbox("Show vehicle", initial_value=True)
            self._more_controls(gui)
            self.phase = gui.add_markdown(self._caption(0))

        @self.play_button.on_click
        def _(_event):
            if self.slider.value >= self.t1:
                self.slider.value = self.t0  # play again from the start
            self.playing = True

        @self.pause_button.on_click
        def _(_event):
            self.playing = False

    def _more_controls(self, gui) -> None:
        """Controls a kind of replay adds to the panel (none for one vehicle)."""

    def _changed(self) -> bool:
        """Whether something besides the row asks for a redraw (nothing for one vehicle)."""
        return False

    def draw(self, row: int) -> None:
        """Pose the vehicle from record row ``row``."""
        self.view.show(self.poses[row], self.time[row])

    def _caption(self, row: int) -> str:
        return f"tick {row + 1} of {len(self.time)}, sim {self.time[row]:.2f} s of {self.t1:.2f} s"

    def row_at(self, sim_time: float) -> int:
        """The last record row at or before ``sim_time`` [s]."""
        return int(np.clip(np.searchsorted(self.time, sim_time, side="right") - 1, 0, len(self.time) - 1))

    def frame(self, wall_dt: float) -> None:
        """Advance the clock by ``wall_dt`` [s] of wall time when playing, and redraw if the row changed."""
        if self.playing:
            target = float(self.slider.value) + wall_dt * float(self.speed.value)
            if target >= self.t1:
                target, self.playing = self.t1, False
            self.slider.value = target
        hidden = not self.show_vehicle.value
        row = self.row_at(float(self.slider.value))
        sensors = getattr(self, "sensors", None)
        if (row != self.shown_row or hidden != self.view.hidden or self._changed()
                or (sensors is not None and sensors.changed())):
            self.view.hidden = hidden
            self.draw(row)
            if sensors is not None:
                sensors.show(float(self.time[row]), self.sensor_world())
            self.phase.content = self._caption(row)
            self.shown_row = row

    def sensor_world(self) -> int:
        """The world whose sensor frames the Sensors panel shows (the only one here)."""
        return 0

    def serve(self, until: float | None = None) -> None:
        """Run the display loop (until Ctrl-C, or ``until`` seconds of wall time)."""
        started = last = time.perf_counter()
        while until is None or time.perf_counter() - started < until:
            now = time.perf_counter()
            self.frame(now - last)
            last = now
            time.sleep(max(0.0, 1.0 / DISPLAY_HZ - (time.perf_counter() - now)))


def add_sensor_panels(replay: Replay, folder: Path, info: dict, poses_for, offset_for=None) -> None:
    """The Sensors folder (camera images, lidar clouds) of a run that kept ray-traced sensor frames; else nothing."""

    problems: list[str] = []
    streams = find_streams(folder, info, problems)
    replay.notes.extend(problems)
    if not streams:
        return

    replay.sensors = SensorPanels(replay.view.viewer.server, streams, poses_for, offset_for)
    replay.notes.extend(replay.sensors.notes)


def model_files(folder: Path, info: dict) -> tuple[Path, Path]:
    """The vehicle and scene files the run flew (run.json); :class:`RunFolderError` when one is gone."""
    vehicle = info.get("vehicle") or {}
    if "path" not in vehicle:
        raise RunFolderError(f"{folder / 'run.json'} names no vehicle file (vehicle.path): the run failed "
                             "before its vehicle was loaded; there is nothing to draw")
    files = Path(vehicle["path"]), Path((info.get("scene") or {}).get("path", "empty"))
    for kind, path in zip(("vehicle", "scene"), files, strict=True):
        if not path.is_file():
            raise RunFolderError(f"{folder / 'run.json'}: the run's {kind} file {path} is gone; the viewer draws "
                                 f"the bodies from it; restore it (or fly the run again)")
    return files
