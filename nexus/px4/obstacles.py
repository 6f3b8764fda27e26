"""A lidar sweep as PX4's collision prevention takes it: 72 sectors of 5°, sent as eight DISTANCE_SENSORs.

PX4's convention (``src/lib/collision_prevention``: ``CollisionPrevention.cpp``,
``ObstacleMath.cpp``), which every function here follows:

* **Frame.** Body FRD, yaw about the body's down axis: sector ``i`` points at
  yaw ``5·i`` degrees, 0 straight ahead, increasing **clockwise seen from
  above** (90° is right, 270° left); angle offset 0. A sector covers
  ``[5·i − 2.5°, 5·i + 2.5°)`` (``ObstacleMath::get_bin_at_angle`` rounds
  ``yaw / 5``). The lidar's points are FLU (x forward, y left, z up), so
  FLU → FRD flips y and z, and a FLU azimuth ``a`` (counter-clockwise from +x)
  is the FRD yaw ``−a``: the lidar's column at +90° (left) lands in sector 54.
* **Distances** in whole centimetres, as ``OBSTACLE_DISTANCE`` and the
  ``obstacle_distance`` topic hold them: ``min..max`` an obstacle,
  ``max + 1`` "nothing within the maximum range" (:func:`no_obstacle_cm`),
  ``UINT16_MAX`` (:data:`NO_DATA`) "nothing looked this way".
* **Only horizontal returns.** Collision prevention is a horizontal-plane
  map. A ray counts when its elevation is within ``±band`` [rad] of the
  lidar's horizontal plane; its distance is the horizontal one,
  ``hypot(x, y)`` of the point [m], so a wall reads the same in every channel.
  The nearest valid return of a sector wins; a sector whose in-band rays all
  missed (or were invalid) reads ``max + 1``.

PX4's simulator link (``simulator_mavlink``) takes ``DISTANCE_SENSOR`` but not
``OBSTACLE_DISTANCE``, and keeps one uORB instance per sensor id, at most
``ORB_MULTI_MAX_INSTANCES`` (10 in SITL) of them. So the 72 sectors go out as
:data:`MESSAGE_SECTORS` wider ones (:func:`distance_sensor_messages`), each
the nearest of its nine 5° sectors, with its own id, orientation
``MAV_SENSOR_ROTATION_CUSTOM`` and the quaternion of its yaw; a horizontal
field of view of 40° makes PX4 fill exactly those nine sectors (see
:data:`HORIZONTAL_FOV`).
"""

from __future__ import annotations

import math

import numpy as np

from nexus.plant.frames import flu_to_frd_np
from nexus.render.views import lidar_elevations

#: PX4's obstacle map: 72 sectors of 5° (``obstacle_distance.distances`` and CollisionPrevention's BIN_COUNT).
SECTORS = 72
SECTOR_DEG = 360.0 / SECTORS
#: A sector nothing looked into (UINT16_MAX, PX4's "no data").
NO_DATA = 65535
#: Elevation band [rad] of the returns that count: ±5°. A channel at elevation −e sees flat ground at a
#: horizontal h / tan(e) from a lidar h up; at 15° that is 3.7·h (1.1 m for a lidar 0.3 m up on the ground),
#: a ring of "obstacles" around the vehicle, at 5° it is 11.4·h.
DEFAULT_BAND = math.radians(5.0)

#: Messages per sweep: 8 sectors of 45°, nine of PX4's 5° sectors each (72 / 8 = 9, odd, so each is centred on
#: a PX4 sector: 0°, 45°, ... 315°). Eight ids fit simulator_mavlink's 10 uORB instances beside a rangefinder.
MESSAGE_SECTORS = 8
SECTORS_PER_MESSAGE = SECTORS // MESSAGE_SECTORS
#: The ids the eight messages carry (the rangefinder sends id 0).
FIRST_ID = 1
#: Each message's horizontal field of view [rad]: 40°. PX4 fills the sectors from round((yaw − fov/2) / 5) to
#: round((yaw + fov/2) / 5), both included (CollisionPrevention::_addDistanceSensorData): yaw/5 ± 4, nine
#: sectors. 45° would round ±4.5 out to ±5, eleven sectors, overlapping each neighbour by one; in an overlap
#: PX4 keeps whichever message it reads last, not the nearer.
HORIZONTAL_FOV = math.radians((SECTORS_PER_MESSAGE - 1) * SECTOR_DEG)
#: MAVLink: MAV_SENSOR_ROTATION_CUSTOM (orientation from the quaternion) and MAV_DISTANCE_SENSOR_LASER.
ROTATION_CUSTOM = 100
LASER = 0
#: MAVLink's covariance field is a uint8 [cm²]; 255 means unknown.
UNKNOWN_COVARIANCE = 255


def no_obstacle_cm(max_range: float) -> int:
    """The distance [cm] that says "nothing within ``max_range`` [m]": max + 1, as OBSTACLE_DISTANCE defines it."""
    return min(NO_DATA - 1, int(round(100.0 * max_range)) + 1)


def lidar_directions(channels: int, columns: int, vertical_fov: float) -> np.ndarray:
    """Unit ray directions (channels · columns, 3) in the sensor frame FLU, rows (channel, column), top channel
    first, column ``c`` at azimuth 2·pi·c / columns counter-clockwise from +x: the layout of
    :class:`nexus.sensors.lidar.PointCloud`. ``vertical_fov`` [rad] spreads the channels evenly, symmetric about
    the horizontal plane."""

    elevation = lidar_elevations(channels, vertical_fov)[::-1]
    azimuth = 2.0 * np.pi * np.arange(columns) / columns
    rays = np.stack([np.cos(elevation)[:, None] * np.cos(azimuth)[None, :],
                     np.cos(elevation)[:, None] * np.sin(azimuth)[None, :],
                     np.broadcast_to(np.sin(elevation)[:, None], (channels, columns))], axis=-1)
    return rays.reshape(channels * columns, 3)


def frd_yaw_deg(directions_flu) -> np.ndarray:
    """Yaw [deg, 0..360) of each FLU direction (n, 3) in the body FRD frame: clockwise from forward, seen from above."""
    frd = flu_to_frd_np(directions_flu)
    yaw = np.degrees(np.arctan2(frd[..., 1], frd[..., 0]))
    # Rounded to 1e-4° so a ray on a sector edge (a float32 direction is off by ~1e-5°) falls on one side.
    return np.round(yaw, 4) % 360.0


def sector_of(directions_flu) -> np.ndarray:
    """PX4's sector (0..71) of each FLU direction (n, 3): round(yaw / 5) mod 72, yaw FRD [deg]."""
    return (np.floor(frd_yaw_deg(directions_flu) / SECTOR_DEG + 0.5).astype(np.int64)) % SECTORS


def in_band(directions_flu, band: float = DEFAULT_BAND) -> np.ndarray:
    """True for each direction (n, 3) whose elevation is within ±``band`` [rad] of the horizontal plane."""
    d = np.asarray(directions_flu, dtype=np.float64)
    elevation = np.arctan2(d[..., 2], np.hypot(d[..., 0], d[..., 1]))
    return np.abs(elevation) <= band + 1e-9


def scan_sectors(points, valid, directions, *, min_range: float, max_range: float,
                 band: float = DEFAULT_BAND) -> np.ndarray:
    """One world's sweep as PX4's 72 sectors: distances (72,) uint16 [cm], body FRD, sector ``i`` at yaw 5·i°.

    ``points`` (n, 3) [m] and ``valid`` (n,) are one world's rows of a PointCloud (sensor frame FLU);
    ``directions`` (n, 3) the rays they were taken along (the lidar's ``directions``, or
    :func:`lidar_directions`). Rays outside ±``band`` [rad] of elevation are left out. A sector reads the
    nearest horizontal distance ``hypot(x, y)`` of its valid in-band returns, kept inside
    ``(min_range, max_range)`` [m] as PX4 needs it (PX4 drops a reading at or below the minimum and takes one
    at the maximum as "nothing in range"); ``max + 1`` when its in-band rays all missed; :data:`NO_DATA` when
    no in-band ray looks into it.
    """
    return SectorReduction(np.asarray(directions), min_range, max_range, band).sectors(points, valid)


class SectorReduction:
    """:func:`scan_sectors` for one lidar, its rays' sectors and band worked out once (they never change);
    :meth:`sectors` reduces one world's sweep."""

    def __init__(self, directions: np.ndarray, min_range: float, max_range: float, band: float):
        used = in_band(directions, band)
        self.used = used
        self.bins = sector_of(directions)[used]
        looked = np.zeros(SECTORS, dtype=bool)
        looked[self.bins] = True
        self.empty = np.where(looked, no_obstacle_cm(max_range), NO_DATA).astype(np.int64)
        self.low_cm = int(round(100.0 * min_range)) + 1
        self.high_cm = max(self.low_cm, int(round(100.0 * max_range)) - 1)

    def sectors(self, points, valid) -> np.ndarray:
        points = np.asarray(points)[self.used]
        hit = np.asarray(valid, dtype=bool)[self.used]
        out = self.empty.copy()
        horizontal = np.hypot(points[hit, 0].astype(np.float64), points[hit, 1].astype(np.float64))
        cm = np.clip(np.round(100.0 * horizontal).astype(np.int64), self.low_cm, self.high_cm)
        np.minimum.at(out, self.bins[hit], cm)
        return out.astype(np.uint16)


def message_sectors(sectors) -> np.ndarray:
    """The 72 sectors [cm] (:func:`scan_sectors`) as :data:`MESSAGE_SECTORS` wide ones (8,) [cm]: message ``k``
    is centred on PX4's sector 9·k (yaw 45·k°, FRD) and holds the nearest of sectors 9·k − 4 .. 9·k + 4. A wide
    sector with an obstacle in any of its sectors reads the nearest; with none, ``max + 1`` if any was looked into,
    else :data:`NO_DATA` (``max + 1`` < NO_DATA, so the minimum says it)."""
    s = np.asarray(sectors, dtype=np.int64)
    index = (np.arange(MESSAGE_SECTORS)[:, None] * SECTORS_PER_MESSAGE
             + np.arange(SECTORS_PER_MESSAGE)[None, :] - SECTORS_PER_MESSAGE // 2) % SECTORS
    return s[index].min(axis=1).astype(np.uint16)


def message_yaw(k: int) -> float:
    """Yaw [rad] of message ``k`` in body FRD: 45·k°, clockwise from forward seen from above."""
    return math.radians(k * SECTORS_PER_MESSAGE * SECTOR_DEG)


def yaw_quaternion(yaw: float) -> list[float]:
    """The rotation by ``yaw`` [rad] about body FRD's z (down) as MAVLink's (w, x, y, z): what PX4 reads back
    as ``Eulerf(q).psi()`` for a MAV_SENSOR_ROTATION_CUSTOM distance sensor; w >= 0 (q and -q are one rotation)."""
    q = [math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0)]
    return [-x for x in q] if q[0] < 0.0 else q


def distance_sensor_messages(mav, time_boot_ms: int, sectors, *, min_range: float, max_range: float,
                             band: float = DEFAULT_BAND, covariance_cm2: int = UNKNOWN_COVARIANCE,
                             first_id: int = FIRST_ID) -> list:
    """One DISTANCE_SENSOR per wide sector that has data (at most :data:`MESSAGE_SECTORS`), from the 72
    sectors [cm] of :func:`scan_sectors`: id ``first_id + k``, orientation MAV_SENSOR_ROTATION_CUSTOM with the
    quaternion of yaw 45·k° (FRD), horizontal field of view :data:`HORIZONTAL_FOV`, vertical ``2·band`` [rad],
    distances in cm (``max + 1`` for nothing in range), type laser, signal quality 100."""
    min_cm, max_cm = int(round(100.0 * min_range)), int(round(100.0 * max_range))
    wide = message_sectors(sectors)
    out = []
    for k, distance in enumerate(wide.tolist()):
        if distance == NO_DATA:
            continue  # nothing looked this way: PX4's sector stays "no data", as CP_GO_NO_DATA decides
        out.append(mav.distance_sensor_encode(
            int(time_boot_ms), min_cm, max_cm, int(distance), LASER, first_id + k, ROTATION_CUSTOM,
            int(covariance_cm2), float(HORIZONTAL_FOV), float(2.0 * band), yaw_quaternion(message_yaw(k)), 100,
        ))
    return out


__all__ = [
    "DEFAULT_BAND", "FIRST_ID", "SectorReduction", "HORIZONTAL_FOV", "MESSAGE_SECTORS", "NO_DATA", "SECTORS", "SECTOR_DEG",
    "distance_sensor_messages", "frd_yaw_deg", "in_band", "lidar_directions", "message_sectors", "message_yaw",
    "no_obstacle_cm", "scan_sectors", "sector_of", "yaw_quaternion",
]
