"""A plane run's series, from its record and files: airspeed, altitude, cross-track error from the mission's
current leg, stall margin, and the touchdown's sink rate and point. A standard VTOL's run (``vtol_phase``) gives the
same by its own mission (:mod:`nexus.control.vtol.mission`): the cross-track from its legs on the wing and in the back
transition, the stall margin on the wing, the touchdown at its landing (the first row of its ``landed`` phase) and
its landing point.

Read by a scenario's plane checks (:mod:`nexus.scenario.plane_checks`, which says what each measure means) and by
a sweep's row figures (:mod:`nexus.sweep.figures`), so both measure a plane the same way. The mission's geometry
is read the way the run read it (:func:`nexus.control.fixed_wing.mission.plane_mission`: the scene's
``NexusPlaneMissionAPI`` prim, else the vehicle file's, else the default), from the files run.json names; the
wing's values and the base's mass from the vehicle file (a world's drawn ``mass`` from run.json's
``world_values``). A record without ``plane_phase`` or ``vtol_phase`` (a multirotor's) gives NaN everywhere.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from nexus.aero.fixed_wing_forces import FIXED_WING_AERO_SPEC
from nexus.control.fixed_wing.air_start import stall_speed
from nexus.control.fixed_wing.mission import DESCENT, FINAL, LOITERING, PHASE_NAMES, ROLLOUT, ROUTE, plane_mission
from nexus.control.vtol import mission as vtol
from nexus.plant.usd_checks import nexus_apis
from nexus.plant.usd_files import open_stage
from nexus.schemas.reader import read_prim

#: Standard gravity [m/s²], for a scene whose physics scene authors no gravity magnitude.
STANDARD_GRAVITY = 9.80665


class PlaneRecord:
    """A plane run's series (each one value per record row), built on first use from a check's :class:`Record`."""

    def __init__(self, ned: np.ndarray, table, info: dict, world: int = 0):
        names = set(table.column_names)
        rows = len(ned)
        self.vtol = "vtol_phase" in names and "plane_phase" not in names
        self.flown = "plane_phase" in names or self.vtol
        kind = "vtol" if self.vtol else "plane"
        #: The phases' names in the record's numbering (a plane's or a VTOL's).
        self.phase_names = vtol.PHASE_NAMES if self.vtol else PHASE_NAMES
        self.phase = table.column(f"{kind}_phase").to_numpy().astype(np.int64) if self.flown else np.zeros(rows, int)
        self.leg = table.column(f"{kind}_leg").to_numpy().astype(np.int64) if f"{kind}_leg" in names else None
        velocity = np.stack([table.column(f"body/base.velocity[{i}]").to_numpy().astype(np.float64)
                             for i in range(3)], axis=1)
        wind = (np.stack([table.column(f"wind[{i}]").to_numpy().astype(np.float64) for i in range(3)], axis=1)
                if "wind[0]" in names else np.zeros_like(velocity))
        self.airspeed = np.linalg.norm(velocity - wind, axis=1)
        self.altitude = -ned[:, 2]
        self.north, self.east = ned[:, 0], ned[:, 1]
        self.info, self.world = info, int(world)
        self.mission = _mission(info, vtol.vtol_mission if self.vtol else plane_mission) if self.flown else None
        self._stall: float | None = None

    def series(self, measure: str) -> np.ndarray:
        nan = np.full(self.airspeed.shape, math.nan)
        if not self.flown:
            return nan
        if measure == "airspeed":
            return self.airspeed
        if measure == "altitude":
            return self.altitude
        if measure == "cross_track":
            return self.vtol_cross_track() if self.vtol else self.cross_track()
        if measure == "stall_margin":  # while airborne on the wing
            margin = self.airspeed / self.stall_speed()
            return np.where(self.phase == vtol.FIXED_WING if self.vtol else self.phase < ROLLOUT, margin, math.nan)
        raise KeyError(measure)

    def in_phases(self, rows: np.ndarray, phases) -> np.ndarray:
        """The rows among ``rows`` whose phase is one of ``phases`` (names of the record's kind: a plane's or a
        VTOL's; another kind's names select no row); none for a record without phases."""
        if not self.flown:
            return rows[:0]
        wanted = [self.phase_names.index(name) for name in phases if name in self.phase_names]
        return rows[np.isin(self.phase[rows], wanted)]

    def vtol_cross_track(self) -> np.ndarray:
        """A VTOL's distance [m] from its leg on the wing and in the back transition (NaN elsewhere): leg 0 from where
        the front transition began, leg i from waypoint i − 1 to i, the last towards the landing point."""
        m = self.mission
        out = np.full(self.airspeed.shape, math.nan)
        flying = (self.phase == vtol.FIXED_WING) | (self.phase == vtol.BACK_TRANSITION)
        began = np.flatnonzero(self.phase == vtol.FRONT_TRANSITION)
        if self.leg is None or not flying.any() or not len(began):
            return out
        here = np.stack([self.north, self.east], axis=1)
        points = np.array([here[began[0]], *m.waypoints, m.land], dtype=np.float64)
        leg = np.clip(self.leg[flying], 0, len(m.waypoints))
        out[flying] = _from_line(here[flying], points[leg], points[leg + 1])
        return out

    def stall_speed(self) -> float:
        if self._stall is None:
            self._stall = _stall_speed(self.info, self.world)
        return self._stall

    def cross_track(self) -> np.ndarray:
        m = self.mission
        out = np.full(self.airspeed.shape, math.nan)
        here = np.stack([self.north, self.east], axis=1)
        points = np.array([(0.0, 0.0), *m.waypoints], dtype=np.float64)
        on_leg = self.phase <= ROUTE
        if self.leg is not None and on_leg.any():
            leg = np.clip(self.leg[on_leg], 0, len(m.waypoints) - 1)
            out[on_leg] = _from_line(here[on_leg], points[leg], points[leg + 1])
        loiter = self.phase == LOITERING
        out[loiter] = np.abs(np.linalg.norm(here[loiter] - np.array(m.loiter_centre), axis=1) - m.loiter_radius)
        landing = m.landing()
        circle = (self.phase >= DESCENT) & (self.phase < FINAL)
        centre = np.array([landing.circle[0], landing.circle[1]], dtype=np.float64)
        out[circle] = np.abs(np.linalg.norm(here[circle] - centre, axis=1) - m.loiter_radius)
        final = self.phase >= FINAL
        entry = np.array([landing.entry[0], landing.entry[1]], dtype=np.float64)
        out[final] = _from_line(here[final], entry[None, :], np.array(m.touchdown)[None, :])
        return out

    def touchdown_row(self) -> int | None:
        """The first row of the roll-out (the touchdown; a VTOL's: of its landed phase), or None when it never
        touched down."""
        last = vtol.LANDED if self.vtol else ROLLOUT
        rolled = np.flatnonzero(self.phase >= last) if self.flown else ()
        return int(rolled[0]) if len(rolled) else None

    def touchdown_point(self) -> float:
        row = self.touchdown_row()
        if row is None:
            return math.nan
        north, east = self.mission.land if self.vtol else self.mission.touchdown
        return math.hypot(self.north[row] - north, self.east[row] - east)

    def touchdown_sink(self) -> tuple[float, int | None]:
        """The hardest touchdown's sink rate [m/s] and its tick (NaN and None: the run did not say or never touched)."""
        crash = self.info.get("crash") or {}
        sink = crash.get("hardest_touchdown_m_s")
        if sink is None or not self.flown or self.touchdown_row() is None:
            return math.nan, None
        return float(sink), crash.get("hardest_touchdown_tick")


def _from_line(here: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Distance [m] of each point from the line through ``start`` and ``end`` (rows, north-east)."""
    along = end - start
    length = np.linalg.norm(along, axis=1)
    length = np.where(length > 0.0, length, 1.0)
    offset = here - start
    return np.abs(along[:, 0] * offset[:, 1] - along[:, 1] * offset[:, 0]) / length


def _files(info: dict) -> tuple[Path, Path]:
    return Path(info["vehicle"]["path"]), Path(info["scene"]["path"])


def _mission(info: dict, build):
    """The mission the run flew, as ``build`` (the plane's or the VTOL's) reads it: the scene's prim, else the
    vehicle file's, else the default."""
    vehicle, scene = _files(info)
    return build(open_stage(vehicle), open_stage(scene), vehicle, scene, controller=None)


def _stall_speed(info: dict, world: int = 0) -> float:
    vehicle, scene = _files(info)
    stage = open_stage(vehicle)
    wing = next((read_prim(p, FIXED_WING_AERO_SPEC, vehicle) for p in stage.Traverse()
                 if FIXED_WING_AERO_SPEC.schema in nexus_apis(p)), None)
    if wing is None:
        return math.nan
    drawn = (info.get("world_values") or [{}] * (world + 1))[world]
    mass = 0.0  # the vehicle's, with the base body's drawn mass in place of its file's
    for prim in stage.Traverse():
        if prim.HasAttribute("physics:mass"):
            base = str(prim.GetPath()).endswith("/body/base") and "mass" in drawn
            mass += float(drawn["mass"]) if base else float(prim.GetAttribute("physics:mass").Get() or 0.0)
    return stall_speed(wing, mass, _gravity(scene))


def _gravity(scene: Path) -> float:
    """The scene's gravity magnitude [m/s²] (standard gravity where its physics scene authors none)."""
    stage = open_stage(scene)  # held: a traversal of a stage no name holds meets expired prims
    for prim in stage.Traverse():
        attribute = prim.GetAttribute("physics:gravityMagnitude")
        if attribute and attribute.HasAuthoredValue():
            value = float(attribute.Get())
            if math.isfinite(value) and value > 0.0:
                return value
    return STANDARD_GRAVITY
