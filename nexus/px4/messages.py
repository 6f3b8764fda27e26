"""Nexus samples (SI, NED/FRD) -> the HIL messages PX4 reads, in PX4's units.

``HIL_SENSOR``: accel [m/s²], gyro [rad/s], mag [gauss], pressures [hPa],
pressure altitude [m], temperature [°C], with ``fields_updated`` bits saying
which groups are new. ``HIL_GPS``: degE7, mm, cm, cm/s, cdeg.
``HIL_STATE_QUATERNION``: the ground truth, attitude as (w, x, y, z).
"""

from __future__ import annotations

import math

import numpy as np

#: ``fields_updated`` bits of HIL_SENSOR (PX4's simulator_mavlink reads these).
ACCEL_BITS = 0x7
GYRO_BITS = 0x38
MAG_BITS = 0x1C0
DIFF_PRESSURE_BITS = 0x400
BARO_BITS = 0x1A00  # absolute pressure, pressure altitude and temperature together

TESLA_TO_GAUSS = 1.0e4
PA_TO_HPA = 0.01
KELVIN_OFFSET = 273.15
STANDARD_GRAVITY = 9.80665
#: HIL_GPS: course over ground unknown.
COG_UNKNOWN = 65535


def sensor_fields(imu_new: bool, mag_new: bool, baro_new: bool) -> int:
    return (ACCEL_BITS | GYRO_BITS if imu_new else 0) | (MAG_BITS if mag_new else 0) | (BARO_BITS if baro_new else 0)


def hil_sensor_args(time_usec: int, accel, gyro, field_tesla, pressure_pa: float, pressure_altitude: float,
                    temperature_k: float, fields: int, sensor_id: int = 0) -> tuple:
    """HIL_SENSOR's encoder arguments from SI values (accel [m/s²], gyro [rad/s], field [T], pressure [Pa], [m], [K])."""
    return (
        time_usec, accel[0], accel[1], accel[2], gyro[0], gyro[1], gyro[2],
        field_tesla[0] * TESLA_TO_GAUSS, field_tesla[1] * TESLA_TO_GAUSS, field_tesla[2] * TESLA_TO_GAUSS,
        pressure_pa * PA_TO_HPA, 0.0, pressure_altitude, temperature_k - KELVIN_OFFSET, fields, sensor_id,
    )


def hil_sensor(mav, time_usec: int, imu, mag, baro, fields: int, sensor_id: int = 0):
    return mav.hil_sensor_encode(*hil_sensor_args(
        time_usec, [float(v) for v in imu.accel], [float(v) for v in imu.gyro], [float(v) for v in mag.field],
        float(baro.pressure), float(baro.pressure_altitude), float(baro.temperature), fields, sensor_id))


def course_over_ground(north: float, east: float) -> int:
    """Course [cdeg, 0..35999] of a horizontal velocity, or unknown when too slow to tell."""
    if math.hypot(north, east) < 0.1:
        return COG_UNKNOWN
    return int(round(math.degrees(math.atan2(east, north)) * 100.0)) % 36000


def hil_gps_args(time_usec: int, fix_type: int, latitude: float, longitude: float, altitude: float, eph: float,
                 epv: float, velocity_ned, satellites: int, gps_id: int = 0) -> tuple:
    """HIL_GPS's encoder arguments from [deg], [m] and [m/s] values."""
    vn, ve, vd = (float(v) for v in velocity_ned)
    return (
        time_usec, int(fix_type),
        int(round(latitude * 1e7)), int(round(longitude * 1e7)), int(round(altitude * 1000.0)),
        int(round(eph * 100.0)), int(round(epv * 100.0)),
        int(round(math.hypot(vn, ve) * 100.0)),
        int(round(vn * 100.0)), int(round(ve * 100.0)), int(round(vd * 100.0)),
        course_over_ground(vn, ve), int(satellites), gps_id,
    )


def hil_gps(mav, time_usec: int, gps, gps_id: int = 0):
    return mav.hil_gps_encode(*hil_gps_args(
        time_usec, int(gps.fix_type), float(gps.latitude), float(gps.longitude), float(gps.altitude), float(gps.eph),
        float(gps.epv), gps.velocity, int(gps.satellites), gps_id))


def hil_state_quaternion_args(time_usec: int, attitude_wxyz, rates_frd, lat_lon_alt, velocity_ned,
                               specific_force_frd) -> tuple:
    """Ground truth: attitude FRD->NED (w, x, y, z), rates [rad/s], lat/lon [deg], alt [m], velocity [m/s], force [m/s²]."""
    lat, lon, alt = lat_lon_alt
    vn, ve, vd = (float(v) for v in velocity_ned)
    mg = [int(round(float(f) / STANDARD_GRAVITY * 1000.0)) for f in specific_force_frd]
    speed = int(round(math.sqrt(vn * vn + ve * ve + vd * vd) * 100.0))
    return (
        time_usec,
        [float(q) for q in attitude_wxyz],
        float(rates_frd[0]), float(rates_frd[1]), float(rates_frd[2]),
        int(round(lat * 1e7)), int(round(lon * 1e7)), int(round(alt * 1000.0)),
        int(round(vn * 100.0)), int(round(ve * 100.0)), int(round(vd * 100.0)),
        speed, speed,
        *mg,
    )


def hil_state_quaternion(mav, time_usec: int, attitude_wxyz, rates_frd, lat_lon_alt, velocity_ned, specific_force_frd):
    return mav.hil_state_quaternion_encode(*hil_state_quaternion_args(
        time_usec, attitude_wxyz, rates_frd, lat_lon_alt, velocity_ned, specific_force_frd))


def xyzw_to_wxyz(q) -> np.ndarray:
    """Warp's (x, y, z, w) as MAVLink's (w, x, y, z), with w >= 0 (q and -q are one rotation)."""
    wxyz = np.array([q[3], q[0], q[1], q[2]], dtype=np.float64)
    return -wxyz if wxyz[0] < 0.0 else wxyz
