"""``nexus view RUN`` on a run of many worlds: every world side by side, one of them in full.

All worlds of a run fly from one physical origin; the view draws world w
shifted to its own grid cell, ``(w % cols, w // cols)`` times the spacing
(drawing only: the record is not changed). Every world's base is one instance
of one small marker mesh (an X with a nose, coloured by how the world ended)
in a single batched mesh, so a frame sends one array of N poses however many
worlds there are; only the selected world is drawn with its vehicle's bodies
(Newton's model, as for one vehicle) with its flown and setpoint paths. The
time slider moves all worlds; the **world** number in the panel picks the
selected one.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import warp as wp

from nexus.viz.errors import RunFolderError
from nexus.viz.player import Replay, add_sensor_panels, model_files
from nexus.viz.truth import ENU_TO_NED
from nexus.viz.viewer import FlightView, check_port, load_model
from nexus.viz.worlds import WorldsRun, check_world, grid, load_worlds

#: Smallest spacing of the grid cells [m]; wider when the worlds' paths are (see :func:`spacing`).
MIN_SPACING = 3.0
#: Most (tick, world) poses the view keeps; a longer record is shown at every k-th tick (k as small as fits).
MAX_POSES = 1 << 23
#: Marker colours [0..1 RGB] by exit reason.
MARKER_COLOURS = {"done": (0.25, 0.45, 0.85), "duration": (0.80, 0.70, 0.15), "battery-empty": (0.58, 0.40, 0.74),
                  "failed": (0.90, 0.15, 0.10)}
OTHER_COLOUR = (0.55, 0.55, 0.55)


def marker_colours(reasons: np.ndarray) -> np.ndarray:
    """Each world's marker colour by how it ended [0..1 RGB, (worlds, 3)]; grey for a reason without one."""
    return np.array([MARKER_COLOURS.get(r, OTHER_COLOUR) for r in reasons], dtype=np.float32).reshape(-1, 3)
#: Below the ground: where a marker goes when its world is drawn in full, or has no row yet [m].
HIDDEN_Z = -1000.0


def marker_mesh(span: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """An X of two arms ``span`` [m] tip to tip, a hub and a nose towards body +x: (vertices (n, 3), faces (m, 3))."""
    boxes = [((0.0, 0.0, 0.0), (span, 0.05, 0.03), np.pi / 4), ((0.0, 0.0, 0.0), (span, 0.05, 0.03), -np.pi / 4),
             ((0.0, 0.0, 0.0), (0.18, 0.18, 0.08), 0.0), ((0.17, 0.0, 0.0), (0.18, 0.06, 0.05), 0.0)]
    corners = np.array([[x, y, z] for x in (-0.5, 0.5) for y in (-0.5, 0.5) for z in (-0.5, 0.5)])
    # Outward-facing triangles of the unit box whose corners are numbered x·4 + y·2 + z.
    quads = ((0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3))
    faces = [(a, b, c) for a, b, c, d in quads for a, b, c in ((a, b, c), (a, c, d))]
    vertices, triangles = [], []
    for k, (centre, size, yaw) in enumerate(boxes):
        turn = np.array([[np.cos(yaw), -np.sin(yaw), 0.0], [np.sin(yaw), np.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
        vertices.append((corners * size) @ turn.T + centre)
        triangles.append(np.asarray(faces) + 8 * k)
    return np.concatenate(vertices).astype(np.float32), np.concatenate(triangles).astype(np.int32)


def spacing(run: WorldsRun) -> float:
    """Grid spacing [m]: MIN_SPACING, or wider so that 95% of the worlds' horizontal paths fit a cell (1.2 m spare)."""
    tracks = run.tracks
    counts = np.diff(tracks.start)
    starts = tracks.start[:-1][counts > 0]
    if not len(starts):
        return MIN_SPACING
    xy = tracks.position[:, :2]
    extent = np.maximum.reduceat(xy, starts) - np.minimum.reduceat(xy, starts)
    return max(MIN_SPACING, math.ceil(float(np.percentile(extent.max(axis=1), 95)) + 1.2))


def offsets(worlds: int, step: float, origins: np.ndarray | None = None) -> np.ndarray:
    """What to add to each world's positions to draw it in its cell, world ENU [m], (worlds, 3).

    World w's cell is ``(w % cols, w // cols)`` × ``step``. With ``origins`` (each world's NED origin, (worlds, 3))
    a world that started away from world 0 is drawn with its start on its cell, as world 0's is on cell (0, 0).
    """
    cols, _ = grid(worlds)
    w = np.arange(worlds)
    cells = np.stack([(w % cols) * step, (w // cols) * step, np.zeros(worlds)], axis=1)
    if origins is not None:
        cells[:, :2] -= origins[:, :2] - origins[0, :2]
    return cells.astype(np.float32)


class FleetView(FlightView):
    """The selected world's vehicle (Newton's model) and every world's base as one batched marker mesh."""

    MARKER, BASES = "/worlds/marker", "/worlds/bases"

    def __init__(self, model, offsets_enu: np.ndarray, colours: np.ndarray, host: str = "127.0.0.1",
                 port: int = 8080, label: str = "Nexus"):
        super().__init__(model, host, port, label)
        self.offsets = np.asarray(offsets_enu, dtype=np.float32)
        self.colours = np.asarray(colours, dtype=np.float32)
        self.xforms = np.zeros((len(self.offsets), 7), dtype=np.float32)
        self.xforms[:, 6] = 1.0
        self.show_others = True
        points, faces = marker_mesh()
        self.viewer.log_mesh(self.MARKER, wp.array(points, dtype=wp.vec3), wp.array(faces.ravel(), dtype=wp.int32))

    def show_worlds(self, positions: np.ndarray, quaternions: np.ndarray, present: np.ndarray, selected: int,
                    sim_time: float) -> None:
        """Draw every world's base at ``positions`` (ENU [m], (worlds, 3)) turned by ``quaternions`` ((worlds, 4),
        Warp (x, y, z, w)), shifted to its cell; the selected world with its vehicle instead of a marker.

        ``present`` [bool, (worlds,)]: worlds that have a row at this time (the others are not drawn).
        """
        xforms = self.xforms
        np.add(positions, self.offsets, out=xforms[:, :3])
        xforms[:, 3:] = quaternions
        xforms[~present, 2] = HIDDEN_Z
        pose = xforms[selected].copy()
        xforms[selected, 2] = HIDDEN_Z  # drawn in full below
        self.sim_time = float(sim_time)
        self._joint_q[:7] = pose
        if self.hidden or not present[selected]:
            self._joint_q[2] = HIDDEN_Z
        self._joint_q_device.assign(self._joint_q)
        self._eval_fk(self.model, self._joint_q_device, self.model.joint_qd, self.state)
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state)
        self.viewer.log_instances(self.BASES, self.MARKER, xforms, None, self.colours, None,
                                  hidden=not self.show_others)
        self.viewer.end_frame()


class PickedWorldReplay(Replay):
    """A replay of many worlds with one of them (``selected``) drawn in full: the world picked in the GUI
    (``wanted``) and the "Show other worlds" box (``show_others``, None where there is none) take effect between
    frames, and each frame poses every row shown at its tick. A subclass draws the picked world's paths
    (:meth:`_draw_paths`), points the camera (:meth:`_look_at`) and poses the rows (:meth:`_pose`)."""

    def _changed(self) -> bool:
        changed = False
        if self.wanted != self.selected:
            self.select(self.wanted)
            changed = True
        if self.show_others is not None and self.show_others.value != self.view.show_others:
            self.view.show_others = bool(self.show_others.value)
            changed = True
        return changed

    def sensor_world(self) -> int:
        return self.selected

    def select(self, world: int) -> None:
        """Make ``world`` the one drawn in full, with its paths; point the camera at it."""
        self.selected = self.wanted = world
        self._draw_paths(world)
        self.world_caption.content = self._world_caption(world)
        self._look_at(world)

    def draw(self, row: int) -> None:
        """Pose every row at tick ``row``; a row not yet started (no record at that time) is not drawn."""
        tracks = self.run.tracks
        rows = self.index[row]
        present = (rows >= 0) & (self.first_time <= self.time[row])
        rows = np.maximum(rows, 0)
        self._pose(tracks.position[rows], tracks.quaternion[rows], present, self.time[row])


class WorldsReplay(PickedWorldReplay):
    """The time slider over every world's ticks, a world selector, and the fleet drawn each frame."""

    def __init__(self, run: WorldsRun, view: FleetView, world: int, step: int = 1):
        self.run, self.view = run, view
        self.worlds = run.worlds
        self.notes = list(run.notes)
        tracks = run.tracks
        ticks = tracks.ticks()
        if step > 1:
            ticks = ticks[::step]
            self.notes.append(f"the view shows every {step}th of the {len(tracks.ticks())} recorded ticks "
                              f"({run.worlds} worlds × every tick would not fit its {MAX_POSES} poses)")
        self.time = ticks
        self.index = tracks.rows_at(ticks)  # (ticks, worlds): each world's row shown at each tick
        self.index = self.index.astype(np.int32) if len(tracks.time) < 2**31 else self.index
        first = np.where(np.diff(tracks.start) > 0, tracks.time[np.minimum(tracks.start[:-1], len(tracks.time) - 1)],
                         np.inf)
        self.first_time = first  # a world appears from its first row on
        self.selected = world
        self.wanted = world
        self._controls()

    def _more_controls(self, gui) -> None:
        self.world_number = gui.add_number("world", initial_value=self.selected, min=0, max=self.worlds - 1, step=1)
        self.show_others = gui.add_checkbox("Show other worlds", initial_value=True)
        self.world_caption = gui.add_markdown(self._world_caption(self.selected))

        @self.world_number.on_update
        def _(_event):
            try:
                wanted = int(round(float(self.world_number.value)))
            except (TypeError, ValueError):
                return
            if 0 <= wanted < self.worlds:
                self.wanted = wanted  # applied by the display loop, between frames

    def _world_caption(self, world: int) -> str:
        reasons = self.run.exit_reasons()
        summary = self.run.summary or {}
        line = f"world {world} (0..{self.worlds - 1}): {reasons[world]}"
        if reasons[world] == "done" and "done_time" in summary and np.isfinite(summary["done_time"][world]):
            line += f" at {summary['done_time'][world]:.2f} s"
        if reasons[world] == "failed":
            _, times, _ = self.run.failure_points()
            at = times[np.flatnonzero(self.run.failed() == world)[0]]
            line += f" at {at:.2f} s" if np.isfinite(at) else ""
        if "seed" in summary:
            line += f", seed {summary['seed'][world]}"
        values = self.run.world_values(world)
        if values:
            line += "; " + ", ".join(f"{k} {_short(v)}" for k, v in list(values.items())[:6])
        failed = len(self.run.failed())
        emptied = int(np.sum(reasons == "battery-empty"))
        line += f"  \n{emptied} of {self.worlds} worlds ran out of battery (purple)" if emptied else ""
        return line + (f"  \n{failed} of {self.worlds} worlds failed (red)" if failed else "")

    def _draw_paths(self, world: int) -> None:
        draw_paths(self.view, self.run, world)

    def _look_at(self, world: int) -> None:
        look_at_world(self.view, self.run, world)

    def _pose(self, positions: np.ndarray, quaternions: np.ndarray, present: np.ndarray, sim_time: float) -> None:
        """Every world from its row (one batched mesh) and the selected world's vehicle."""
        self.view.show_worlds(positions, quaternions, present, self.selected, sim_time)


def draw_paths(view: FleetView, run: WorldsRun, world: int) -> None:
    """The selected world's flown path and setpoint path, in its grid cell."""
    tracks = run.tracks
    rows = tracks.rows(world)
    offset = view.offsets[world].astype(np.float64)
    flown = tracks.position[rows].astype(np.float64) + offset
    setpoint = None
    if tracks.setpoint is not None:
        setpoint = tracks.setpoint[rows].astype(np.float64) @ ENU_TO_NED + run.origins[world] + offset
    view.paths(flown if len(flown) > 1 else None, setpoint if setpoint is not None and len(setpoint) > 1 else None)


def world_poses(run: WorldsRun, world: int) -> tuple[np.ndarray, np.ndarray]:
    """World ``world``'s recorded base poses: times (rows,) [s] and (rows, 7) ENU position, (x, y, z, w) quaternion."""
    rows = run.tracks.rows(world)
    return run.tracks.time[rows], np.concatenate([run.tracks.position[rows], run.tracks.quaternion[rows]], axis=1)


def look_at_world(view: FleetView, run: WorldsRun, world: int) -> None:
    rows = run.tracks.rows(world)
    flown = run.tracks.position[rows].astype(np.float64) + view.offsets[world]
    if not len(flown):
        return
    low, high = flown.min(axis=0), flown.max(axis=0)
    view.look_at((low + high) / 2.0, distance=max(4.0, 1.6 * float(np.linalg.norm(high - low))))


def open_worlds_replay(folder: Path, host: str, port: int, world: int | None = None) -> WorldsReplay:
    """Check RUN and ``world``, build the vehicle's model, start the viewer and draw the first frame."""

    run = load_worlds(folder, setpoints=True)
    world = check_world(run.folder, 0 if world is None else world, run.worlds)
    if run.tracks is None:
        raise RunFolderError(f"{run.folder} kept a summary only (record_mode {run.info.get('record_mode', 'summary')!r}"
                             "): there are no paths to replay; `nexus plot` shows its summary, or fly it again "
                             "recording every world's ticks")
    check_port(host, port)  # fail on a busy port before the model takes seconds to build
    model = load_model(*model_files(run.folder, run.info))
    step = max(1, math.ceil(len(run.tracks.ticks()) * run.worlds / MAX_POSES))
    cell = spacing(run)
    where = offsets(run.worlds, cell, run.origins)
    colours = marker_colours(run.exit_reasons())
    view = FleetView(model, where, colours, host, port, label=f"Nexus: {run.folder.name} ({run.worlds} worlds)")
    replay = WorldsReplay(run, view, world, step)
    add_sensor_panels(replay, run.folder, run.info, lambda w: world_poses(run, w),
                      lambda w: view.offsets[w].astype(np.float64))
    draw_paths(view, run, world)
    # The whole grid, from the south-west.
    cols, rows = grid(run.worlds)
    span = np.array([(cols - 1) * cell, (rows - 1) * cell, 0.0])
    centre = run.origins[0] + span / 2.0 + (0.0, 0.0, 1.0)
    view.look_at(centre, distance=max(4.0, 1.3 * float(np.linalg.norm(span)) + 3.0))
    replay.frame(0.0)
    return replay


def _short(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
