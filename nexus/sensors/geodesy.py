"""WGS-84 conversions between a local ENU tangent plane and geodetic coordinates.

The origin's ECEF position and the ENU-to-ECEF rotation are computed on the
host in float64; kernels add a local offset and convert back to latitude and
longitude exactly (float64, a fixed number of fixed-point iterations), so
positions stay accurate to well under a millimetre over tens of kilometres.
"""

from __future__ import annotations

import math

import numpy as np
import warp as wp

#: WGS-84 semi-major axis [m] and flattening [-].
SEMI_MAJOR_AXIS = 6378137.0
FLATTENING = 1.0 / 298.257223563
ECCENTRICITY_SQUARED = FLATTENING * (2.0 - FLATTENING)
#: Iterations of the latitude fixed point; each gains a factor e² ≈ 1/150.
LATITUDE_ITERATIONS = 6

# Typed for kernels: a bare Python float in a kernel is a float32 literal, which
# would cost about 0.3 m of latitude.
_A = wp.constant(wp.float64(SEMI_MAJOR_AXIS))
_E2 = wp.constant(wp.float64(ECCENTRICITY_SQUARED))
_DEGREES_PER_RADIAN = wp.constant(wp.float64(180.0 / math.pi))


def geodetic_to_ecef(latitude: float, longitude: float, height: float) -> np.ndarray:
    """ECEF position [m] of a geodetic point (deg, deg, m above the ellipsoid)."""
    phi, lam = math.radians(latitude), math.radians(longitude)
    n = SEMI_MAJOR_AXIS / math.sqrt(1.0 - ECCENTRICITY_SQUARED * math.sin(phi) ** 2)
    return np.array([
        (n + height) * math.cos(phi) * math.cos(lam),
        (n + height) * math.cos(phi) * math.sin(lam),
        (n * (1.0 - ECCENTRICITY_SQUARED) + height) * math.sin(phi),
    ])


def enu_to_ecef_rotation(latitude: float, longitude: float) -> np.ndarray:
    """The rotation whose columns are the east, north and up axes in ECEF."""
    phi, lam = math.radians(latitude), math.radians(longitude)
    east = [-math.sin(lam), math.cos(lam), 0.0]
    north = [-math.sin(phi) * math.cos(lam), -math.sin(phi) * math.sin(lam), math.cos(phi)]
    up = [math.cos(phi) * math.cos(lam), math.cos(phi) * math.sin(lam), math.sin(phi)]
    return np.array([east, north, up]).T


@wp.func
def ecef_to_latitude_longitude(ecef: wp.vec3d) -> wp.vec2d:
    """Geodetic (latitude, longitude) [deg] of an ECEF point [m]."""
    x = ecef[0]
    y = ecef[1]
    z = ecef[2]
    a = _A
    e2 = _E2
    p = wp.sqrt(x * x + y * y)
    latitude = wp.atan2(z, p * (wp.float64(1.0) - e2))
    for _ in range(LATITUDE_ITERATIONS):
        s = wp.sin(latitude)
        n = a / wp.sqrt(wp.float64(1.0) - e2 * s * s)
        latitude = wp.atan2(z + e2 * n * s, p)
    return wp.vec2d(latitude * _DEGREES_PER_RADIAN, wp.atan2(y, x) * _DEGREES_PER_RADIAN)


def ecef_to_latitude_longitude_np(ecef) -> tuple[float, float]:
    """Host twin of :func:`ecef_to_latitude_longitude`: (latitude, longitude) [deg]."""
    x, y, z = (float(v) for v in ecef)
    p = math.hypot(x, y)
    latitude = math.atan2(z, p * (1.0 - ECCENTRICITY_SQUARED))
    for _ in range(LATITUDE_ITERATIONS):
        s = math.sin(latitude)
        n = SEMI_MAJOR_AXIS / math.sqrt(1.0 - ECCENTRICITY_SQUARED * s * s)
        latitude = math.atan2(z + ECCENTRICITY_SQUARED * n * s, p)
    return math.degrees(latitude), math.degrees(math.atan2(y, x))


def enu_offset_to_geodetic(origin, offset_enu) -> tuple[float, float, float]:
    """(latitude [deg], longitude [deg], altitude [m]) of a point ``offset_enu`` [m] from ``origin``.

    ``origin`` has ``latitude``, ``longitude`` and ``altitude``; the altitude is
    the origin's plus the offset's up part, as the GPS and barometer take it.
    """
    offset = np.asarray(offset_enu, dtype=np.float64)
    ecef = geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude)
    ecef = ecef + enu_to_ecef_rotation(origin.latitude, origin.longitude) @ offset
    latitude, longitude = ecef_to_latitude_longitude_np(ecef)
    return latitude, longitude, origin.altitude + float(offset[2])
