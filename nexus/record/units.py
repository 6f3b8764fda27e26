"""The unit and meaning of each record column, for files other tools open (MCAP schemas, CSV headers).

A record keeps each signal's exact bits but not its units: those are in the
signal's struct (``nexus/sensors/samples.py``, ``nexus/plant/body_state.py``
...). An export names them, so this table says them once more, keyed by the
signal's family (the prefix before any ``/``: ``body/base`` is ``body``,
``imu/ImuQuiet`` is ``imu``) and the field's path without indices
(``pose``, ``accel``); a signal that is one value (``armed``, ``controls``,
``wind``) is keyed by its family and ``""``. A field not listed exports
with no unit (its description says so) rather than a wrong one.

Units are ASCII (``m/s^2``), so a spreadsheet reads them whatever its
encoding; ``-`` marks a dimensionless value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Unit:
    #: ``m/s^2``, ``-`` (dimensionless), or ``""`` where the table does not know it.
    unit: str
    #: What the value is, its axes and frame.
    meaning: str
    #: Each element's unit, for a field whose elements differ (``pose``: metres, then a quaternion).
    elements: tuple[str, ...] = ()

    def of_element(self, index: int | None) -> str:
        """The unit of element ``index`` of the field (the field's own unit for ``None`` or a uniform field)."""
        if self.elements and index is not None and 0 <= index < len(self.elements):
            return self.elements[index]
        return self.unit

    def bracketed(self) -> str:
        """`` [m/s^2]`` (with its leading space), or ``""`` for an unknown unit."""
        return f" [{self.unit}]" if self.unit else ""


#: (signal family, field path) -> its unit. Quaternions are Warp's (x, y, z, w).
UNITS: dict[tuple[str, str], Unit] = {
    ("time", ""): Unit("s", "sim time of the tick"),
    ("world", ""): Unit("-", "world index within the run"),
    ("vehicle", ""): Unit("-", "vehicle index within its world (with --vehicles)"),
    ("body", "pose"): Unit("m, -", "ENU position [m] (0..2), then the body (FLU) to ENU rotation as a quaternion "
                                   "x, y, z, w [-] (3..6)", ("m",) * 3 + ("-",) * 4),
    ("body", "velocity"): Unit("m/s", "centre-of-mass velocity, world ENU"),
    ("body", "angular_velocity"): Unit("rad/s", "angular velocity, world ENU"),
    ("body", "accel"): Unit("m/s^2", "centre-of-mass acceleration, world ENU"),
    ("body", "angular_accel"): Unit("rad/s^2", "angular acceleration, world ENU"),
    ("body", "com"): Unit("m", "centre of mass in the body frame (FLU)"),
    ("imu", "time"): Unit("s", "sim time the sample was taken"),
    ("imu", "accel"): Unit("m/s^2", "specific force, body FRD (level at rest: 0, 0, -g)"),
    ("imu", "gyro"): Unit("rad/s", "angular rate, body FRD"),
    ("mag", "time"): Unit("s", "sim time the sample was taken"),
    ("mag", "field"): Unit("T", "magnetic flux density, body FRD"),
    ("baro", "time"): Unit("s", "sim time the sample was taken"),
    ("baro", "pressure"): Unit("Pa", "static pressure"),
    ("baro", "temperature"): Unit("K", "air temperature"),
    ("baro", "pressure_altitude"): Unit("m", "ISA pressure altitude"),
    ("gps", "time"): Unit("s", "sim time the sample was taken"),
    ("gps", "latitude"): Unit("deg", "geodetic latitude, WGS-84"),
    ("gps", "longitude"): Unit("deg", "geodetic longitude, WGS-84"),
    ("gps", "altitude"): Unit("m", "altitude above mean sea level"),
    ("gps", "velocity"): Unit("m/s", "velocity, NED"),
    ("gps", "fix_type"): Unit("-", "0 none, 2 2D, 3 3D"),
    ("gps", "satellites"): Unit("-", "satellites used"),
    ("gps", "eph"): Unit("m", "horizontal position accuracy (1 sigma)"),
    ("gps", "epv"): Unit("m", "vertical position accuracy (1 sigma)"),
    ("range", "time"): Unit("s", "sim time the sample was taken"),
    ("range", "distance"): Unit("m", "distance along the beam (maximum + 1 cm when not valid)"),
    ("range", "valid"): Unit("-", "1 while the ground is within range"),
    ("estimate", "time"): Unit("s", "sim time of the estimate"),
    ("estimate", "position"): Unit("m", "position, NED, from the origin the vehicle settled at"),
    ("estimate", "attitude"): Unit("-", "body (FRD) to NED rotation as a quaternion x, y, z, w"),
    ("estimate", "velocity"): Unit("m/s", "velocity, NED"),
    ("estimate", "rates"): Unit("rad/s", "body rates, FRD"),
    ("setpoint", "position"): Unit("m", "position goal, NED, from the NED origin"),
    ("setpoint", "yaw"): Unit("rad", "heading goal (0 north, +pi/2 east)"),
    ("armed", ""): Unit("-", "1 armed, 0 once landed or disarmed"),
    ("mission_phase", ""): Unit("-", "index into nexus.guidance.profile.PHASES (takeoff 0 ... landed 5, align 6, "
                                     "position_hold 7, position_land 8, goto 9); -1 before the first"),
    ("controls", ""): Unit("-", "ESC command in [0, 1], one slot per rotor in ESC channel order"),
    ("wind", ""): Unit("m/s", "the air's velocity at the vehicle's base, world ENU"),
    ("battery", "voltage"): Unit("V", "terminal voltage"),
    ("battery", "current"): Unit("A", "current drawn"),
    ("battery", "state_of_charge"): Unit("-", "charge left over capacity"),
    ("joints", ""): Unit("rad, rad/s", "rotor joint angle [rad] (0) and speed [rad/s] (1)",
                          ("rad", "rad/s")),
}

UNKNOWN = Unit("", "unit not known to the exporter: see the signal's struct")


def family(signal: str) -> str:
    """The signal's family: ``body/base`` -> ``body``, ``imu/ImuQuiet`` -> ``imu``, ``controls`` -> ``controls``."""
    return signal.split("/", 1)[0]


def unit_of(signal: str, field: str = "") -> Unit:
    """The unit of ``field`` (a path without indices: ``accel``, ``pose``; ``""`` for a one-value signal) of
    ``signal`` (a record column prefix: ``imu``, ``body/base``)."""
    return UNITS.get((family(signal), field), UNKNOWN)


def column_unit(signal: str, field: str, index: int | None = None) -> str:
    """The unit of one scalar column: element ``index`` of ``field`` of ``signal``."""
    return unit_of(signal, field).of_element(index)


def column_fields(name: str) -> tuple[str, list[tuple[str, str | int]]]:
    """A record column's signal and the path to its scalar: ``body/base.pose[3]`` ->
    ``("body/base", [("key", "pose"), ("index", 3)])``; ``controls[2]`` -> ``("controls", [("index", 2)])``."""
    match = _SIGNAL.match(name)
    signal, rest = match.group(1), match.group(2)
    path: list[tuple[str, str | int]] = []
    for key, index in _STEP.findall(rest):
        path.append(("key", key) if key else ("index", int(index)))
    return signal, path


def column_unit_of(name: str) -> str:
    """The unit of the record column ``name`` (``imu.accel[0]`` -> ``m/s^2``; ``""`` where unknown)."""
    signal, path = column_fields(name)
    field = ".".join(str(step) for kind, step in path if kind == "key")
    indices = [step for kind, step in path if kind == "index"]
    return column_unit(signal, field, indices[-1] if indices else None)


def header(name: str) -> str:
    """The record column ``name`` with its unit, as a CSV header names it: ``imu.accel[0] [m/s^2]``."""
    unit = column_unit_of(name)
    return f"{name} [{unit}]" if unit else name


_SIGNAL = re.compile(r"^([^.\[]+)(.*)$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
