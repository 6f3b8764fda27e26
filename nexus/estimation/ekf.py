"""An error-state extended Kalman filter: the estimate from the IMU, GPS, barometer, magnetometer, rangefinder, pitot.

One filter per world, one device stage, one Warp kernel over the worlds, so it
is captured in the graph with the rest of the tick. Each tick it:

1. predicts the nominal state from the newest IMU sample (angular rate and
   specific force held over the sample interval: δα = (ω − b_g)·dt,
   δv = (f − b_a)·dt), and accumulates the interval for the covariance;
2. every ``covarianceDecimation`` IMU samples predicts the covariance over the
   accumulated interval (sparse by hand, :mod:`nexus.estimation.ekf_math`);
3. fuses every new sample of each fused sensor, one scalar at a time, each
   gated by its test ratio ν² / (gate²·S) ≤ 1 (PX4's ``EKF2_*_GATE`` in standard
   deviations; a rejection is counted), Joseph form, and injects the error.

With ``nexus:EKF2_ARSP_THR`` above 0 it also fuses the pitot's true airspeed and carries two wind states (north,
east), their covariance with the 15 states in an array of its own; at 0 (the default) none of that runs.

Tuning mirrors PX4 EKF2's parameters (names in the attributes, PX4's defaults).
States, equations and figures: ``docs/estimation.md``.
"""

from __future__ import annotations

import numpy as np
import warp as wp

from nexus.core import Component, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Output, Param, Spec, StateVar, non_negative, positive
from nexus.estimation.ekf_math import ACCEL_BIAS, ATT, GYRO_BIAS, N, POS, VEL, fuse_scalar, predict_covariance, vec15
from nexus.estimation.ekf_math import ALIGNMENT_STEP, alignment_covariance, rotation_vector
from nexus.estimation.ekf_math import attitude_variance_of, fuse_attitude_scalar
from nexus.estimation.ekf_math import (
    NW, WIND, fuse_with_wind, predict_wind_covariance, sideslip_attitude_jacobian, sideslip_velocity_jacobian,
    true_airspeed_jacobian, vec17, wind_innovation_variance,
)
from nexus.estimation.estimate_status import (
    AIRSPEED_AIDING, AIRSPEED_FAULT, BARO_AIDING, BARO_FAULT, GPS_AIDING, GPS_FAULT, HORIZONTAL_VALID, MAG_AIDING, MAG_FAULT, NO_AID_FUSION, ORIGIN_SET,
    RANGE_AIDING, RANGE_FAULT, RESET_SIGNAL, STATUS_SIGNAL, TILT_ALIGNED, VERTICAL_VALID, YAW_ALIGNED,
)
from nexus.estimation.pose_twist import PoseTwist
from nexus.schemas.reader import read_connections
from nexus.sensors.airspeed import AIRSPEED_SPEC, AirspeedSample, pitot_speed
from nexus.sensors.geodesy import enu_to_ecef_rotation, geodetic_to_ecef
from nexus.sensors.barometer import BAROMETER_SPEC, isa_density
from nexus.sensors.gps import GPS_SPEC
from nexus.sensors.magnetometer import MAGNETOMETER_SPEC, earth_field_ned
from nexus.sensors.rangefinder import RANGEFINDER_SPEC, RangeSample
from nexus.sensors.samples import BaroSample, GpsSample, ImuSample, MagSample

#: Innovation slots (record ``ekf_innovation``, ``ekf_test_ratio``, ``ekf_rejected``).
GPS_POS, GPS_VEL, BARO, HEADING, RANGE = 0, 3, 6, 7, 8
SLOTS = 9
SLOT_NAMES = ("gps_north", "gps_east", "gps_down", "gps_vnorth", "gps_veast", "gps_vdown", "baro", "heading", "range")
#: The status bits (record ``estimate_status``) are :mod:`nexus.estimation.estimate_status`'s.
#: The done flag of a world whose filter went non-finite (1 done, 2 failed, 3 battery empty, 4 crashed), and its
#: exit reason: the world stops rather than fly on a NaN estimate.
DIVERGED = wp.constant(5)
DIVERGED_REASON = "estimator-diverged"
#: An aiding counts as active while its last accepted fusion is younger than this [s].
AIDING_TIMEOUT = 1.0
#: IMU samples of past position and velocity kept for a delayed GPS (``nexus:gpsDelay``): 0.256 s at 250 Hz.
HISTORY = 64

#: Sensor health (``monitor`` state). A fused sensor is faulted when its newest sample is older than its timeout
#: (dropped out), or when this many consecutive new samples carry the same values while the sensor declares noise
#: (frozen); the timeouts are this many sample periods too (GPS 1 s at 10 Hz, baro 0.2 s at 50 Hz, ...).
STALE_PERIODS = 10
REPEATS = wp.constant(10.0)
#: The vehicle is at rest while its gyro stays below REST_RATE [rad/s] (PX4's EKF2_MOVE_TEST 1 x 0.05 rad/s) and its
#: specific force within REST_ACCEL [m/s^2] of g, for REST_TIME [s] (PX4: 1 s), within REST_HEIGHT [m] of the
#: height it aligned at (PX4 asks its land detector; Nexus's hover is as still as the ground).
REST_RATE = wp.constant(0.05)
REST_ACCEL = wp.constant(0.5)
REST_TIME = wp.constant(1.0)
REST_HEIGHT = wp.constant(1.0)
#: Without aiding: the fake position's period [s] and its noise at rest [m] (PX4 fuses 0.01 m at rest).
FAKE_PERIOD = wp.constant(0.2)
FAKE_REST_NOISE = wp.constant(0.01)
#: ``monitor`` slots: last sample time per sensor (GPS, baro, mag, range: 0-3), repeat runs (4-7), faults (8-11),
#: the GPS's last latitude, longitude, altitude, velocity (12-17), the barometer's height (18), the magnetometer's
#: field (19-21), the rangefinder's distance (22), the last IMU time the vehicle moved (23), the last fake-position
#: fusion (24), the fake position N, E (25, 26), no-aid mode (27: 0 aided, 1 moving, 2 at rest), the sum of the
#: position resets N, E, D (28-30), how many (31).
MONITOR = 32
MON_FAULT, MON_MOVED, MON_FAKE_TIME, MON_FAKE, MON_MODE, MON_RESET, MON_RESETS = 8, 23, 24, 25, 27, 28, 31
#: ``airspeed_monitor`` slots (a filter that fuses airspeed): the pitot's health in :func:`watch`'s slots for sensor 0
#: (last sample time 0, repeat run 4, fault 8), the last sample taken for fusion (1), its pressure (12), the last
#: accepted fusion's time (13), 1 once the wind states are set from the airspeed (14), the last true airspeed [m/s]
#: measured (15), the last synthetic sideslip fusion's time (2).
AIR_MONITOR = 16
AIR_TAKEN, AIR_BETA, AIR_PRESSURE, AIR_ACCEPTED, AIR_WIND_ON, AIR_SPEED = 1, 2, 12, 13, 14, 15
#: The synthetic sideslip's period [s] (PX4 fuses it every 150 ms: its beta_avg_ft_us).
SIDESLIP_PERIOD = wp.constant(0.15)
#: The air-relative speed [m/s] below which the filter's own airspeed is too small to linearise about.
AIR_SPEED_MIN = wp.constant(1.0)
#: The wind's process noise is EKF2_WIND_NSD·(1 + this·|height rate| [s/m]), and is added only while the wind's
#: variance is below the limit [m²/s²] (PX4: wind_vel_nsd_scaler 0.5 and initial_wind_uncertainty² 1, not parameters).
WIND_NOISE_PER_CLIMB = wp.constant(0.5)
WIND_VARIANCE_LIMIT = wp.constant(1.0)

#: The schemas of the components that write a vehicle's estimate, and the connection that picks one.
ESTIMATOR_SCHEMAS = ("NexusTruthEstimatorAPI", "NexusEkfAPI")
ESTIMATE_CONNECTION = "nexus:inputs:estimate"
#: Which sensor each fusion switch needs: (switch key, schema, signal).
FUSIONS = (("fuse_gps", "NexusGpsAPI", "gps"), ("fuse_baro", "NexusBarometerAPI", "baro"),
           ("fuse_mag", "NexusMagnetometerAPI", "mag"), ("fuse_range", "NexusRangefinderAPI", "range"))


def _px4(key: str, name: str, default: float, unit: str, doc: str, strict: bool = False) -> Param:
    """A tuning attribute named after PX4 EKF2's parameter ``name``, with its default."""
    make = positive if strict else non_negative
    return make(key, f"nexus:{name}", default, unit, f"{doc} (PX4 {name}, default {default:g})")


EKF_SPEC = Spec(
    name="Ekf",
    schema="NexusEkfAPI",
    noun="estimator",
    doc="An error-state extended Kalman filter (position, velocity, attitude, gyro and accelerometer bias) "
        "predicting from the IMU and fusing GPS position and velocity, barometer height, magnetometer heading "
        "and rangefinder height, each gated, and with nexus:EKF2_ARSP_THR the pitot's true airspeed with two wind "
        "states; tuning named after PX4 EKF2's parameters, with their defaults.",
    params=(
        _px4("gyro_noise", "EKF2_GYR_NOISE", 0.015, "rad/s", "Gyro noise in the covariance prediction", True),
        _px4("accel_noise", "EKF2_ACC_NOISE", 0.35, "m/s^2", "Accelerometer noise in the covariance prediction", True),
        _px4("gyro_bias_noise", "EKF2_GYR_B_NOISE", 0.001, "rad/s^2", "Gyro bias process noise"),
        _px4("accel_bias_noise", "EKF2_ACC_B_NOISE", 0.003, "m/s^3", "Accelerometer bias process noise"),
        _px4("gps_pos_noise", "EKF2_GPS_P_NOISE", 0.5, "m", "Least GPS position noise (the receiver's eph/epv when larger)", True),
        _px4("gps_vel_noise", "EKF2_GPS_V_NOISE", 0.3, "m/s", "GPS velocity noise", True),
        _px4("baro_noise", "EKF2_BARO_NOISE", 3.5, "m", "Barometric height noise", True),
        _px4("heading_noise", "EKF2_HEAD_NOISE", 0.3, "rad", "Magnetic heading noise", True),
        _px4("range_noise", "EKF2_RNG_NOISE", 0.1, "m", "Rangefinder noise", True),
        _px4("gps_pos_gate", "EKF2_GPS_P_GATE", 5.0, "SD", "GPS position innovation gate", True),
        _px4("gps_vel_gate", "EKF2_GPS_V_GATE", 5.0, "SD", "GPS velocity innovation gate", True),
        _px4("baro_gate", "EKF2_BARO_GATE", 5.0, "SD", "Barometer innovation gate", True),
        _px4("heading_gate", "EKF2_HDG_GATE", 2.6, "SD", "Heading innovation gate", True),
        _px4("range_gate", "EKF2_RNG_GATE", 5.0, "SD", "Rangefinder innovation gate", True),
        _px4("attitude_init", "EKF2_ANGERR_INIT", 0.1, "rad", "Initial attitude error, 1 sigma", True),
        _px4("gyro_bias_init", "EKF2_GBIAS_INIT", 0.1, "rad/s", "Initial gyro bias, 1 sigma", True),
        _px4("accel_bias_init", "EKF2_ABIAS_INIT", 0.2, "m/s^2", "Initial accelerometer bias, 1 sigma", True),
        Param("fuse_gps", "nexus:fuseGps", "bool", True, doc="Fuse GPS position and velocity (PX4 EKF2_GPS_CTRL)"),
        Param("fuse_baro", "nexus:fuseBaro", "bool", True, doc="Fuse barometric height (PX4 EKF2_BARO_CTRL)"),
        Param("fuse_mag", "nexus:fuseMag", "bool", True, doc="Fuse magnetic heading (PX4 EKF2_MAG_TYPE)"),
        Param("fuse_range", "nexus:fuseRange", "bool", False, doc="Fuse rangefinder height over flat ground "
              "(PX4 EKF2_RNG_CTRL); needs a rangefinder on the vehicle"),
        Param("gps_delay", "nexus:gpsDelay", "float", 0.0, "s", "How long before its sample's time the GPS "
              "measured: the filter compares it with its own state of then (PX4 EKF2_GPS_DELAY, there in ms; "
              "Nexus's GPS reports without delay, so 0)", low=0.0),
        non_negative("baro_bias_noise", "nexus:baroBiasNoise", 0.0, "m/s^0.5",
                     "Random walk of the barometer's offset, estimated (one state beside the filter, as PX4's baro "
                     "bias estimator) from the barometer against the filter's height while the GPS aids it; "
                     "0 (the default, until a landing check reads the estimated height) estimates no offset"),
        positive("gps_required_eph", "nexus:EKF2_REQ_EPH", 3.0, "m", "The first fix the origin is set from "
                 "needs a horizontal accuracy at most this (PX4 EKF2_REQ_EPH, default 3)"),
        positive("gps_required_epv", "nexus:EKF2_REQ_EPV", 5.0, "m", "... and a vertical accuracy at most this "
                 "(PX4 EKF2_REQ_EPV, default 5)"),
        Param("gps_required_satellites", "nexus:EKF2_REQ_NSATS", "int", 6, "-", "... and at least this many "
              "satellites, with a 3D fix (PX4 EKF2_REQ_NSATS, default 6)", low=0),
        positive("no_aid_timeout", "nexus:noAidTimeout", 5.0, "s", "With no GPS fused for this long the filter "
                 "fuses a fake position to stay bounded, and a returning GPS resets the position instead of being "
                 "fused (PX4 EKF2_NOAID_TOUT, there in microseconds, default 5 s)"),
        non_negative("gps_drift_noise", "nexus:gpsDriftNoise", 0.0, "m/s^0.5",
                     "Horizontal position random walk standing in for the GPS's slow correlated drift, which the "
                     "filter does not carry as a state: it keeps the position variance from shrinking below the "
                     "drift the filter cannot see (docs/estimation.md, Consistency); 0 (the default) is PX4's "
                     "filter, which takes each GPS sample's error as independent"),
        non_negative("gps_vertical_drift_noise", "nexus:gpsVerticalDriftNoise", 0.0, "m/s^0.5",
                     "The same for the height"),
        _px4("no_aid_noise", "EKF2_NOAID_NOISE", 10.0, "m", "The fake position's noise in flight; it is fused only "
             "while the horizontal 1-sigma is above it", True),
        non_negative("airspeed_threshold", "nexus:EKF2_ARSP_THR", 0.0, "m/s",
                     "Fuse the pitot's true airspeed while it reads above this, with two wind states (north, east); "
                     "set it to about 0.9 times the stall speed. 0 (the default) fuses no airspeed and carries no "
                     "wind states (PX4 EKF2_ARSP_THR, default 0)"),
        _px4("airspeed_noise", "EKF2_EAS_NOISE", 1.4, "m/s", "True airspeed noise", True),
        _px4("airspeed_gate", "EKF2_TAS_GATE", 5.0, "SD", "True airspeed innovation gate", True),
        Param("fuse_sideslip", "nexus:fuseSideslip", "bool", False, doc="While it fuses airspeed, also fuse a "
              "synthetic sideslip of zero (a plane flies nose into the air), which makes the wind across the track "
              "observable in a straight line (PX4 EKF2_FUSE_BETA)"),
        _px4("sideslip_noise", "EKF2_BETA_NOISE", 0.3, "rad", "Synthetic sideslip noise", True),
        _px4("sideslip_gate", "EKF2_BETA_GATE", 5.0, "SD", "Synthetic sideslip innovation gate", True),
        _px4("wind_noise", "EKF2_WIND_NSD", 0.05, "m/s^2/sqrt(Hz)", "Wind process noise: the wind's 1-sigma grows by "
             "this every second unaided"),
        Param("covariance_decimation", "nexus:covarianceDecimation", "int", 2, "-",
              "IMU samples per covariance prediction (PX4 predicts at 100 Hz; 2 at a 250 Hz IMU is 125 Hz)", low=1),
        positive("horizontal_valid_limit", "nexus:horizontalValidLimit", 5.0, "m",
                 "Horizontal position is valid while its 1-sigma (the larger axis) is below this"),
        positive("vertical_valid_limit", "nexus:verticalValidLimit", 5.0, "m",
                 "Vertical position is valid while its 1-sigma is below this"),
    ),
    inputs=(
        Input("imu", ImuSample, connectable=True, doc="The IMU the filter predicts from."),
        Input("gps", GpsSample, connectable=True, doc="The GPS it fuses (with nexus:fuseGps)."),
        Input("baro", BaroSample, connectable=True, doc="The barometer it fuses (with nexus:fuseBaro)."),
        Input("mag", MagSample, connectable=True, doc="The magnetometer it fuses (with nexus:fuseMag)."),
        Input("range", RangeSample, connectable=True, doc="The rangefinder it fuses (with nexus:fuseRange)."),
        Input("airspeed", AirspeedSample, default=AirspeedSample(),
              doc="The pitot it fuses (with nexus:EKF2_ARSP_THR above 0; nexus/sensors/airspeed.py)."),
        Input("time", wp.float64),
    ),
    outputs=(
        Output("estimate", PoseTwist, recorded=True, doc="Pose and twist, NED/FRD"),
        Output(STATUS_SIGNAL, wp.int32, recorded=True, doc="Bits (nexus.estimation.estimate_status): 1 tilt, 2 yaw "
               "aligned; aiding 4 GPS, 8 baro, 16 mag, 32 range; 64 horizontal, 128 vertical position valid; 256 "
               "origin set; faults 512 GPS, 1024 baro, 2048 mag, 4096 range; 8192 fake-position fusion; 16384 "
               "airspeed aiding, 32768 airspeed fault"),
        Output(RESET_SIGNAL, wp.vec3, recorded=True, doc="Sum of every position reset's delta (new - old) [m], NED"),
        Output("ekf_resets", wp.int32, recorded=True, doc="Position resets so far"),
        Output("ekf_variance", wp.float32, (1, N), recorded=True,
               doc="Covariance diagonal: position [m^2], velocity, attitude [rad^2], gyro bias, accel bias"),
        Output("ekf_innovation", wp.float32, (1, SLOTS), recorded=True,
               doc="Last innovation per fused scalar: " + ", ".join(SLOT_NAMES)),
        Output("ekf_test_ratio", wp.float32, (1, SLOTS), recorded=True, doc="Last test ratio per fused scalar"),
        Output("ekf_rejected", wp.int32, (1, SLOTS), recorded=True, doc="Rejections so far per fused scalar"),
    ),
    state=(
        StateVar("nominal", wp.vec3, (8,), 0.0, "position, velocity [NED], gyro bias, accel bias [FRD], "
                 "specific-force velocity change accumulated for the covariance [m/s, NED], position and "
                 "velocity corrections made so far (for a delayed GPS), the first good fix's offset from the scene's "
                 "origin [m, NED]"),
        StateVar("attitude", wp.quat, (1,), 0.0, "FRD-to-NED rotation (set at alignment)"),
        StateVar("covariance", wp.float32, (N, N), 0.0, "error-state covariance"),
        StateVar("times", wp.float64, (8,), -1.0, "last sample time of imu, gps, baro, mag, range [s]; "
                 "accumulated covariance interval [s]; last accepted GPS, baro time [s]"),
        StateVar("references", wp.float32, (7,), 0.0, "baro height at the origin [m], ground down [m], "
                 "samples accumulated, 1 once initialised, barometer offset [m] and its variance [m^2], 1 once "
                 "the origin is set from a good GPS fix"),
        StateVar("history", wp.vec3, (HISTORY, 2), 0.0, "past position and velocity [NED] at each IMU sample, "
                 "less the corrections made until then (nominal 5, 6), with nexus:gpsDelay only"),
        StateVar("history_times", wp.float64, (HISTORY + 1,), 0.0, "the history's sample times [s], then how "
                 "many were written"),
        StateVar("divergence", wp.float32, (1 + SLOTS,), -1.0, "time [s] the filter went non-finite (-1: never), "
                 "then the last innovation per fused scalar at that time"),
        StateVar("monitor", wp.float64, (MONITOR,), 0.0, "sensor health (last sample times, repeat runs, faults, "
                 "last values), the rest detector, the fake position and its mode, the position resets' sum [m, NED] "
                 "and count (slots: nexus.estimation.ekf.MONITOR)"),
        StateVar("wind", wp.vec3, (1,), 0.0, "the wind estimate [m/s] NED (down 0), with nexus:EKF2_ARSP_THR only"),
        StateVar("wind_covariance", wp.float32, (N + NW, NW), 0.0, "the wind's covariance with the 15 states "
                 "(rows 0-14) and its own (rows 15-16) [(unit)·m/s]"),
        StateVar("airspeed_monitor", wp.float64, (AIR_MONITOR,), 0.0, "the pitot's health and the wind states' "
                 "start (slots: nexus.estimation.ekf.AIR_MONITOR)"),
    ),
    stage="ekf_estimate",
    kind="estimate",
)

#: The outputs a filter that fuses airspeed adds; declared only then, so every other flight records what it did before.
#: The filter's wind estimate: what a plane's stack flies once its pitot fails (nexus:airspeedFallback).
WIND_SIGNAL = "ekf_wind"

AIRSPEED_OUTPUTS = (
    Output(WIND_SIGNAL, wp.vec3, recorded=True, doc="The wind estimate [m/s] NED (down 0)"),
    Output("ekf_wind_variance", wp.float32, (1, NW), recorded=True,
           doc="The wind estimate's variance north, east [m^2/s^2]"),
    Output("ekf_airspeed", wp.float32, (1, 3), recorded=True,
           doc="The last true airspeed innovation [m/s], its test ratio [-], and the true airspeed measured [m/s]"),
    Output("ekf_airspeed_rejected", wp.int32, recorded=True, doc="True airspeed samples rejected by the gate so far"),
    Output("ekf_sideslip", wp.float32, (1, 2), recorded=True,
           doc="The last synthetic sideslip innovation [rad] and its test ratio [-] (with nexus:fuseSideslip)"),
    Output("ekf_sideslip_rejected", wp.int32, recorded=True, doc="Synthetic sideslips rejected by the gate so far"),
)


@wp.struct
class EkfTuning:
    """The tuning frozen into the graph: process noise, measurement noise, gates, the Earth's field."""

    gyro_noise: float
    accel_noise: float
    gyro_bias_noise: float
    accel_bias_noise: float
    gps_pos_noise: float
    gps_vel_noise: float
    baro_noise: float
    heading_noise: float
    range_noise: float
    gps_pos_gate: float
    gps_vel_gate: float
    baro_gate: float
    heading_gate: float
    range_gate: float
    initial_sigma: vec15
    decimation: int
    fuse: wp.vec4i
    gravity: float
    field_ned: wp.vec3
    gps_mount_frd: wp.vec3
    origin_ecef: wp.vec3d
    ecef_to_enu: wp.mat33d
    origin_altitude: wp.float64
    horizontal_limit: float
    vertical_limit: float
    gps_delay: wp.float64
    baro_bias_noise: float
    required_eph: float
    required_epv: float
    required_satellites: int
    timeouts: wp.vec4
    repeat_check: wp.vec4i
    no_aid_timeout: wp.float64
    no_aid_noise: float
    drift_variance_rate: wp.vec3
    airspeed_threshold: float  # [m/s]; 0: no airspeed fusion, no wind states
    airspeed_noise: float  # [m/s]
    airspeed_gate: float  # [SD]
    wind_noise: float  # [m/s^2/sqrt(Hz)]
    airspeed_timeout: float  # [s]
    airspeed_repeat_check: int
    fuse_sideslip: int
    sideslip_noise: float  # [rad]
    sideslip_gate: float  # [SD]


@wp.func
def ecef_of(latitude: wp.float64, longitude: wp.float64, height: wp.float64) -> wp.vec3d:
    """WGS-84 geodetic [deg, deg, m] to ECEF [m]."""
    a = wp.float64(6378137.0)
    e2 = wp.float64(6.69437999014e-3)
    phi = latitude * wp.float64(0.017453292519943295)
    lam = longitude * wp.float64(0.017453292519943295)
    s = wp.sin(phi)
    n = a / wp.sqrt(wp.float64(1.0) - e2 * s * s)
    return wp.vec3d((n + height) * wp.cos(phi) * wp.cos(lam), (n + height) * wp.cos(phi) * wp.sin(lam),
                    (n * (wp.float64(1.0) - e2) + height) * s)


@wp.func
def gps_ned(sample: GpsSample, tuning: EkfTuning) -> wp.vec3:
    """The antenna's position [m] NED relative to the NED origin, from latitude, longitude and altitude."""
    enu = tuning.ecef_to_enu * (ecef_of(sample.latitude, sample.longitude, sample.altitude) - tuning.origin_ecef)
    return wp.vec3(wp.float32(enu[1]), wp.float32(enu[0]), wp.float32(tuning.origin_altitude - sample.altitude))


@wp.func
def good_fix(sample: GpsSample, tuning: EkfTuning) -> int:
    """1 when a sample passes the origin's quality checks: a 3D fix, enough satellites, small enough eph, epv."""
    if (sample.fix_type >= 3 and sample.satellites >= tuning.required_satellites
            and sample.eph <= tuning.required_eph and sample.epv <= tuning.required_epv):
        return 1
    return 0


@wp.func
def heading_of(v: wp.vec3) -> float:
    return wp.atan2(v[1], v[0])


@wp.func
def heading_jacobian(f: wp.vec3) -> wp.vec3:
    """The heading innovation's Jacobian on δθ (N, E, D) at the field ``f`` [any unit], NED.

    The true field is exp(δθ)·f ≈ f + δθ × f, so ν = ψ(f + δθ × f) − ψ(f) = ∂ψ/∂f·(−[f]ₓ)·δθ with
    ∂ψ/∂f = (−f_E, f_N, 0)/H², H² = f_N² + f_E²: (−f_N·f_D/H², −f_E·f_D/H², 1). The tilt terms are the
    heading's turn when the field's down component tilts across; none for a horizontal field.
    """
    h2 = f[0] * f[0] + f[1] * f[1]
    if h2 <= 0.0:
        return wp.vec3(0.0, 0.0, 1.0)
    return wp.vec3(-f[0] * f[2] / h2, -f[1] * f[2] / h2, 1.0)


@wp.func
def wrap_pi(angle: float) -> float:
    return wp.atan2(wp.sin(angle), wp.cos(angle))


@wp.func
def inject(nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat), world: int, dx: vec15):
    """Add the error state to the nominal state: q ← exp(δθ) ⊗ q (δθ in NED)."""
    dp = wp.vec3(dx[POS], dx[POS + 1], dx[POS + 2])
    dv = wp.vec3(dx[VEL], dx[VEL + 1], dx[VEL + 2])
    nominal[world, 0] = nominal[world, 0] + dp
    nominal[world, 1] = nominal[world, 1] + dv
    nominal[world, 5] = nominal[world, 5] + dp
    nominal[world, 6] = nominal[world, 6] + dv
    nominal[world, 2] = nominal[world, 2] + wp.vec3(dx[GYRO_BIAS], dx[GYRO_BIAS + 1], dx[GYRO_BIAS + 2])
    nominal[world, 3] = nominal[world, 3] + wp.vec3(dx[ACCEL_BIAS], dx[ACCEL_BIAS + 1], dx[ACCEL_BIAS + 2])
    dtheta = wp.vec3(dx[ATT], dx[ATT + 1], dx[ATT + 2])
    angle = wp.length(dtheta)
    if angle > 0.0:
        turn = wp.quat_from_axis_angle(dtheta / angle, angle)
        attitude[world, 0] = wp.normalize(turn * attitude[world, 0])


@wp.func
def inject_with_wind(nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
                     wind: wp.array2d(dtype=wp.vec3), world: int, dx: vec17):
    """:func:`inject` for the 15 states, and the wind's two added to the wind estimate."""
    dx15 = vec15()
    for i in range(N):
        dx15[i] = dx[i]
    inject(nominal, attitude, world, dx15)
    wind[world, 0] = wind[world, 0] + wp.vec3(dx[WIND], dx[WIND + 1], 0.0)


@wp.func
def fuse_scalar_with_wind(P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32),
                          nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
                          wind: wp.array2d(dtype=wp.vec3), world: int, h: vec15, innovation: float, variance: float):
    """Fuse (ungated) a scalar whose Jacobian ``h`` lies on the 15 states into the 17-state filter, and inject it: the
    wind moves through its correlation with the states the measurement sees."""
    inject_with_wind(nominal, attitude, wind, world, fuse_with_wind(P, Pw, world, h, wp.vec2(0.0, 0.0), innovation,
                                                                     variance))


@wp.func
def passes_gate(innovation: float, S: float, gate: float, world: int, slot: int,
                innovations: wp.array2d(dtype=wp.float32), ratios: wp.array2d(dtype=wp.float32),
                rejected: wp.array2d(dtype=wp.int32)) -> bool:
    """The innovation test of a scalar with innovation variance ``S``: its ratio ν²/(gate²·S) recorded in ``slot``
    beside the innovation, and a rejection counted when it is over 1; True when the scalar may be fused."""
    ratio = innovation * innovation / (gate * gate * S)
    innovations[world, slot] = innovation
    ratios[world, slot] = ratio
    if ratio > 1.0:
        rejected[world, slot] = rejected[world, slot] + 1
        return False
    return True


@wp.func
def fuse(
    P: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
    world: int, k: int, c: float, innovation: float, variance: float, gate: float, slot: int,
    innovations: wp.array2d(dtype=wp.float32), ratios: wp.array2d(dtype=wp.float32),
    rejected: wp.array2d(dtype=wp.int32), Pw: wp.array3d(dtype=wp.float32), wind: wp.array2d(dtype=wp.vec3),
    wind_on: int,
) -> int:
    """Gate one scalar (test ratio ν²/(gate²·S)), fuse and inject it when it passes; 1 when fused. (The 15-state
    filter's: ``Pw``, ``wind`` and ``wind_on`` are not read; :func:`fuse_carrying_wind` has the same arguments.)"""
    S = c * c * P[world, k, k] + variance
    if not passes_gate(innovation, S, gate, world, slot, innovations, ratios, rejected):
        return 0
    inject(nominal, attitude, world, fuse_scalar(P, world, k, c, innovation, variance))
    return 1


@wp.func
def fuse_carrying_wind(
    P: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
    world: int, k: int, c: float, innovation: float, variance: float, gate: float, slot: int,
    innovations: wp.array2d(dtype=wp.float32), ratios: wp.array2d(dtype=wp.float32),
    rejected: wp.array2d(dtype=wp.int32), Pw: wp.array3d(dtype=wp.float32), wind: wp.array2d(dtype=wp.vec3),
    wind_on: int,
) -> int:
    """:func:`fuse` in a filter with wind states: once they are on (``wind_on``) the fusion carries them too (S is the
    same: the measurement does not see the wind)."""
    S = c * c * P[world, k, k] + variance
    if not passes_gate(innovation, S, gate, world, slot, innovations, ratios, rejected):
        return 0
    if wind_on != 0:
        h = vec15()
        h[k] = c
        fuse_scalar_with_wind(P, Pw, nominal, attitude, wind, world, h, innovation, variance)
    else:
        inject(nominal, attitude, world, fuse_scalar(P, world, k, c, innovation, variance))
    return 1


@wp.func
def fuse_attitude(
    P: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
    world: int, h: wp.vec3, innovation: float, variance: float, gate: float, slot: int,
    innovations: wp.array2d(dtype=wp.float32), ratios: wp.array2d(dtype=wp.float32),
    rejected: wp.array2d(dtype=wp.int32), Pw: wp.array3d(dtype=wp.float32), wind: wp.array2d(dtype=wp.vec3),
    wind_on: int,
) -> int:
    """:func:`fuse` for a scalar whose Jacobian ``h`` lies on the attitude error's three entries."""
    S = attitude_variance_of(P, world, h, variance)
    if not passes_gate(innovation, S, gate, world, slot, innovations, ratios, rejected):
        return 0
    inject(nominal, attitude, world, fuse_attitude_scalar(P, world, h, innovation, variance))
    return 1


@wp.func
def fuse_attitude_carrying_wind(
    P: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
    world: int, h: wp.vec3, innovation: float, variance: float, gate: float, slot: int,
    innovations: wp.array2d(dtype=wp.float32), ratios: wp.array2d(dtype=wp.float32),
    rejected: wp.array2d(dtype=wp.int32), Pw: wp.array3d(dtype=wp.float32), wind: wp.array2d(dtype=wp.vec3),
    wind_on: int,
) -> int:
    """:func:`fuse_attitude` in a filter with wind states (as :func:`fuse_carrying_wind`)."""
    S = attitude_variance_of(P, world, h, variance)
    if not passes_gate(innovation, S, gate, world, slot, innovations, ratios, rejected):
        return 0
    if wind_on != 0:
        h15 = vec15()
        for r in range(3):
            h15[ATT + r] = h[r]
        fuse_scalar_with_wind(P, Pw, nominal, attitude, wind, world, h15, innovation, variance)
    else:
        inject(nominal, attitude, world, fuse_attitude_scalar(P, world, h, innovation, variance))
    return 1


@wp.func
def reset_wind_from_airspeed(P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32),
                             nominal: wp.array2d(dtype=wp.vec3), attitude: wp.array2d(dtype=wp.quat),
                             wind: wp.array2d(dtype=wp.vec3), world: int, airspeed: float, noise: float):
    """Start the wind states as PX4 does when airspeed fusion starts: no sideslip, so the air moves along the heading
    ψ at the measured ``airspeed`` [m/s]: w = v − airspeed·(cos ψ, sin ψ). Its variance on each axis: the airspeed's
    noise², the horizontal velocity's variance (the larger axis) and the heading's, airspeed²·σ_ψ²; uncorrelated."""
    forward = wp.quat_rotate(attitude[world, 0], wp.vec3(1.0, 0.0, 0.0))
    psi = wp.atan2(forward[1], forward[0])
    v = nominal[world, 1]
    wind[world, 0] = wp.vec3(v[0] - airspeed * wp.cos(psi), v[1] - airspeed * wp.sin(psi), 0.0)
    variance = noise * noise + wp.max(P[world, VEL, VEL], P[world, VEL + 1, VEL + 1]) \
        + airspeed * airspeed * P[world, ATT + 2, ATT + 2]
    for i in range(N + NW):
        for a in range(NW):
            Pw[world, i, a] = 0.0
    for a in range(NW):
        Pw[world, WIND + a, a] = variance


@wp.func
def forget_wind_correlation(Pw: wp.array3d(dtype=wp.float32), world: int, i: int):
    """Row ``i`` of the wind's cross-covariance to zero: state ``i`` was reset, so no longer tied to the wind."""
    for a in range(NW):
        Pw[world, i, a] = 0.0


@wp.func
def remember(nominal: wp.array2d(dtype=wp.vec3), history: wp.array3d(dtype=wp.vec3),
             history_times: wp.array2d(dtype=wp.float64), world: int, t: wp.float64):
    """Keep this sample's position and velocity, less the corrections so far, in the ring of HISTORY."""
    count = history_times[world, HISTORY]
    slot = int(count) % HISTORY
    history[world, slot, 0] = nominal[world, 0] - nominal[world, 5]
    history[world, slot, 1] = nominal[world, 1] - nominal[world, 6]
    history_times[world, slot] = t
    history_times[world, HISTORY] = count + wp.float64(1.0)


@wp.func
def recall(history: wp.array3d(dtype=wp.vec3), history_times: wp.array2d(dtype=wp.float64), world: int,
           t: wp.float64, which: int) -> wp.vec3:
    """Position (``which`` 0) or velocity (1) at time ``t``, less the corrections made until then: linear
    between the two samples around ``t``; the oldest kept when ``t`` is older, the newest when newer."""
    count = int(history_times[world, HISTORY])
    kept = wp.min(count, HISTORY)
    newer = (count - 1) % HISTORY
    if history_times[world, newer] <= t:
        return history[world, newer, which]
    for i in range(1, kept):
        older = (count - 1 - i) % HISTORY
        t0 = history_times[world, older]
        if t0 <= t:
            t1 = history_times[world, newer]
            a = float((t - t0) / (t1 - t0))
            return history[world, older, which] * (1.0 - a) + history[world, newer, which] * a
        newer = older
    return history[world, newer, which]


@wp.func
def watch(monitor: wp.array2d(dtype=wp.float64), world: int, k: int, sample_time: wp.float64, now: wp.float64,
          timeout: float, same: int) -> int:
    """Sensor ``k``'s health after its newest sample (``same``: a new sample whose values repeat the last one's,
    counted only for a sensor that declares noise): faulted after REPEATS repeats, or while its newest sample is
    older than ``timeout`` [s]; a new, changed sample clears it. 1 while the sensor may be fused."""
    if sample_time != monitor[world, k]:
        monitor[world, k] = sample_time
        if same != 0:
            monitor[world, 4 + k] = monitor[world, 4 + k] + wp.float64(1.0)
            if monitor[world, 4 + k] >= wp.float64(REPEATS):
                monitor[world, MON_FAULT + k] = wp.float64(1.0)
        else:
            monitor[world, 4 + k] = wp.float64(0.0)
            monitor[world, MON_FAULT + k] = wp.float64(0.0)
    if now - sample_time > wp.float64(timeout):
        monitor[world, MON_FAULT + k] = wp.float64(1.0)
    return 1 - int(monitor[world, MON_FAULT + k])


@wp.func
def remember_value(monitor: wp.array2d(dtype=wp.float64), world: int, slot: int, value: wp.float64) -> int:
    """Keep ``value`` in ``slot``; 1 when it equals what the slot held."""
    same = int(0)
    if monitor[world, slot] == value:
        same = 1
    monitor[world, slot] = value
    return same


@wp.func
def reset_to_gps(P: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3),
                 monitor: wp.array2d(dtype=wp.float64), world: int, position: wp.vec3, velocity: wp.vec3,
                 position_noise: float, velocity_noise: float):
    """Horizontal position and the velocity set to the GPS's, their covariance to its noise (uncorrelated), the
    position's delta (new - old) added to the reset sum and counted; the corrections' sums (nominal 5, 6) take the
    deltas too, so a delayed GPS's history stays consistent."""
    old = nominal[world, 0]
    delta = wp.vec3(position[0] - old[0], position[1] - old[1], 0.0)
    nominal[world, 0] = old + delta
    nominal[world, 5] = nominal[world, 5] + delta
    nominal[world, 6] = nominal[world, 6] + velocity - nominal[world, 1]
    nominal[world, 1] = velocity
    for i in range(6):
        if i != 2:
            for j in range(N):
                P[world, i, j] = 0.0
                P[world, j, i] = 0.0
            if i < 3:
                P[world, i, i] = position_noise * position_noise
            else:
                P[world, i, i] = velocity_noise * velocity_noise
    for r in range(3):
        monitor[world, MON_RESET + r] = monitor[world, MON_RESET + r] + wp.float64(delta[r])
    monitor[world, MON_RESETS] = monitor[world, MON_RESETS] + wp.float64(1.0)


@wp.func
def tilt_heading(accel: wp.vec3, field_body: wp.vec3, use_mag: int, field_ned: wp.vec3) -> wp.quat:
    """Alignment at rest: roll and pitch from the specific force, heading from the magnetometer."""
    roll = wp.atan2(-accel[1], -accel[2])
    pitch = wp.atan2(accel[0], wp.sqrt(accel[1] * accel[1] + accel[2] * accel[2]))
    tilt = wp.quat_from_axis_angle(wp.vec3(0.0, 1.0, 0.0), pitch) * wp.quat_from_axis_angle(wp.vec3(1.0, 0.0, 0.0), roll)
    yaw = float(0.0)
    if use_mag != 0:
        yaw = wrap_pi(heading_of(field_ned) - heading_of(wp.quat_rotate(tilt, field_body)))
    return wp.quat_from_axis_angle(wp.vec3(0.0, 0.0, 1.0), yaw) * tilt


@wp.func
def fuse_airspeed_sample(
    P: wp.array3d(dtype=wp.float32), Pw: wp.array3d(dtype=wp.float32), nominal: wp.array2d(dtype=wp.vec3),
    attitude: wp.array2d(dtype=wp.quat), wind: wp.array2d(dtype=wp.vec3), air_monitor: wp.array2d(dtype=wp.float64),
    world: int, s_air: AirspeedSample, air_ok: int, tuning: EkfTuning, now: wp.float64,
    air_innovation: wp.array2d(dtype=wp.float32), air_rejected: wp.array(dtype=wp.int32),
    beta_innovation: wp.array2d(dtype=wp.float32), beta_rejected: wp.array(dtype=wp.int32),
):
    """A new pitot sample: its true airspeed, which starts the wind states the first time it is above
    EKF2_ARSP_THR and is fused (gated) after; then, every SIDESLIP_PERIOD, the synthetic sideslip."""
    if s_air.time != air_monitor[world, AIR_TAKEN]:
        air_monitor[world, AIR_TAKEN] = s_air.time
        # The true airspeed as the pitot declares it: q = ½·ρ·u·|u| at ISA density at the estimated altitude.
        density = float(isa_density(tuning.origin_altitude - wp.float64(nominal[world, 0][2])))
        measured = pitot_speed(s_air.differential_pressure, density)
        air_monitor[world, AIR_SPEED] = wp.float64(measured)
        air_innovation[world, 2] = measured
        if air_ok != 0 and measured > tuning.airspeed_threshold:
            if air_monitor[world, AIR_WIND_ON] == wp.float64(0.0):
                reset_wind_from_airspeed(P, Pw, nominal, attitude, wind, world, measured, tuning.airspeed_noise)
                air_monitor[world, AIR_WIND_ON] = wp.float64(1.0)
            else:
                v = nominal[world, 1]
                w = wind[world, 0]
                predicted = wp.length(wp.vec3(v[0] - w[0], v[1] - w[1], v[2]))
                if predicted > AIR_SPEED_MIN:
                    dv = true_airspeed_jacobian(v, w)
                    h = vec15()
                    for r in range(3):
                        h[VEL + r] = dv[r]
                    hw = wp.vec2(-dv[0], -dv[1])
                    variance = tuning.airspeed_noise * tuning.airspeed_noise
                    innovation = measured - predicted
                    S = wind_innovation_variance(P, Pw, world, h, hw, variance)
                    ratio = innovation * innovation / (tuning.airspeed_gate * tuning.airspeed_gate * S)
                    air_innovation[world, 0] = innovation
                    air_innovation[world, 1] = ratio
                    if ratio > 1.0:
                        air_rejected[world] = air_rejected[world] + 1
                    else:
                        inject_with_wind(nominal, attitude, wind, world,
                                         fuse_with_wind(P, Pw, world, h, hw, innovation, variance))
                        air_monitor[world, AIR_ACCEPTED] = now
    # The synthetic sideslip, zero: every SIDESLIP_PERIOD while the airspeed is fused (PX4's EKF2_FUSE_BETA).
    if (tuning.fuse_sideslip != 0 and air_monitor[world, AIR_WIND_ON] != wp.float64(0.0) and air_ok != 0
            and air_monitor[world, AIR_SPEED] > wp.float64(tuning.airspeed_threshold)
            and now - air_monitor[world, AIR_BETA] > wp.float64(SIDESLIP_PERIOD - 1.0e-6)):
        air_monitor[world, AIR_BETA] = now
        R = wp.quat_to_matrix(attitude[world, 0])
        v = nominal[world, 1]
        w = wind[world, 0]
        u = wp.vec3(v[0] - w[0], v[1] - w[1], v[2])
        body_air = wp.transpose(R) * u
        if body_air[0] > AIR_SPEED_MIN:
            dv = sideslip_velocity_jacobian(R, u)
            dtheta = sideslip_attitude_jacobian(R, u)
            h = vec15()
            for r in range(3):
                h[VEL + r] = dv[r]
                h[ATT + r] = dtheta[r]
            hw = wp.vec2(-dv[0], -dv[1])
            variance = tuning.sideslip_noise * tuning.sideslip_noise
            innovation = 0.0 - body_air[1] / body_air[0]
            S = wind_innovation_variance(P, Pw, world, h, hw, variance)
            ratio = innovation * innovation / (tuning.sideslip_gate * tuning.sideslip_gate * S)
            beta_innovation[world, 0] = innovation
            beta_innovation[world, 1] = ratio
            if ratio > 1.0:
                beta_rejected[world] = beta_rejected[world] + 1
            else:
                inject_with_wind(nominal, attitude, wind, world,
                                 fuse_with_wind(P, Pw, world, h, hw, innovation, variance))


@wp.struct
class EkfStateArrays:
    """The filter's state arrays, by the kernel's names (one struct argument: a launch costs a few nanoseconds per
    argument on the CPU, and the filter has 24 state arrays in and out)."""

    nominal: wp.array2d(dtype=wp.vec3)
    attitude: wp.array2d(dtype=wp.quat)
    P: wp.array3d(dtype=wp.float32)
    times: wp.array2d(dtype=wp.float64)
    refs: wp.array2d(dtype=wp.float32)
    history: wp.array3d(dtype=wp.vec3)
    history_times: wp.array2d(dtype=wp.float64)
    divergence: wp.array2d(dtype=wp.float32)
    monitor: wp.array2d(dtype=wp.float64)
    wind: wp.array2d(dtype=wp.vec3)
    Pw: wp.array3d(dtype=wp.float32)
    air_monitor: wp.array2d(dtype=wp.float64)


#: The component's state keys (the spec's state, in order), in :class:`EkfStateArrays`' field order.
STATE_KEYS = ("nominal", "attitude", "covariance", "times", "references", "history", "history_times", "divergence",
              "monitor", "wind", "wind_covariance", "airspeed_monitor")


def state_arrays(arrays) -> EkfStateArrays:
    """``arrays`` (the component's state: by key, or a sequence in :data:`STATE_KEYS`' order) as one
    :class:`EkfStateArrays`, made at each launch: a struct holds its arrays as they were when set, so one made once
    would miss a gradient buffer given to them later."""
    values = [arrays[key] for key in STATE_KEYS] if hasattr(arrays, "keys") else list(arrays)
    if len(values) != len(STATE_KEYS):
        raise ValueError(f"the EKF has {len(STATE_KEYS)} state arrays, got {len(values)}")
    out = EkfStateArrays()
    for field, array in zip(EkfStateArrays.vars, values):
        setattr(out, field, array)
    return out


def make_ekf_step(with_wind: bool):
    """The filter's kernel: without wind states (``with_wind`` False: the 15-state filter, every airspeed and wind
    branch left out of its code by ``wp.static``, so it costs and computes what it did before they existed), or
    with them (a filter that fuses airspeed). Both take the same arguments."""
    fuse_one = fuse_carrying_wind if with_wind else fuse
    fuse_heading = fuse_attitude_carrying_wind if with_wind else fuse_attitude

    @wp.kernel
    def ekf_step(
        imu: wp.array(dtype=ImuSample),
        gps: wp.array(dtype=GpsSample),
        baro: wp.array(dtype=BaroSample),
        mag: wp.array(dtype=MagSample),
        rng: wp.array(dtype=RangeSample),
        air: wp.array(dtype=AirspeedSample),
        time: wp.array(dtype=wp.float64),
        tuning: EkfTuning,
        in_place: int,
        state_in: EkfStateArrays,
        state_out: EkfStateArrays,
        estimate: wp.array(dtype=PoseTwist),
        status: wp.array(dtype=wp.int32),
        variances: wp.array2d(dtype=wp.float32),
        innovations: wp.array2d(dtype=wp.float32),
        ratios: wp.array2d(dtype=wp.float32),
        rejected: wp.array2d(dtype=wp.int32),
        done: wp.array(dtype=wp.int32),
        reset: wp.array(dtype=wp.vec3),
        resets: wp.array(dtype=wp.int32),
        wind_out: wp.array(dtype=wp.vec3),
        wind_variance: wp.array2d(dtype=wp.float32),
        air_innovation: wp.array2d(dtype=wp.float32),
        air_rejected: wp.array(dtype=wp.int32),
        beta_innovation: wp.array2d(dtype=wp.float32),
        beta_rejected: wp.array(dtype=wp.int32),
    ):
        world = wp.tid()
        nominal, attitude, P, times = state_out.nominal, state_out.attitude, state_out.P, state_out.times
        refs, history, history_times = state_out.refs, state_out.history, state_out.history_times
        divergence, monitor, wind = state_out.divergence, state_out.monitor, state_out.wind
        Pw, air_monitor = state_out.Pw, state_out.air_monitor
        if in_place == 0:  # a differentiable caller's fresh state_out; in a run the state advances in place
            nominal_in, attitude_in, P_in, times_in = state_in.nominal, state_in.attitude, state_in.P, state_in.times
            refs_in, history_in, history_times_in = state_in.refs, state_in.history, state_in.history_times
            divergence_in, monitor_in, wind_in = state_in.divergence, state_in.monitor, state_in.wind
            Pw_in, air_monitor_in = state_in.Pw, state_in.air_monitor
            for i in range(8):
                nominal[world, i] = nominal_in[world, i]
            attitude[world, 0] = attitude_in[world, 0]
            for i in range(8):
                times[world, i] = times_in[world, i]
            for i in range(7):
                refs[world, i] = refs_in[world, i]
            for i in range(N):
                for j in range(N):
                    P[world, i, j] = P_in[world, i, j]
            for i in range(1 + SLOTS):
                divergence[world, i] = divergence_in[world, i]
            for i in range(MONITOR):
                monitor[world, i] = monitor_in[world, i]
            if tuning.gps_delay > wp.float64(0.0):
                for i in range(HISTORY):
                    history[world, i, 0] = history_in[world, i, 0]
                    history[world, i, 1] = history_in[world, i, 1]
                for i in range(HISTORY + 1):
                    history_times[world, i] = history_times_in[world, i]
            if wp.static(with_wind):
                wind[world, 0] = wind_in[world, 0]
                for i in range(N + NW):
                    for a in range(NW):
                        Pw[world, i, a] = Pw_in[world, i, a]
                for i in range(AIR_MONITOR):
                    air_monitor[world, i] = air_monitor_in[world, i]
        if done[world] == DIVERGED:
            return  # the state stays as it was on the tick it went non-finite, for run.log
        s_imu = imu[world]
        s_gps = gps[world]
        s_baro = baro[world]
        s_mag = mag[world]
        s_rng = rng[world]
        s_air = air[world]
        fuse_gps = tuning.fuse[0]
        fuse_baro = tuning.fuse[1]
        fuse_mag = tuning.fuse[2]
        fuse_rng = tuning.fuse[3]

        if refs[world, 3] == 0.0:
            # Alignment from the samples the start-up took at rest.
            q = tilt_heading(s_imu.accel, s_mag.field, fuse_mag, tuning.field_ned)
            attitude[world, 0] = q
            # The origin is the base where it is aligned; the GPS places it once a fix passes the quality checks.
            p0 = wp.vec3(0.0)
            for i in range(0, 8):
                nominal[world, i] = wp.vec3(0.0)
            refs[world, 6] = 0.0
            # The position's variance: the initial sigma's; the first fix's own noise when it places the origin.
            position_variance = wp.vec3(tuning.initial_sigma[POS] * tuning.initial_sigma[POS],
                                        tuning.initial_sigma[POS + 1] * tuning.initial_sigma[POS + 1],
                                        tuning.initial_sigma[POS + 2] * tuning.initial_sigma[POS + 2])
            if fuse_gps != 0 and good_fix(s_gps, tuning) != 0:
                nominal[world, 7] = gps_ned(s_gps, tuning) - wp.quat_rotate(q, tuning.gps_mount_frd)
                refs[world, 6] = 1.0
                h_sigma = wp.max(tuning.gps_pos_noise, s_gps.eph)
                v_sigma = wp.max(1.5 * tuning.gps_pos_noise, s_gps.epv)
                position_variance = wp.vec3(h_sigma * h_sigma, h_sigma * h_sigma, v_sigma * v_sigma)
            # The alignment's linearisation: J[:, i] = how far the attitude it takes turns [rad] for a step of the
            # specific force along i [m/s²] (tilt, and through the tilted field the heading); the attitude error is
            # then −J·(accelerometer bias + noise), and P starts with that tie to the bias (ekf_math).
            J = wp.mat33(0.0)
            for i in range(3):
                step = wp.vec3(0.0)
                step[i] = ALIGNMENT_STEP
                turned = rotation_vector(tilt_heading(s_imu.accel + step, s_mag.field, fuse_mag, tuning.field_ned)
                                         * wp.quat_inverse(q))
                for r in range(3):
                    J[r, i] = turned[r] / ALIGNMENT_STEP
            yaw_variance = float(0.0)
            if fuse_mag != 0:
                yaw_variance = tuning.heading_noise * tuning.heading_noise  # the heading of one magnetometer sample
            alignment_covariance(P, world, tuning.initial_sigma, position_variance, J, yaw_variance)
            refs[world, 0] = s_baro.pressure_altitude + p0[2]
            refs[world, 1] = 0.0
            refs[world, 2] = 0.0
            refs[world, 3] = 1.0
            refs[world, 4] = 0.0
            # The barometer's offset starts as its reference's error: one sample's noise (and the first fix's height).
            refs[world, 5] = tuning.baro_noise * tuning.baro_noise + position_variance[2] * refs[world, 6]
            times[world, 0] = s_imu.time
            times[world, 1] = s_gps.time
            times[world, 2] = s_baro.time
            times[world, 3] = s_mag.time
            times[world, 4] = s_rng.time
            times[world, 5] = wp.float64(0.0)
            times[world, 6] = s_gps.time
            times[world, 7] = s_baro.time
            if tuning.gps_delay > wp.float64(0.0):
                history_times[world, HISTORY] = wp.float64(0.0)
                remember(nominal, history, history_times, world, s_imu.time)
            if wp.static(with_wind):  # the wind states wait for the first airspeed above the threshold
                wind[world, 0] = wp.vec3(0.0)
                for i in range(N + NW):
                    for a in range(NW):
                        Pw[world, i, a] = 0.0
                for i in range(AIR_MONITOR):
                    air_monitor[world, i] = wp.float64(0.0)
                air_monitor[world, 0] = s_air.time
                air_monitor[world, AIR_TAKEN] = s_air.time
                air_monitor[world, AIR_PRESSURE] = wp.float64(s_air.differential_pressure)
                air_monitor[world, AIR_ACCEPTED] = wp.float64(-1.0e9)
        else:
            # 1. Nominal prediction from a new IMU sample.
            new_imu = s_imu.time != times[world, 0]
            if new_imu:
                dt = float(s_imu.time - times[world, 0])
                times[world, 0] = s_imu.time
                q = attitude[world, 0]
                omega = s_imu.gyro - nominal[world, 2]
                angle = wp.length(omega) * dt
                if angle > 0.0:
                    q = wp.normalize(q * wp.quat_from_axis_angle(wp.normalize(omega), angle))
                dv = wp.quat_rotate(q, (s_imu.accel - nominal[world, 3]) * dt)
                v0 = nominal[world, 1]
                v1 = v0 + dv + wp.vec3(0.0, 0.0, tuning.gravity * dt)
                nominal[world, 1] = v1
                nominal[world, 0] = nominal[world, 0] + (v0 + v1) * (0.5 * dt)
                attitude[world, 0] = q
                nominal[world, 4] = nominal[world, 4] + dv
                times[world, 5] = times[world, 5] + wp.float64(dt)
                refs[world, 2] = refs[world, 2] + 1.0
                # 2. Covariance prediction over the accumulated interval.
                if int(refs[world, 2]) >= tuning.decimation:
                    T = float(times[world, 5])
                    q_diag = vec15()
                    for r in range(3):
                        q_diag[VEL + r] = (tuning.accel_noise * T) * (tuning.accel_noise * T)
                        q_diag[ATT + r] = (tuning.gyro_noise * T) * (tuning.gyro_noise * T)
                        q_diag[GYRO_BIAS + r] = (tuning.gyro_bias_noise * T) * (tuning.gyro_bias_noise * T)
                        q_diag[ACCEL_BIAS + r] = (tuning.accel_bias_noise * T) * (tuning.accel_bias_noise * T)
                        q_diag[POS + r] = tuning.drift_variance_rate[r] * T  # a random walk's variance: σ²·T
                    predict_covariance(P, P, world, T, nominal[world, 4], wp.quat_to_matrix(q), q_diag)
                    if wp.static(with_wind):
                        if air_monitor[world, AIR_WIND_ON] != wp.float64(0.0):
                            # PX4's wind noise grows with the height rate: climbing or sinking crosses the wind's
                            # layers.
                            density = tuning.wind_noise * (1.0 + WIND_NOISE_PER_CLIMB * wp.abs(v1[2]))
                            predict_wind_covariance(Pw, world, T, nominal[world, 4], wp.quat_to_matrix(q),
                                                    density * density * T, WIND_VARIANCE_LIMIT)
                    nominal[world, 4] = wp.vec3(0.0)
                    times[world, 5] = wp.float64(0.0)
                    refs[world, 2] = 0.0

            # The rest detector (gyro and specific force quiet, near the height it aligned at) and each fused sensor's
            # health: no new sample within its timeout, or REPEATS new samples repeating the last one's values.
            now = time[world]
            if new_imu and (wp.length(s_imu.gyro) > REST_RATE or wp.abs(wp.length(s_imu.accel) - tuning.gravity) > REST_ACCEL
                            or wp.abs(nominal[world, 0][2]) > REST_HEIGHT):
                monitor[world, MON_MOVED] = s_imu.time
            at_rest = s_imu.time - monitor[world, MON_MOVED] > wp.float64(REST_TIME)
            gps_ok = int(1)
            if fuse_gps != 0:
                same = int(0)
                if s_gps.time != monitor[world, 0]:
                    n = (remember_value(monitor, world, 12, s_gps.latitude) + remember_value(monitor, world, 13, s_gps.longitude)
                         + remember_value(monitor, world, 14, s_gps.altitude))
                    for r in range(3):
                        n += remember_value(monitor, world, 15 + r, wp.float64(s_gps.velocity[r]))
                    if n == 6:
                        same = tuning.repeat_check[0]
                gps_ok = watch(monitor, world, 0, s_gps.time, now, tuning.timeouts[0], same)
            baro_ok = int(1)
            if fuse_baro != 0:
                same = int(0)
                if s_baro.time != monitor[world, 1]:
                    same = remember_value(monitor, world, 18, wp.float64(s_baro.pressure_altitude)) * tuning.repeat_check[1]
                baro_ok = watch(monitor, world, 1, s_baro.time, now, tuning.timeouts[1], same)
            mag_ok = int(1)
            if fuse_mag != 0:
                same = int(0)
                if s_mag.time != monitor[world, 2]:
                    n = int(0)
                    for r in range(3):
                        n += remember_value(monitor, world, 19 + r, wp.float64(s_mag.field[r]))
                    if n == 3:
                        same = tuning.repeat_check[2]
                mag_ok = watch(monitor, world, 2, s_mag.time, now, tuning.timeouts[2], same)
            rng_ok = int(1)
            if fuse_rng != 0:
                same = int(0)
                if s_rng.time != monitor[world, 3]:
                    same = remember_value(monitor, world, 22, wp.float64(s_rng.distance)) * s_rng.valid * tuning.repeat_check[3]
                rng_ok = watch(monitor, world, 3, s_rng.time, now, tuning.timeouts[3], same)
            air_ok = int(1)
            wind_on = int(0)
            if wp.static(with_wind):
                same = int(0)
                if s_air.time != air_monitor[world, 0]:
                    same = remember_value(air_monitor, world, AIR_PRESSURE, wp.float64(s_air.differential_pressure)) \
                        * tuning.airspeed_repeat_check
                air_ok = watch(air_monitor, world, 0, s_air.time, now, tuning.airspeed_timeout, same)
                if air_monitor[world, AIR_WIND_ON] != wp.float64(0.0):
                    wind_on = 1

            # 3. Fusion, one scalar at a time.
            if (fuse_gps != 0 and gps_ok != 0 and s_gps.time != times[world, 1] and refs[world, 6] == 0.0
                    and good_fix(s_gps, tuning) != 0):
                # The first good fix sets the origin where the estimate has the base now, so nothing jumps.
                times[world, 1] = s_gps.time
                nominal[world, 7] = (gps_ned(s_gps, tuning) - wp.quat_rotate(attitude[world, 0], tuning.gps_mount_frd)
                                     - nominal[world, 0])
                refs[world, 6] = 1.0
            if (fuse_gps != 0 and gps_ok != 0 and s_gps.time != times[world, 1] and s_gps.fix_type >= 3
                    and refs[world, 6] != 0.0):
                times[world, 1] = s_gps.time
                q = attitude[world, 0]
                omega = s_imu.gyro - nominal[world, 2]
                antenna = gps_ned(s_gps, tuning) - nominal[world, 7] - wp.quat_rotate(q, tuning.gps_mount_frd)
                velocity = s_gps.velocity - wp.quat_rotate(q, wp.cross(omega, tuning.gps_mount_frd))
                h_var = wp.max(tuning.gps_pos_noise, s_gps.eph)
                v_var = wp.max(1.5 * tuning.gps_pos_noise, s_gps.epv)
                # The state the sample describes: now, or (delayed) the state of then plus every correction since,
                # which the correction sums (nominal 5, 6) carry: p(t − d) = [p − Σδp](t − d) + Σδp(now).
                past_p = wp.vec3(0.0)
                past_v = wp.vec3(0.0)
                delayed = tuning.gps_delay > wp.float64(0.0)
                if delayed:
                    past_p = recall(history, history_times, world, s_gps.time - tuning.gps_delay, 0)
                    past_v = recall(history, history_times, world, s_gps.time - tuning.gps_delay, 1)
                accepted = int(0)
                # (Invalid counts only for a GPS whose own noise is under the limit: else every sample would reset.)
                lost = now - times[world, 6] > tuning.no_aid_timeout or (
                    wp.sqrt(wp.max(P[world, 0, 0], P[world, 1, 1])) >= tuning.horizontal_limit
                    and h_var < tuning.horizontal_limit)
                if lost:
                    # Aiding was lost: take the GPS's position and velocity as they are (a recorded reset), not a
                    # fusion the gate would refuse or a pull that spikes the velocity.
                    reset_to_gps(P, nominal, monitor, world, antenna + velocity * float(tuning.gps_delay), velocity,
                                 h_var, tuning.gps_vel_noise)
                    if wp.static(with_wind):
                        if wind_on != 0:
                            for i in range(6):
                                if i != 2:
                                    forget_wind_correlation(Pw, world, i)
                    accepted = 1
                for r in range(3):
                    if lost:
                        break
                    sigma = h_var
                    if r == 2:
                        sigma = v_var
                    predicted = nominal[world, 0][r]
                    if delayed:
                        predicted = past_p[r] + nominal[world, 5][r]
                    accepted += wp.static(fuse_one)(P, nominal, attitude, world, POS + r, 1.0, antenna[r] - predicted,
                                     sigma * sigma, tuning.gps_pos_gate, GPS_POS + r, innovations, ratios, rejected, Pw, wind, wind_on)
                for r in range(3):
                    if lost:
                        break
                    predicted = nominal[world, 1][r]
                    if delayed:
                        predicted = past_v[r] + nominal[world, 6][r]
                    accepted += wp.static(fuse_one)(P, nominal, attitude, world, VEL + r, 1.0, velocity[r] - predicted,
                                     tuning.gps_vel_noise * tuning.gps_vel_noise, tuning.gps_vel_gate, GPS_VEL + r,
                                     innovations, ratios, rejected, Pw, wind, wind_on)
                if accepted > 0:
                    times[world, 6] = s_gps.time
            if fuse_baro != 0 and baro_ok != 0 and s_baro.time != times[world, 2]:
                predicted = refs[world, 0] - nominal[world, 0][2]
                noise = tuning.baro_noise * tuning.baro_noise
                if tuning.baro_bias_noise > 0.0 and fuse_gps != 0 and s_baro.time - times[world, 6] < wp.float64(AIDING_TIMEOUT):
                    # The barometer's offset b, a random walk, from the barometer against the filter's height, only
                    # while the GPS holds that height (else the two would only chase each other).
                    pb = refs[world, 5] + tuning.baro_bias_noise * tuning.baro_bias_noise * float(s_baro.time - times[world, 2])
                    gain = pb / (pb + noise + P[world, 2, 2])
                    refs[world, 4] = refs[world, 4] + gain * (s_baro.pressure_altitude - predicted - refs[world, 4])
                    refs[world, 5] = (1.0 - gain) * pb
                times[world, 2] = s_baro.time
                if wp.static(fuse_one)(P, nominal, attitude, world, POS + 2, -1.0, s_baro.pressure_altitude - refs[world, 4] - predicted,
                        noise, tuning.baro_gate, BARO, innovations, ratios, rejected, Pw, wind, wind_on) > 0:
                    times[world, 7] = s_baro.time
            if fuse_mag != 0 and mag_ok != 0 and s_mag.time != times[world, 3]:
                times[world, 3] = s_mag.time
                field = wp.quat_rotate(attitude[world, 0], s_mag.field)
                innovation = wrap_pi(heading_of(tuning.field_ned) - heading_of(field))
                # The Jacobian at the predicted field (the model's), not the measured one: the measured field's noise
                # across the horizontal field is the innovation's noise, and a Jacobian taken from it too would
                # correlate with the innovation and push the tilt one way sample after sample.
                wp.static(fuse_heading)(P, nominal, attitude, world, heading_jacobian(tuning.field_ned), innovation,
                              tuning.heading_noise * tuning.heading_noise, tuning.heading_gate, HEADING, innovations,
                              ratios, rejected, Pw, wind, wind_on)
            if fuse_rng != 0 and rng_ok != 0 and s_rng.time != times[world, 4]:
                times[world, 4] = s_rng.time
                cos_tilt = wp.quat_to_matrix(attitude[world, 0])[2, 2]
                if s_rng.valid != 0 and cos_tilt > 0.7:
                    if refs[world, 1] == 0.0:
                        refs[world, 1] = nominal[world, 0][2] + s_rng.distance * cos_tilt  # the ground, down [m]
                    else:
                        predicted = (refs[world, 1] - nominal[world, 0][2]) / cos_tilt
                        wp.static(fuse_one)(P, nominal, attitude, world, POS + 2, -1.0 / cos_tilt, s_rng.distance - predicted,
                             tuning.range_noise * tuning.range_noise, tuning.range_gate, RANGE, innovations, ratios,
                             rejected, Pw, wind, wind_on)
            if wp.static(with_wind):
                fuse_airspeed_sample(P, Pw, nominal, attitude, wind, air_monitor, world, s_air, air_ok, tuning, now,
                                     air_innovation, air_rejected, beta_innovation, beta_rejected)
                wind_on = int(air_monitor[world, AIR_WIND_ON])
            # 4. No position aid for no_aid_timeout: a fake position at the last known one keeps the filter bounded:
            # at rest always (FAKE_REST_NOISE), moving only while the horizontal 1-sigma is above EKF2_NOAID_NOISE.
            if fuse_gps == 0 or now - times[world, 6] > tuning.no_aid_timeout:
                mode = wp.float64(1.0)
                if at_rest:
                    mode = wp.float64(2.0)
                if monitor[world, MON_MODE] != mode:  # from aided, or between moving and at rest: the position of now
                    monitor[world, MON_MODE] = mode
                    monitor[world, MON_FAKE] = wp.float64(nominal[world, 0][0])
                    monitor[world, MON_FAKE + 1] = wp.float64(nominal[world, 0][1])
                    monitor[world, MON_FAKE_TIME] = now
                if now - monitor[world, MON_FAKE_TIME] > wp.float64(FAKE_PERIOD - 1.0e-6):
                    monitor[world, MON_FAKE_TIME] = now
                    noise = tuning.no_aid_noise
                    if at_rest:
                        noise = FAKE_REST_NOISE
                    if at_rest or wp.max(P[world, 0, 0], P[world, 1, 1]) > noise * noise:
                        for r in range(2):
                            innovation = float(monitor[world, MON_FAKE + r]) - nominal[world, 0][r]
                            if wp.static(with_wind):
                                if wind_on != 0:
                                    h = vec15()
                                    h[POS + r] = 1.0
                                    fuse_scalar_with_wind(P, Pw, nominal, attitude, wind, world, h, innovation,
                                                          noise * noise)
                                else:
                                    inject(nominal, attitude, world,
                                           fuse_scalar(P, world, POS + r, 1.0, innovation, noise * noise))
                            else:
                                inject(nominal, attitude, world,
                                       fuse_scalar(P, world, POS + r, 1.0, innovation, noise * noise))
            else:
                monitor[world, MON_MODE] = wp.float64(0.0)
            if new_imu and tuning.gps_delay > wp.float64(0.0):
                remember(nominal, history, history_times, world, s_imu.time)

        now = time[world]
        out = PoseTwist()
        out.time = now
        out.position = nominal[world, 0]
        out.velocity = nominal[world, 1]
        out.attitude = attitude[world, 0]
        out.rates = s_imu.gyro - nominal[world, 2]
        estimate[world] = out
        total = wp.length(out.position) + wp.length(out.velocity) + wp.length(out.rates)
        for i in range(N):
            variances[world, i] = P[world, i, i]
            total += P[world, i, i]
        if not wp.isfinite(total) and done[world] == 0:
            done[world] = DIVERGED
            divergence[world, 0] = float(now)
            for i in range(SLOTS):
                divergence[world, 1 + i] = innovations[world, i]
        bits = TILT_ALIGNED
        if fuse_mag != 0:
            bits = bits | YAW_ALIGNED
        if fuse_gps == 0 or refs[world, 6] != 0.0:
            bits = bits | ORIGIN_SET
        if monitor[world, MON_FAULT] != wp.float64(0.0):
            bits = bits | GPS_FAULT
        if monitor[world, MON_FAULT + 1] != wp.float64(0.0):
            bits = bits | BARO_FAULT
        if monitor[world, MON_FAULT + 2] != wp.float64(0.0):
            bits = bits | MAG_FAULT
        if monitor[world, MON_FAULT + 3] != wp.float64(0.0):
            bits = bits | RANGE_FAULT
        if monitor[world, MON_MODE] != wp.float64(0.0):
            bits = bits | NO_AID_FUSION
        reset[world] = wp.vec3(float(monitor[world, MON_RESET]), float(monitor[world, MON_RESET + 1]),
                               float(monitor[world, MON_RESET + 2]))
        resets[world] = int(monitor[world, MON_RESETS])
        if fuse_gps != 0 and now - times[world, 6] < wp.float64(AIDING_TIMEOUT):
            bits = bits | GPS_AIDING
        if fuse_baro != 0 and now - times[world, 7] < wp.float64(AIDING_TIMEOUT):
            bits = bits | BARO_AIDING
        if fuse_mag != 0 and monitor[world, MON_FAULT + 2] == wp.float64(0.0):
            bits = bits | MAG_AIDING
        if fuse_rng != 0 and refs[world, 1] != 0.0 and monitor[world, MON_FAULT + 3] == wp.float64(0.0):
            bits = bits | RANGE_AIDING
        if wp.sqrt(wp.max(P[world, 0, 0], P[world, 1, 1])) < tuning.horizontal_limit:
            bits = bits | HORIZONTAL_VALID
        if wp.sqrt(P[world, 2, 2]) < tuning.vertical_limit:
            bits = bits | VERTICAL_VALID
        if wp.static(with_wind):
            if air_monitor[world, MON_FAULT] != wp.float64(0.0):
                bits = bits | AIRSPEED_FAULT
            if now - air_monitor[world, AIR_ACCEPTED] < wp.float64(AIDING_TIMEOUT):
                bits = bits | AIRSPEED_AIDING
            wind_out[world] = wind[world, 0]
            for a in range(NW):
                wind_variance[world, a] = Pw[world, WIND + a, a]
        status[world] = bits

    return ekf_step


#: The 15-state filter's kernel, and the one with the wind states (nexus:EKF2_ARSP_THR above 0).
ekf_step = make_ekf_step(False)
ekf_step_with_wind = make_ekf_step(True)


def _sensor_prims(stage, schema: str) -> list:
    return [p for p in stage.Traverse() if schema in p.GetAppliedSchemas()]


#: The default sample rates [Hz] of the GPS, barometer, magnetometer and rangefinder (their schemas' defaults).
DEFAULT_RATES = (10.0, 50.0, 100.0, 50.0)
#: Each fused sensor's schema and the white-noise attributes (by key) that say whether it declares noise.
SENSOR_NOISE = ((GPS_SPEC, ("horizontal_sigma", "vertical_sigma", "velocity_sigma")), (BAROMETER_SPEC, ("noise_sigma",)),
                (MAGNETOMETER_SPEC, ("noise_sigma",)), (RANGEFINDER_SPEC, ("noise_sigma",)))


def declared_rate_and_noise(prim, spec, noise_keys) -> tuple[float, bool]:
    """A sensor prim's rate [Hz] and whether it declares noise (``nexus:noise`` on and a white-noise sigma above 0);
    attributes it does not author take the schema's defaults."""
    def value(key):
        param = spec.param(key)
        attr = prim.GetAttribute(param.attr)
        got = attr.Get() if attr else None
        return param.default if got is None else got
    return float(value("rate")), bool(value("noise")) and any(float(value(k)) > 0.0 for k in noise_keys)


class Ekf(Component):
    """The error-state EKF of one vehicle; writes ``estimate`` and the filter's record signals.

    ``values`` are the spec's parameters by key; ``field_ned`` the Earth's field [T] NED at the origin
    (the magnetometer's), ``gps_mount`` the GPS antenna [m] FLU on the base, ``origin`` the plant's
    geodetic origin, ``gravity`` [m/s²] its magnitude; ``sensor_rates`` [Hz] the GPS's, barometer's, magnetometer's
    and rangefinder's sample rates (their timeouts are STALE_PERIODS periods), ``sensor_noisy`` whether each declares
    noise (only then are repeated samples a freeze); ``airspeed_rate`` [Hz] and ``airspeed_noisy`` the same for the
    pitot, read only when the filter fuses airspeed (``airspeed_threshold`` above 0).
    """

    spec = EKF_SPEC

    def __init__(self, name: str, *, origin, field_ned=(2.0e-5, 0.0, 4.0e-5), gps_mount=(0.0, 0.0, 0.0),
                 gravity: float = 9.80665, sensor_rates=DEFAULT_RATES, sensor_noisy=(False,) * 4,
                 airspeed_rate: float = 50.0, airspeed_noisy: bool = False, connections=None, **params):
        super().__init__(name, connections)
        values = self.spec.defaults()
        unknown = set(params) - set(values)
        if unknown:
            raise TypeError(f"Ekf takes no parameter {', '.join(sorted(unknown))}")
        values.update(params)
        self.values = values
        self.origin = origin
        self.field_ned = np.asarray(field_ned, dtype=np.float64)
        self.gps_mount = tuple(float(m) for m in gps_mount)
        self.gravity = float(gravity)
        self.sensor_rates = tuple(float(r) for r in sensor_rates)
        self.sensor_noisy = tuple(bool(n) for n in sensor_noisy)
        self.airspeed_rate = float(airspeed_rate)
        self.airspeed_noisy = bool(airspeed_noisy)

    @property
    def fuses_airspeed(self) -> bool:
        """Whether the filter fuses the pitot's airspeed and carries the two wind states."""
        return float(self.values["airspeed_threshold"]) > 0.0

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Ekf:
        """Refuses, naming the file, prim and attribute, a filter with no IMU or fusing a sensor the vehicle lacks."""
        path = str(prim.GetPath())
        stage = prim.GetStage()
        if not _sensor_prims(stage, "NexusImuAPI"):
            raise BuildError(f"{ctx.path}: estimator prim {path}: the EKF predicts from an IMU and the vehicle has "
                             "none; add a prim with NexusImuAPI under the base body, or use the truth estimator")
        for key, schema, signal in FUSIONS:
            if values[key] and not _sensor_prims(stage, schema):
                attr = EKF_SPEC.param(key).attr
                raise BuildError(f"{ctx.path}: estimator prim {path}: {attr} is true but the vehicle has no "
                                 f"{signal} sensor ({schema}); set {attr} = 0 or add the sensor")
        others = [str(p.GetPath()) for p in stage.Traverse() if p.GetPath() != prim.GetPath()
                  and any(api in p.GetAppliedSchemas() for api in ESTIMATOR_SCHEMAS)]
        chosen = any(p.GetRelationship(ESTIMATE_CONNECTION) and p.GetRelationship(ESTIMATE_CONNECTION).GetTargets()
                     for p in stage.Traverse())
        if others and not chosen:
            raise BuildError(f"{ctx.path}: estimator prim {path}: {others[0]} writes the estimate too and no "
                             f"{ESTIMATE_CONNECTION} connection chooses between them; add rel {ESTIMATE_CONNECTION} "
                             f"= <{path}> (or <{others[0]}>) on the controller prim, or deactivate one")
        imu_rate = _sensor_prims(stage, "NexusImuAPI")[0].GetAttribute("nexus:rate").Get()
        imu_rate = 250.0 if imu_rate is None else float(imu_rate)
        longest = (HISTORY - 2) / imu_rate if imu_rate > 0 else float("inf")
        if values["gps_delay"] > longest:
            attr = EKF_SPEC.param("gps_delay").attr
            raise BuildError(f"{ctx.path}: estimator prim {path}: {attr} = {values['gps_delay']:g} s is longer than "
                             f"the {HISTORY - 2} IMU samples the filter keeps ({longest:g} s at {imu_rate:g} Hz); "
                             f"set {attr} to at most {longest:g}")
        airspeed_rate, airspeed_noisy = 50.0, False
        if values["airspeed_threshold"] > 0.0:
            pitots = _sensor_prims(stage, AIRSPEED_SPEC.schema)
            if not pitots:
                attr = EKF_SPEC.param("airspeed_threshold").attr
                raise BuildError(f"{ctx.path}: estimator prim {path}: {attr} = {values['airspeed_threshold']:g} m/s "
                                 f"fuses airspeed but the vehicle has no airspeed sensor ({AIRSPEED_SPEC.schema}); set "
                                 f"{attr} = 0 or add a pitot")
            airspeed_rate, airspeed_noisy = declared_rate_and_noise(pitots[0], AIRSPEED_SPEC, ("noise_sigma",))
            airspeed_rate = airspeed_rate if airspeed_rate > 0 else imu_rate
        gps_mount = (0.0, 0.0, 0.0)
        if values["fuse_gps"]:
            mount = _sensor_prims(stage, "NexusGpsAPI")[0].GetAttribute("nexus:mountOffset").Get()
            gps_mount = tuple(float(m) for m in mount) if mount is not None else gps_mount
        origin = ctx.plant.origin
        field = earth_field_ned(origin.latitude, origin.longitude, origin.altitude, ctx.plant.decimal_year)
        gravity = float(np.linalg.norm(ctx.plant.model.gravity.numpy().reshape(-1, 3)[0]))
        connections = {k: v for k, v in read_connections(prim, cls.spec, ctx.path).items()}
        rates, noisy = [], []
        for (key, schema, _), (spec, noise_keys), default in zip(FUSIONS, SENSOR_NOISE, DEFAULT_RATES):
            prims = _sensor_prims(stage, schema)
            rate, declared = default, False
            if prims:
                rate, declared = declared_rate_and_noise(prims[0], spec, noise_keys)
            rates.append(rate if rate > 0 else imu_rate)  # 0 samples every tick: about the IMU's rate
            noisy.append(declared)
        return cls(path, origin=origin, field_ned=field, gps_mount=gps_mount, gravity=gravity, sensor_rates=rates,
                   sensor_noisy=noisy, airspeed_rate=airspeed_rate, airspeed_noisy=airspeed_noisy,
                   connections=connections, **values)

    def stages(self) -> list[Stage]:
        """One device stage that may end a world (:data:`DIVERGED`)."""
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=self.reads(), writes=self.writes(),
                      finishes=True)]

    def reads(self) -> tuple:
        """The IMU, the clock and only the sensors it fuses."""
        skip = {signal for key, _, signal in FUSIONS if not self.values[key]}
        if not self.fuses_airspeed:
            skip.add("airspeed")
        return tuple(r for r in super().reads() if r.signal not in skip)

    def writes(self) -> tuple:
        """The spec's outputs, and the wind and airspeed outputs when the filter fuses airspeed."""
        extra = tuple(port.write(self) for port in AIRSPEED_OUTPUTS) if self.fuses_airspeed else ()
        return super().writes() + extra

    def prepare(self, ctx) -> None:
        v = self.values
        self.worlds = ctx.worlds
        self._store = getattr(ctx, "states", None)
        self._first_world = int(getattr(ctx, "first_world", 0) or 0)
        t = EkfTuning()
        for key in ("gyro_noise", "accel_noise", "gyro_bias_noise", "accel_bias_noise", "gps_pos_noise",
                    "gps_vel_noise", "baro_noise", "heading_noise", "range_noise", "gps_pos_gate", "gps_vel_gate",
                    "baro_gate", "heading_gate", "range_gate"):
            setattr(t, key, float(v[key]))
        sigma = [v["gps_pos_noise"]] * 3 + [v["gps_vel_noise"]] * 3 + [v["attitude_init"]] * 3 \
            + [v["gyro_bias_init"]] * 3 + [v["accel_bias_init"]] * 3
        t.initial_sigma = vec15(*[float(s) for s in sigma])
        t.decimation = int(v["covariance_decimation"])
        t.fuse = wp.vec4i(*(int(bool(v[key])) for key, _, _ in FUSIONS))
        t.gravity = self.gravity
        t.field_ned = wp.vec3(*(float(f) for f in self.field_ned))
        x, y, z = self.gps_mount
        t.gps_mount_frd = wp.vec3(x, -y, -z)
        origin = self.origin
        t.origin_ecef = wp.vec3d(*geodetic_to_ecef(origin.latitude, origin.longitude, origin.altitude))
        t.ecef_to_enu = wp.mat33d(*enu_to_ecef_rotation(origin.latitude, origin.longitude).T.ravel())
        t.origin_altitude = wp.float64(origin.altitude)
        t.horizontal_limit = float(v["horizontal_valid_limit"])
        t.vertical_limit = float(v["vertical_valid_limit"])
        t.gps_delay = wp.float64(v["gps_delay"])
        t.baro_bias_noise = float(v["baro_bias_noise"])
        t.required_eph = float(v["gps_required_eph"])
        t.required_epv = float(v["gps_required_epv"])
        t.required_satellites = int(v["gps_required_satellites"])
        t.timeouts = wp.vec4(*(STALE_PERIODS / rate for rate in self.sensor_rates))
        t.repeat_check = wp.vec4i(*(int(bool(noisy)) for noisy in self.sensor_noisy))
        t.no_aid_timeout = wp.float64(v["no_aid_timeout"])
        t.no_aid_noise = float(v["no_aid_noise"])
        h, d = float(v["gps_drift_noise"]), float(v["gps_vertical_drift_noise"])
        t.drift_variance_rate = wp.vec3(h * h, h * h, d * d)
        t.airspeed_threshold = float(v["airspeed_threshold"])
        t.airspeed_noise = float(v["airspeed_noise"])
        t.airspeed_gate = float(v["airspeed_gate"])
        t.wind_noise = float(v["wind_noise"])
        t.airspeed_timeout = STALE_PERIODS / self.airspeed_rate
        t.airspeed_repeat_check = int(self.airspeed_noisy)
        t.fuse_sideslip = int(bool(v["fuse_sideslip"]))
        t.sideslip_noise = float(v["sideslip_noise"])
        t.sideslip_gate = float(v["sideslip_gate"])
        self.tuning = t
        # Sensors it does not fuse: a sample that never changes, so the kernel's arguments are always arrays.
        self._idle = {signal: wp.zeros(self.worlds, dtype=dtype, device=ctx.device)
                      for (key, _, signal), dtype in zip(FUSIONS, (GpsSample, BaroSample, MagSample, RangeSample))
                      if not v[key]}
        if not self.fuses_airspeed:
            # Nor the pitot, and the airspeed outputs are scratch the record never sees.
            self._idle["airspeed"] = wp.zeros(self.worlds, dtype=AirspeedSample, device=ctx.device)
            z = lambda dtype, *shape: wp.zeros((self.worlds, *shape), dtype=dtype, device=ctx.device)  # noqa: E731
            self._idle_outputs = [z(wp.vec3), z(wp.float32, NW), z(wp.float32, 3), z(wp.int32), z(wp.float32, 2),
                                  z(wp.int32)]

    def run(self, io) -> None:
        sensors = [self._idle[s] if s in self._idle else io[s] for s in ("gps", "baro", "mag", "range", "airspeed")]
        si, so = io.state_in, io.state_out
        keys = STATE_KEYS
        air_outputs = ([io[port.signal] for port in AIRSPEED_OUTPUTS] if self.fuses_airspeed
                       else self._idle_outputs)
        in_place = int(all(si[k].ptr == so[k].ptr for k in keys))
        wp.launch(
            ekf_step_with_wind if self.fuses_airspeed else ekf_step, dim=self.worlds,
            inputs=[io["imu"], *sensors, io["time"], self.tuning, in_place,
                    state_arrays(si), state_arrays(so)],
            outputs=[io["estimate"], io[STATUS_SIGNAL], io["ekf_variance"], io["ekf_innovation"],
                     io["ekf_test_ratio"], io["ekf_rejected"], io.done, io[RESET_SIGNAL], io["ekf_resets"],
                     *air_outputs],
            device=io.device,
        )

    def report(self, dt_s: float, state: dict | None = None) -> list[dict]:
        """Each diverged world's tick, time, state and last innovations (``state``: the component's state arrays,
        by default the ring's)."""
        state = state if state is not None else self._store.of(self)
        divergence = state["divergence"].numpy()
        nominal, attitude = state["nominal"].numpy(), state["attitude"].numpy()
        out = []
        for w in np.flatnonzero(divergence[:, 0] >= 0.0).tolist():
            t = float(divergence[w, 0])
            out.append({
                "world": self._first_world + w, "tick": int(round(t / dt_s)), "time_s": t,
                "position": nominal[w, 0].tolist(), "velocity": nominal[w, 1].tolist(),
                "attitude": attitude[w, 0].tolist(), "gyro_bias": nominal[w, 2].tolist(),
                "accel_bias": nominal[w, 3].tolist(),
                "innovations": dict(zip(SLOT_NAMES, divergence[w, 1:].tolist())),
            })
        return out

    def end_lines(self, dt_s: float) -> list[str]:
        """run.log's lines at the end of a run: one per world whose filter diverged."""
        if self._store is None:
            return []
        return [divergence_line(self.name, d) for d in self.report(dt_s)]


def divergence_line(name: str, d: dict) -> str:
    """One line: which filter, world, tick; its state and last innovations when it went non-finite."""
    vec = lambda v: "(" + ", ".join(f"{x:.6g}" for x in v) + ")"  # noqa: E731
    innovations = ", ".join(f"{k} {v:.6g}" for k, v in d["innovations"].items())
    return (f"{DIVERGED_REASON}: {name} world {d['world']} at tick {d['tick']} ({d['time_s']:.3f} s): "
            f"position {vec(d['position'])} m, velocity {vec(d['velocity'])} m/s, attitude {vec(d['attitude'])}, "
            f"gyro bias {vec(d['gyro_bias'])} rad/s, accel bias {vec(d['accel_bias'])} m/s^2; "
            f"last innovations: {innovations}")


__all__ = ["AIRSPEED_OUTPUTS", "WIND_SIGNAL", "DIVERGED", "DIVERGED_REASON", "EKF_SPEC", "Ekf", "EkfTuning", "divergence_line",
           "ekf_step", "ekf_step_with_wind", "make_ekf_step", "state_arrays", "STATE_KEYS",
           "EkfStateArrays"]
