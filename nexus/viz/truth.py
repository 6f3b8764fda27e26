"""What each recorded signal should have read, worked out on the host from the recorded truth.

The record holds the base body's truth (``body/base``: pose, twist and
accelerations in Newton's ENU world, body axes FLU) next to the sensors'
samples and the estimate (NED world, FRD body). These functions put the truth
into the sensors' frames, vectorised over rows, so the report can plot each
sensor against it. Conventions as in ``nexus/plant/frames.py`` and
``docs/sensors.md``; quaternions are Warp's (x, y, z, w).
"""

from __future__ import annotations

import numpy as np
from pygeomag import GeoMag

#: ENU -> NED as a matrix: (e, n, u) -> (n, e, -u).
ENU_TO_NED = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
#: FLU <-> FRD: (x, y, z) -> (x, -y, -z).
FLU_TO_FRD = np.diag([1.0, -1.0, -1.0])
#: Standard gravity [m/s²], the world's −z (the scene may say otherwise; see :func:`imu_truth`).
STANDARD_GRAVITY = 9.80665
#: ISA sea-level temperature [K], lapse rate [K/m], sea-level pressure [Pa] and exponent g·M/(R·L) [-].
ISA_T0, ISA_LAPSE, ISA_P0, ISA_EXPONENT = 288.15, 0.0065, 101325.0, 5.25588


def rotation_matrices(quaternions: np.ndarray) -> np.ndarray:
    """Rotation matrices (rows, 3, 3) from (x, y, z, w) quaternions (rows, 4), normalised first."""
    q = np.asarray(quaternions, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=1, keepdims=True)
    x, y, z, w = q.T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], axis=1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], axis=1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], axis=1),
    ], axis=1)


def ned_frd_from_enu_flu(r_enu_flu: np.ndarray) -> np.ndarray:
    """Body-FRD-to-NED rotations from Newton's body-FLU-to-ENU ones: ``P·R·F``."""
    return ENU_TO_NED @ r_enu_flu @ FLU_TO_FRD


def euler_zyx(r_ned_frd: np.ndarray) -> np.ndarray:
    """Roll, pitch, yaw [rad] (aerospace Z-Y-X order, yaw 0 north, +π/2 east), shape (rows, 3)."""
    roll = np.arctan2(r_ned_frd[:, 2, 1], r_ned_frd[:, 2, 2])
    pitch = -np.arcsin(np.clip(r_ned_frd[:, 2, 0], -1.0, 1.0))
    yaw = np.arctan2(r_ned_frd[:, 1, 0], r_ned_frd[:, 0, 0])
    return np.stack([roll, pitch, yaw], axis=1)


def to_body(r_world_body: np.ndarray, world: np.ndarray) -> np.ndarray:
    """World vectors (rows, 3) in body axes: ``Rᵀ·v`` per row."""
    return np.einsum("nji,nj->ni", r_world_body, world)


def to_world(r_world_body: np.ndarray, body: np.ndarray) -> np.ndarray:
    """Body vectors (rows, 3) or one body vector (3,) in world axes: ``R·v`` per row."""
    body = np.broadcast_to(np.asarray(body, dtype=np.float64), (len(r_world_body), 3))
    return np.einsum("nij,nj->ni", r_world_body, body)


def position_ned(position_enu: np.ndarray, ned_origin_enu: np.ndarray) -> np.ndarray:
    """World positions (ENU, [m]) relative to the NED origin, in NED axes [m]."""
    return (np.asarray(position_enu, dtype=np.float64) - ned_origin_enu) @ ENU_TO_NED.T


def body_rates_frd(r_enu_flu: np.ndarray, omega_world: np.ndarray) -> np.ndarray:
    """Angular velocity in body FRD axes [rad/s] from the world (ENU) angular velocity: ``FRD(Rᵀ·ω)``."""
    return to_body(r_enu_flu, omega_world) @ FLU_TO_FRD.T


def imu_truth(r_enu_flu, accel, angular_accel, omega, com, mount, gravity=STANDARD_GRAVITY):
    """Noiseless specific force [m/s²] and angular rate [rad/s] at the IMU's mount, FRD (docs/sensors.md).

    ``a_mount = a + α×r + ω×(ω×r)`` with ``r = R·(mount − com)``; ``f = FRD(Rᵀ·(a_mount − g))``.
    ``com`` is the body-frame centre of mass (rows, 3); ``mount`` the body-frame mount (3,).
    """
    r = np.einsum("nij,nj->ni", r_enu_flu, np.asarray(mount, dtype=np.float64) - com)
    a_mount = accel + np.cross(angular_accel, r) + np.cross(omega, np.cross(omega, r))
    g = np.array([0.0, 0.0, -gravity])
    force = to_body(r_enu_flu, a_mount - g) @ FLU_TO_FRD.T
    return force, body_rates_frd(r_enu_flu, omega)


def mag_truth(r_enu_flu: np.ndarray, field_ned: np.ndarray) -> np.ndarray:
    """Noiseless field [T] in body FRD axes: ``FRD(Rᵀ·ENU(B_ned))``."""
    field_enu = ENU_TO_NED.T @ np.asarray(field_ned, dtype=np.float64)
    return to_body(r_enu_flu, np.broadcast_to(field_enu, (len(r_enu_flu), 3))) @ FLU_TO_FRD.T


def mount_position_enu(position_enu: np.ndarray, r_enu_flu: np.ndarray, mount) -> np.ndarray:
    """World position [m] of a point fixed at ``mount`` (body FLU, from the body origin)."""
    return np.asarray(position_enu, dtype=np.float64) + to_world(r_enu_flu, mount)


def pressure_altitude_from_pressure(pressure) -> np.ndarray:
    """ISA pressure altitude [m] of a pressure [Pa]: ``(T0/L)·(1 − (p/p0)^(1/n))``."""
    return (ISA_T0 / ISA_LAPSE) * (1.0 - (np.asarray(pressure, dtype=np.float64) / ISA_P0) ** (1.0 / ISA_EXPONENT))


def isa_pressure(altitude) -> np.ndarray:
    """ISA pressure [Pa] at an altitude [m] above mean sea level (troposphere)."""
    temperature = ISA_T0 - ISA_LAPSE * np.asarray(altitude, dtype=np.float64)
    return ISA_P0 * (temperature / ISA_T0) ** ISA_EXPONENT


def altitude_per_pascal(altitude) -> np.ndarray:
    """|dh/dp| [m/Pa] of the ISA at an altitude [m]: turns a pressure noise σ into an altitude band."""
    pressure = isa_pressure(altitude)
    return (ISA_T0 / ISA_LAPSE) / ISA_EXPONENT * (pressure / ISA_P0) ** (1.0 / ISA_EXPONENT - 1.0) / ISA_P0


#: WGS-84 semi-major axis [m] and first eccentricity squared [-] (flattening 1/298.257223563).
WGS84_A, WGS84_E2 = 6378137.0, (1.0 / 298.257223563) * (2.0 - 1.0 / 298.257223563)


def geodetic_to_ecef(latitude, longitude, height) -> np.ndarray:
    """ECEF positions [m] of geodetic points (deg, deg, m above the ellipsoid), shape (rows, 3)."""
    phi, lam = np.radians(np.asarray(latitude, dtype=np.float64)), np.radians(np.asarray(longitude, dtype=np.float64))
    n = WGS84_A / np.sqrt(1.0 - WGS84_E2 * np.sin(phi) ** 2)
    h = np.asarray(height, dtype=np.float64)
    return np.stack([(n + h) * np.cos(phi) * np.cos(lam), (n + h) * np.cos(phi) * np.sin(lam),
                     (n * (1.0 - WGS84_E2) + h) * np.sin(phi)], axis=-1)


def geodetic_to_ned(latitude, longitude, altitude, origin: dict) -> np.ndarray:
    """GPS fixes (deg, deg, m MSL) as NED offsets [m] from the geodetic origin.

    Horizontal: WGS-84 ECEF difference rotated into the origin's east and north
    axes, both points taken at the origin's height (the GPS puts altitude on the
    flat ground's vertical, not the ellipsoid's; docs/sensors.md). Vertical:
    altitude above the origin's.
    """
    lat0, lon0, h0 = float(origin["latitude"]), float(origin["longitude"]), float(origin["altitude"])
    phi, lam = np.radians(lat0), np.radians(lon0)
    east = np.array([-np.sin(lam), np.cos(lam), 0.0])
    north = np.array([-np.sin(phi) * np.cos(lam), -np.sin(phi) * np.sin(lam), np.cos(phi)])
    offset = geodetic_to_ecef(latitude, longitude, np.full(len(latitude), h0)) - geodetic_to_ecef(lat0, lon0, h0)
    up = np.asarray(altitude, dtype=np.float64) - h0
    return np.stack([offset @ north, offset @ east, -up], axis=1)


def earth_field_ned(origin: dict, decimal_year: float) -> np.ndarray:
    """The WMM-2025 field (north, east, down) [T] at the geodetic origin, as the magnetometer takes it.

    Same call as ``nexus.sensors.magnetometer.earth_field_ned`` (altitude in km, field in nT), made
    here so the report does not import the sensors' Warp kernels and Newton.
    """

    result = GeoMag().calculate(glat=float(origin["latitude"]), glon=float(origin["longitude"]),
                                alt=float(origin["altitude"]) / 1000.0, time=decimal_year)
    return np.array([result.x, result.y, result.z], dtype=np.float64) * 1.0e-9
