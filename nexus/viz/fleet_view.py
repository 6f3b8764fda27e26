"""``nexus view RUN`` on a run of several vehicles a world (``nexus run --vehicles K``): every vehicle of a world.

The K vehicles of a world fly in one world, so they are drawn in one scene
where they flew: the view builds one Newton model holding the K copies of the
vehicle (as the run built a world of its fleet, :func:`load_fleet_model`) and
poses copy k's base from vehicle k's record rows, each with its own flown
(blue) and setpoint (orange) path. The record names a row's slot by its
``world`` and ``vehicle`` columns (slot ``s`` is vehicle ``s % K`` of world
``s // K``), and run.json's ``ned_origins_enu_m`` holds one NED origin per slot.

With several worlds the worlds stand side by side as in
:mod:`nexus.viz.worlds_view`: each world's grid cell holds its K vehicles at
their own places (the whole world shifted, never its vehicles apart), the
other worlds' vehicles drawn as markers coloured by how each ended; the
**world** number picks the world drawn in full. A run of one vehicle a world
never comes here, and looks as it always did.

``nexus view RUN --vehicle K`` follows vehicle K: every vehicle is still drawn
(they fly together, and a vehicle is watched among its neighbours), but the
camera keeps vehicle K of the selected world at the centre of the view as the
replay plays or is scrubbed, from the south-west, a few line spacings away.
The **Follow vehicle K** box of the Replay panel lets the camera go, and gives
it back.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import warp as wp

from nexus.core.warp_setup import init_warp
from nexus.plant.fleet import DEFAULT_SPACING, FleetLayout
from nexus.plant.loading import load_plant
from nexus.runtime.run_file import partial_note
from nexus.runtime.run_folder import RunFolder, first_world, world_count
from nexus.viz.errors import RunFolderError
from nexus.viz.fleet import check_vehicle, vehicle_count
from nexus.viz.player import model_files
from nexus.viz.run_data import REQUIRED_COLUMNS
from nexus.viz.truth import ENU_TO_NED
from nexus.viz.viewer import FLOWN_COLOUR, SETPOINT_COLOUR, FlightView, check_port, segments, show_guides
from nexus.viz.worlds import POSE, SETPOINT, Tracks, check_world
from nexus.viz.worlds_view import (HIDDEN_Z, MIN_SPACING, PickedWorldReplay, marker_colours, marker_mesh,
                                   offsets)


@dataclass
class FleetRun:
    """A fleet run's paths by slot, and what the view needs to place and colour each vehicle."""

    folder: Path
    #: run.json as written by ``nexus run``.
    info: dict
    worlds: int
    #: Vehicles a world (K).
    vehicles: int
    #: The line's spacing: vehicle k started k x spacing east of vehicle 0 [m].
    spacing: float
    #: Every slot's path: Tracks over slots (slot s = vehicle s % K of world s // K), each in time order.
    tracks: Tracks
    #: Each slot's NED origin, where its base settled at start-up, world ENU [m], (slots, 3).
    origins: np.ndarray
    #: How each slot ended (summary.parquet's ``exit_reason``; ``?`` where it does not say), (slots,).
    exit_reasons: np.ndarray
    #: Lines for the user about what is shown.
    notes: list[str]

    @property
    def slots(self) -> int:
        return self.worlds * self.vehicles

    def slots_of(self, world: int) -> range:
        """The slots of world ``world``'s vehicles, vehicle 0 first."""
        return range(world * self.vehicles, (world + 1) * self.vehicles)


def load_fleet_tracks(folder: Path) -> FleetRun:
    """Read run.json, the record's poses and setpoints by slot and the summary's exit reasons."""
    run = RunFolder(folder).require()
    info = run.info
    worlds, vehicles = world_count(info), vehicle_count(info)
    tracks = read_slot_tracks(run, worlds, vehicles)
    notes = [note] if (note := partial_note(info, len(tracks.ticks()))) else []
    listed = info.get("ned_origins_enu_m")
    if isinstance(listed, list) and len(listed) == worlds * vehicles:
        origins = np.asarray(listed, dtype=np.float64).reshape(-1, 3)
    else:  # each slot's first row (at rest a tick after start-up), as for worlds
        notes.append(f"{run.info_path} has no NED origin per vehicle (ned_origins_enu_m); the setpoint paths are "
                     "drawn from each vehicle's first recorded position")
        first = np.minimum(tracks.start[:-1], len(tracks.time) - 1)
        origins = tracks.position[first].astype(np.float64)
    spacing = float((info.get("options") or {}).get("spacing") or DEFAULT_SPACING)
    return FleetRun(run.path, info, worlds, vehicles, spacing, tracks, origins,
                    slot_exit_reasons(run, worlds, vehicles, first_world(info)), notes)


def read_slot_tracks(run: RunFolder, worlds: int, vehicles: int) -> Tracks:
    """time, base pose and (when recorded) setpoint of every row, grouped by slot; refuses a record whose
    ``world``/``vehicle`` columns do not fit run.json's worlds and vehicles."""
    recorded = run.record_names()
    needed = [*REQUIRED_COLUMNS, "world", "vehicle"]
    absent = [name for name in needed if name not in recorded]
    if absent:
        raise run.lacks(absent)
    names = [*needed, *(name for name in SETPOINT if name in recorded)]
    chunks: dict[str, list[np.ndarray]] = {}
    for table in run.record_parts(columns=names):
        for name in names:
            chunks.setdefault(name, []).append(table.column(name).to_numpy())
    if not sum(len(c) for c in chunks.get("time", [])):
        raise run.no_rows()
    column = {name: np.concatenate(parts) for name, parts in chunks.items()}
    world, vehicle = column["world"].astype(np.int64), column["vehicle"].astype(np.int64)
    if world.min() < 0 or world.max() >= worlds or vehicle.min() < 0 or vehicle.max() >= vehicles:
        raise RunFolderError(f"{run.record_path} has rows of vehicle {int(vehicle.max())} of world "
                             f"{int(world.max())}, but run.json says the run flew {worlds} world(s) of {vehicles} "
                             "vehicles; the record is from another run")
    slot = world * vehicles + vehicle
    order = np.argsort(slot, kind="stable")  # the record is in tick order: each slot's rows stay so
    start = np.zeros(worlds * vehicles + 1, dtype=np.int64)
    np.cumsum(np.bincount(slot, minlength=worlds * vehicles), out=start[1:])

    def stack(names_) -> np.ndarray:
        return np.stack([column[name][order] for name in names_], axis=1).astype(np.float32)

    return Tracks(time=column["time"][order].astype(np.float64), start=start, position=stack(POSE[:3]),
                  quaternion=stack(POSE[3:]), setpoint=stack(SETPOINT) if all(n in column for n in SETPOINT) else None)


def slot_exit_reasons(run: RunFolder, worlds: int, vehicles: int, first: int) -> np.ndarray:
    """Each slot's ``exit_reason`` from summary.parquet's (world, vehicle) rows; ``?`` for a slot it lacks."""
    reasons = np.full(worlds * vehicles, "?", dtype=object)
    if not run.has_summary():
        return reasons
    table = run.summary()
    if not {"world", "vehicle", "exit_reason"} <= set(table.column_names):
        return reasons
    world = table.column("world").to_numpy().astype(np.int64) - first
    vehicle = table.column("vehicle").to_numpy().astype(np.int64)
    for w, v, reason in zip(world, vehicle, table.column("exit_reason").to_pylist(), strict=True):
        if 0 <= w < worlds and 0 <= v < vehicles:
            reasons[w * vehicles + v] = "?" if reason is None else str(reason)
    return reasons


def world_spacing(run: FleetRun) -> float:
    """Grid spacing [m]: MIN_SPACING, or wider so that 95% of the worlds' fleets (all K paths) fit a cell with
    twice the line's spacing to spare (1.2 m at least): worlds stand further apart than a world's vehicles."""
    tracks, extents = run.tracks, []
    for world in range(run.worlds):
        rows = np.concatenate([np.arange(*tracks.rows(s).indices(len(tracks.time))) for s in run.slots_of(world)])
        if len(rows):
            xy = tracks.position[rows, :2]
            extents.append(float((xy.max(axis=0) - xy.min(axis=0)).max()))
    spare = max(1.2, 2.0 * run.spacing)
    return max(MIN_SPACING, math.ceil(float(np.percentile(extents, 95)) + spare)) if extents else MIN_SPACING


def slot_offsets(run: FleetRun, cell: float) -> np.ndarray:
    """What to add to each slot's positions to draw it, world ENU [m], (slots, 3): its world's cell offset (the
    world's vehicle 0 start on its cell), the same for every vehicle of the world; zero with one world."""
    if run.worlds == 1:
        return np.zeros((run.slots, 3), dtype=np.float32)
    leaders = run.origins[:: run.vehicles]  # each world's vehicle 0
    return np.repeat(offsets(run.worlds, cell, leaders), run.vehicles, axis=0)


def load_fleet_model(vehicle: Path, scene: Path, vehicles: int, spacing: float):
    """The Newton model of K copies of the run's vehicle in one world of its scene, built on the CPU as the run
    built a world of its fleet; returns ``(model, base coordinate of each copy)``."""
    init_warp(False)
    plant, _, _ = load_plant(vehicle, scene, "cpu", fleet=FleetLayout(vehicles, spacing, contact=True))
    show_guides(plant.model)
    return plant.model, [plant.base_coord + k * plant.coords_per_world for k in range(vehicles)]


class VehiclesView(FlightView):
    """A world's K vehicles in full (one model of K copies), and the other worlds' vehicles as markers."""

    MARKER, BASES = "/fleet/marker", "/fleet/bases"

    def __init__(self, model, base_coords: list[int], offsets_enu: np.ndarray, colours: np.ndarray,
                 host: str = "127.0.0.1", port: int = 8080, label: str = "Nexus"):
        super().__init__(model, host, port, label)
        self.base_coords = list(base_coords)
        self.vehicles = len(self.base_coords)
        self.offsets = np.asarray(offsets_enu, dtype=np.float32)
        self.colours = np.asarray(colours, dtype=np.float32)
        self.xforms = np.zeros((len(self.offsets), 7), dtype=np.float32)
        self.xforms[:, 6] = 1.0
        self.markers = len(self.offsets) > self.vehicles  # other worlds to draw
        self.show_others = True
        if self.markers:
            points, faces = marker_mesh()
            self.viewer.log_mesh(self.MARKER, wp.array(points, dtype=wp.vec3), wp.array(faces.ravel(), dtype=wp.int32))

    def vehicle_paths(self, flown: list, setpoints: list) -> None:
        """Each vehicle's flown path (blue) and setpoint path (orange), world ENU [m] (None: not drawn)."""
        for k in range(self.vehicles):
            for name, points, colour in (("flown", flown[k], FLOWN_COLOUR), ("setpoint", setpoints[k], SETPOINT_COLOUR)):
                if points is None or len(points) < 2:
                    self.viewer.log_lines(f"/paths/vehicle{k}/{name}", None, None, colour, hidden=True)
                    continue
                starts, ends = segments(points)
                self.viewer.log_lines(f"/paths/vehicle{k}/{name}", wp.array(starts, dtype=wp.vec3),
                                      wp.array(ends, dtype=wp.vec3), colour, width=0.02)

    def show_fleet(self, positions: np.ndarray, quaternions: np.ndarray, present: np.ndarray, world: int,
                   sim_time: float) -> None:
        """Draw every slot's base at ``positions`` (ENU [m], (slots, 3)) turned by ``quaternions`` ((slots, 4),
        Warp (x, y, z, w)), shifted by its world's offset: world ``world``'s K vehicles in full, the others' as
        markers. ``present`` [bool, (slots,)]: slots that have a row at this time (the others are not drawn)."""
        xforms = self.xforms
        np.add(positions, self.offsets, out=xforms[:, :3])
        xforms[:, 3:] = quaternions
        xforms[~present, 2] = HIDDEN_Z
        chosen = slice(world * self.vehicles, (world + 1) * self.vehicles)
        for k, pose in enumerate(xforms[chosen]):
            coord = self.base_coords[k]
            self._joint_q[coord : coord + 7] = pose
            if self.hidden:
                self._joint_q[coord + 2] = HIDDEN_Z
        xforms[chosen, 2] = HIDDEN_Z  # drawn in full above
        self.sim_time = float(sim_time)
        self._joint_q_device.assign(self._joint_q)
        self._eval_fk(self.model, self._joint_q_device, self.model.joint_qd, self.state)
        self.viewer.begin_frame(self.sim_time)
        self.viewer.log_state(self.state)
        if self.markers:
            self.viewer.log_instances(self.BASES, self.MARKER, xforms, None, self.colours, None,
                                      hidden=not self.show_others)
        self.viewer.end_frame()


def follow_distance(run: FleetRun) -> float:
    """How far the camera stands from a followed vehicle [m]: two and a half line spacings (the neighbours one
    spacing away in view), 4 m at least."""
    return max(4.0, 2.5 * run.spacing)


class FleetReplay(PickedWorldReplay):
    """The time slider over every vehicle's ticks, a world selector (several worlds), the fleet drawn each frame;
    with ``followed``, the camera on that vehicle of the selected world."""

    def __init__(self, run: FleetRun, view: VehiclesView, world: int, followed: int | None = None):
        self.run, self.view = run, view
        self.worlds, self.vehicles = run.worlds, run.vehicles
        #: The vehicle index (in its world) the camera follows; None: the camera frames the world and stays.
        self.followed = followed
        self.following = followed is not None
        self.notes = list(run.notes)
        tracks = run.tracks
        self.time = tracks.ticks()
        self.index = tracks.rows_at(self.time)  # (ticks, slots): each slot's row shown at each tick
        self.first_time = np.where(np.diff(tracks.start) > 0,
                                   tracks.time[np.minimum(tracks.start[:-1], len(tracks.time) - 1)], np.inf)
        self.selected = self.wanted = world
        self._controls()

    def _more_controls(self, gui) -> None:
        self.show_others = None  # one world: no others to show
        self.follow = None
        if self.followed is not None:
            self.follow = gui.add_checkbox(f"Follow vehicle {self.followed}", initial_value=True)
        if self.worlds > 1:
            self.world_number = gui.add_number("world", initial_value=self.selected, min=0, max=self.worlds - 1,
                                               step=1)
            self.show_others = gui.add_checkbox("Show other worlds", initial_value=True)

            @self.world_number.on_update
            def _(_event):
                try:
                    wanted = int(round(float(self.world_number.value)))
                except (TypeError, ValueError):
                    return
                if 0 <= wanted < self.worlds:
                    self.wanted = wanted  # applied by the display loop, between frames

        self.world_caption = gui.add_markdown(self._world_caption(self.selected))

    def _world_caption(self, world: int) -> str:
        reasons = self.run.exit_reasons
        ended = ", ".join(f"vehicle {k}: {reasons[s]}" for k, s in enumerate(self.run.slots_of(world)))
        where = f"world {world} (0..{self.worlds - 1})" if self.worlds > 1 else "the world"
        following = f"; following vehicle {self.followed}" if self.followed is not None else ""
        return f"{self.vehicles} vehicles in {where}; {ended}{following}"

    def _changed(self) -> bool:
        changed = super()._changed()
        if self.follow is not None and bool(self.follow.value) != self.following:
            self.following = bool(self.follow.value)
            changed = True
        return changed

    def _draw_paths(self, world: int) -> None:
        draw_fleet_paths(self.view, self.run, world)

    def _look_at(self, world: int) -> None:
        if self.followed is None:
            look_at_fleet(self.view, self.run, world)

    def followed_slot(self) -> int:
        """The slot of the followed vehicle of the selected world."""
        return self.selected * self.vehicles + self.followed

    def sensor_world(self) -> int:
        """The slot whose sensor frames the Sensors panel shows (a frame file counts slots): the followed vehicle
        of the selected world, vehicle 0 when none is followed."""
        return self.selected * self.vehicles + (self.followed or 0)

    def _pose(self, positions: np.ndarray, quaternions: np.ndarray, present: np.ndarray, sim_time: float) -> None:
        """Every vehicle from its row: the selected world's in full, the others' as markers; the camera on the
        followed vehicle where it is drawn."""
        self.view.show_fleet(positions, quaternions, present, self.selected, sim_time)
        if self.following:
            slot = self.followed_slot()
            where = positions[slot].astype(np.float64) + self.view.offsets[slot]
            self.view.look_at(where, distance=follow_distance(self.run))


def draw_fleet_paths(view: VehiclesView, run: FleetRun, world: int) -> None:
    """World ``world``'s vehicles' flown and setpoint paths, shifted as its vehicles are drawn."""
    tracks, flown, setpoints = run.tracks, [], []
    for slot in run.slots_of(world):
        rows, offset = tracks.rows(slot), view.offsets[slot].astype(np.float64)
        flown.append(tracks.position[rows].astype(np.float64) + offset)
        setpoints.append(None if tracks.setpoint is None else
                         tracks.setpoint[rows].astype(np.float64) @ ENU_TO_NED + run.origins[slot] + offset)
    view.vehicle_paths(flown, setpoints)


def look_at_fleet(view: VehiclesView, run: FleetRun, world: int) -> None:
    """Frame all of world ``world``'s paths, from the south-west."""
    tracks = run.tracks
    flown = [tracks.position[tracks.rows(s)].astype(np.float64) + view.offsets[s] for s in run.slots_of(world)]
    flown = np.concatenate(flown)
    if not len(flown):
        return
    low, high = flown.min(axis=0), flown.max(axis=0)
    view.look_at((low + high) / 2.0, distance=max(4.0, 1.6 * float(np.linalg.norm(high - low))))


def open_fleet_replay(folder: Path, host: str, port: int, world: int | None = None,
                      vehicle: int | None = None) -> FleetReplay:
    """Check RUN, ``world`` and ``vehicle`` (the one followed; None: none), build the K-vehicle model, start the
    viewer and draw the first frame."""
    run = load_fleet_tracks(folder)
    world = check_world(run.folder, 0 if world is None else world, run.worlds)
    if vehicle is not None:
        check_vehicle(run.folder, vehicle, run.vehicles)
    check_port(host, port)  # fail on a busy port before the model takes seconds to build
    model, bases = load_fleet_model(*model_files(run.folder, run.info), run.vehicles, run.spacing)
    where = slot_offsets(run, world_spacing(run))
    label = f"Nexus: {run.folder.name} ({run.vehicles} vehicles" + (f" x {run.worlds} worlds)" if run.worlds > 1
                                                                       else ")")
    view = VehiclesView(model, bases, where, marker_colours(run.exit_reasons), host, port, label=label)
    replay = FleetReplay(run, view, world, vehicle)
    if (run.folder / "frames").is_dir():
        replay.notes.append(f"{run.folder / 'frames'}: the fleet view draws no sensor frames (they stay in the "
                            "folder); fly one vehicle alone (`nexus run --world-of RUN:I:K`) to view its sensors")
    draw_fleet_paths(view, run, world)
    look_at_fleet(view, run, world)
    replay.frame(0.0)
    return replay
