"""Every value PX4 gets in a tick, gathered on the device into one row the host stages read at once.

The exchange used to read a dozen fields from five signals and work out the
ground truth in Python each tick: tens of microseconds on the CPU, and on
CUDA one copy per signal. Here one kernel, in the captured graph just before
the PX4 host stages, writes one :class:`Px4Row`: HIL_SENSOR's fields in
PX4's units with the four sample stamps, and HIL_STATE_QUATERNION's fields in
wire order (its floats and its integers apart, as the frame packs them). The
host stages read each part with one ``tolist()``; on CUDA one copy of the
row comes over per tick.

The sensor fields are worked out as :mod:`nexus.px4.messages` states them on
the host (float64 from the float32 signals), so they are the same numbers
the host made. The ground truth (which PX4 only logs) takes the body's
attitude FRD->NED (w, x, y, z, w >= 0), its rates [rad/s] and specific force
in FRD, its position as latitude/longitude [degE7] and altitude [mm] from
the run's geodetic origin, and its NED velocity [cm/s], all in float64.
"""

from __future__ import annotations

import warp as wp

from nexus.plant.body_state import BodyState
from nexus.plant.frames import Q_FLU_FRD, Q_NED_ENU
from nexus.px4.messages import KELVIN_OFFSET, PA_TO_HPA, STANDARD_GRAVITY, TESLA_TO_GAUSS
from nexus.sensors.geodesy import ecef_to_latitude_longitude
from nexus.sensors.samples import BaroSample, ImuSample, MagSample, GpsSample

#: Positions in :attr:`Px4Row.sensor`: HIL_SENSOR's accel, gyro, mag [gauss], abs pressure [hPa],
#: pressure altitude [m], temperature [°C], then the IMU, mag, baro and GPS sample times [s].
SENSOR_WIDTH = 16
STAMPS = slice(12, 16)
vec16d = wp.types.vector(length=SENSOR_WIDTH, dtype=wp.float64)
#: HIL_STATE_QUATERNION's floats (attitude w, x, y, z; roll, pitch, yaw rates [rad/s]) and integers
#: (lat, lon [degE7], alt [mm], vx, vy, vz [cm/s], indicated and true airspeed [cm/s], accel [mG]).
vec7d = wp.types.vector(length=7, dtype=wp.float64)
vec11i = wp.types.vector(length=11, dtype=wp.int32)

_Q_NED_ENU = wp.constant(wp.quatd(*Q_NED_ENU))
_Q_FLU_FRD = wp.constant(wp.quatd(*Q_FLU_FRD))
_GAUSS_PER_TESLA = wp.constant(wp.float64(TESLA_TO_GAUSS))
_HPA_PER_PA = wp.constant(wp.float64(PA_TO_HPA))
_KELVIN_OFFSET = wp.constant(wp.float64(KELVIN_OFFSET))
_STANDARD_GRAVITY = wp.constant(wp.float64(STANDARD_GRAVITY))


@wp.struct
class Px4Row:
    sensor: vec16d
    truth_floats: vec7d
    truth_ints: vec11i


@wp.func
def _wire_int(value: wp.float64) -> wp.int32:
    """Rounded half to even, as the host's ``int(round(x))``."""
    return wp.int32(wp.rint(value))


@wp.kernel
def gather_px4_row(
    body: wp.array(dtype=BodyState),
    imu: wp.array(dtype=ImuSample),
    mag: wp.array(dtype=MagSample),
    baro: wp.array(dtype=BaroSample),
    gps: wp.array(dtype=GpsSample),
    anchor: wp.array(dtype=wp.vec3),
    gravity: wp.float64,
    origin_ecef: wp.vec3d,
    enu_to_ecef: wp.mat33d,
    origin_altitude: wp.float64,
    row: wp.array(dtype=Px4Row),
):
    """Each slot's row (one PX4 instance flies each vehicle of one world)."""
    slot = wp.tid()
    out = Px4Row()
    i = imu[slot]
    m = mag[slot]
    b = baro[slot]
    s = vec16d()
    for k in range(3):
        s[k] = wp.float64(i.accel[k])
        s[3 + k] = wp.float64(i.gyro[k])
        s[6 + k] = wp.float64(m.field[k]) * _GAUSS_PER_TESLA
    s[9] = wp.float64(b.pressure) * _HPA_PER_PA
    s[10] = wp.float64(b.pressure_altitude)
    s[11] = wp.float64(b.temperature) - _KELVIN_OFFSET
    s[12] = i.time
    s[13] = m.time
    s[14] = b.time
    s[15] = gps[slot].time
    out.sensor = s

    state = body[slot]
    q = wp.quatd(wp.transform_get_rotation(state.pose))
    # FRD -> NED = Q_NED_ENU ⊗ q ⊗ Q_FLU_FRD (180° about x), w >= 0.
    ned = _Q_NED_ENU * q * _Q_FLU_FRD
    ned = wp.normalize(ned)
    if ned[3] < wp.float64(0.0):
        ned = -ned
    # World vectors in the body (FLU), then FLU -> FRD flips y and z.
    omega = wp.quat_rotate_inv(q, wp.vec3d(state.angular_velocity))
    force = wp.quat_rotate_inv(q, wp.vec3d(state.accel) + wp.vec3d(wp.float64(0.0), wp.float64(0.0), gravity))
    out.truth_floats = vec7d(ned[3], ned[0], ned[1], ned[2], omega[0], -omega[1], -omega[2])

    enu = wp.vec3d(wp.transform_get_translation(state.pose) - anchor[slot])
    lat_lon = ecef_to_latitude_longitude(origin_ecef + enu_to_ecef * enu)
    v = wp.vec3d(state.velocity)
    speed = _wire_int(wp.length(v) * wp.float64(100.0))
    mg = wp.float64(1000.0)
    out.truth_ints = vec11i(
        _wire_int(lat_lon[0] * wp.float64(1.0e7)), _wire_int(lat_lon[1] * wp.float64(1.0e7)),
        _wire_int((origin_altitude + enu[2]) * wp.float64(1000.0)),
        _wire_int(v[1] * wp.float64(100.0)), _wire_int(v[0] * wp.float64(100.0)), _wire_int(-v[2] * wp.float64(100.0)),
        speed, speed,
        _wire_int(force[0] / _STANDARD_GRAVITY * mg), _wire_int(-force[1] / _STANDARD_GRAVITY * mg),
        _wire_int(-force[2] / _STANDARD_GRAVITY * mg),
    )
    row[slot] = out
