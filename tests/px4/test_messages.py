"""Every field PX4 reads, axis by axis, from a vehicle placed in a known state.

The vehicle is placed in free fall in the void scene at a heading of 60° (so no
axis lines up with another), moving and turning, with noise-free sensors, and
flies one 4 ms tick. What reaches the scripted PX4 is compared field by field
with values worked out here by hand. A swapped axis, a flipped sign or a wrong
unit in ``nexus/px4/messages.py`` or the controller's ground truth shows up.

Frames: Newton's world is ENU and its bodies FLU; PX4 wants NED and FRD.
"""

from __future__ import annotations

import math
import time

import pytest
from pygeomag import GeoMag

from nexus.runtime.assembly import assemble
from nexus.core import Loop
from nexus.px4.controller import Px4Controller
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.sensors import Barometer, Gps, Imu, Magnetometer, Sensor
from tests.sensors.conftest import STILL_VEHICLE, VOID_SCENE, place

G = 9.80665  # standard gravity of the void scene [m/s²]
DT = 0.004  # one tick at 250 Hz [s]
LAT0, LON0, ALT0 = 47.397742, 8.545594, 488.0  # the void scene's geodetic origin (tests/data/void.usda)
COM = (0.0, 0.0, -0.011)  # the base body's centre of mass, FLU [m] (vehicles/astro_max_base.usda)
#: The whole vehicle's centre of mass in the base frame, FLU [m]: the base, 5.031 kg at -0.011 m, and four
#: 0.2 kg rotors at +0.1 m: (5.031·(-0.011) + 0.8·0.1) / 5.831 = +0.00423 m. In free fall the vehicle turns
#: about this point, so only here does a spinning body read no specific force at all.
VEHICLE_COM = (0.0, 0.0, (5.031 * -0.011 + 0.8 * 0.1) / 5.831)

# -- the placement -----------------------------------------------------------------------
HEADING = 60.0  # [deg] from north towards east; Newton's yaw (ENU, from east) is 90° - 60° = 30°
POSITION_ENU = (30.0, 40.0, 20.0)  # [m]: 30 m east, 40 m north, 20 m up
VELOCITY_ENU = (3.0, 4.0, -1.0)  # [m/s]: 3 east, 4 north, sinking at 1
OMEGA_ENU = (0.3, -0.2, 0.5)  # [rad/s], world frame


@pytest.fixture(scope="module")
def vehicle():
    return assemble(STILL_VEHICLE, VOID_SCENE, controller="px4")  # no drag: free fall


def fly_one_tick(vehicle, sensors, **placement):
    """One tick of the placed vehicle with ``sensors``; every message the scripted PX4 received."""
    px4 = Px4Controller(vehicle.controller.name, vehicle.plant, port=0, connect_timeout=10.0)
    parts = [c for c in vehicle.components if not isinstance(c, Sensor) and c is not vehicle.controller]
    loop = Loop([*parts, *sensors, px4], device="cpu").build()
    peer = ScriptedPx4(px4.link.port, lambda n: None)  # silent, as PX4 is while it boots: no waiting
    with peer.running():
        try:
            place(vehicle, **placement)
            loop.tick()
            deadline = time.monotonic() + 10.0
            while not peer.of_type("HIL_SENSOR") and time.monotonic() < deadline:
                time.sleep(0.01)
        finally:
            loop.close()
    return peer


@pytest.fixture(scope="module")
def received(vehicle):
    # Sensors without noise, every tick; the IMU at the vehicle's centre of mass (no centripetal or
    # α×r term), the GPS antenna at the base body's (whose velocity place() sets), the barometer at
    # the body origin.
    sensors = [
        Imu("/test/imu", noise=False, rate=0.0, mount=VEHICLE_COM),
        Magnetometer("/test/mag", plant=vehicle.plant, noise=False, rate=0.0),
        Barometer("/test/baro", plant=vehicle.plant, noise=False, rate=0.0),
        Gps("/test/gps", plant=vehicle.plant, noise=False, rate=0.0, mount=COM),
    ]
    peer = fly_one_tick(vehicle, sensors, position=POSITION_ENU, yaw=math.radians(90.0 - HEADING),
                        velocity=VELOCITY_ENU, angular_velocity=OMEGA_ENU)
    return {kind: peer.of_type(kind)[0] for kind in ("HIL_SENSOR", "HIL_GPS", "HIL_STATE_QUATERNION")}


# -- worked out by hand --------------------------------------------------------------------
PSI = math.radians(HEADING)
#: The body's forward and right axes in NED at heading ψ (level): (cos ψ, sin ψ, 0), (-sin ψ, cos ψ, 0).
FORWARD = (math.cos(PSI), math.sin(PSI), 0.0)
RIGHT = (-math.sin(PSI), math.cos(PSI), 0.0)
DOWN = (0.0, 0.0, 1.0)


def ned(enu):
    """(east, north, up) -> (north, east, down)."""
    return (enu[1], enu[0], -enu[2])


def frd(vector_ned):
    """A NED vector in the level body's FRD axes at heading ψ: its components along forward, right, down."""
    return tuple(sum(a * b for a, b in zip(vector_ned, axis)) for axis in (FORWARD, RIGHT, DOWN))


#: ω_NED = (-0.2, 0.3, -0.5): p = -0.2·0.5 + 0.3·0.866 = 0.1598, q = 0.2·0.866 + 0.3·0.5 = 0.3232,
#: r = -0.5 rad/s. Over the tick the body's rates drift by Euler's equations, at most
#: dt·|ω|²/2 = 0.004·0.38/2 = 7.6e-4 rad/s per axis (|I_y - I_z| ≤ I_x for any rigid body).
RATES_FRD = frd(ned(OMEGA_ENU))
RATE_TOL = 1.0e-3
#: The body turns by |ω|·dt = 0.0025 rad over the tick: attitude-dependent values move by that much.
TURN = math.sqrt(sum(w * w for w in OMEGA_ENU)) * DT
#: After the tick (semi-implicit Euler, gravity only): v_NED = (4, 3, 1 + g·dt) = (4, 3, 1.0392) m/s,
#: position = start + v·dt: 40.016 m north, 30.012 m east, 20 - 1.0392·0.004 = 19.99584 m up.
V_NED = (4.0, 3.0, 1.0 + G * DT)
NORTH, EAST, UP = 40.0 + 4.0 * DT, 30.0 + 3.0 * DT, 20.0 - V_NED[2] * DT

#: WGS-84: semi-major axis [m] and first eccentricity squared; the meridian (M) and prime-vertical (N)
#: radii of curvature at the origin's latitude turn north and east metres into degrees.
A, F = 6378137.0, 1.0 / 298.257223563
E2 = F * (2.0 - F)
_W = math.sqrt(1.0 - E2 * math.sin(math.radians(LAT0)) ** 2)
M_RADIUS, N_RADIUS = A * (1.0 - E2) / _W**3, A / _W


def lat_e7(north_m):
    return (LAT0 + math.degrees(north_m / (M_RADIUS + ALT0))) * 1e7


def lon_e7(east_m):
    return (LON0 + math.degrees(east_m / ((N_RADIUS + ALT0) * math.cos(math.radians(LAT0))))) * 1e7


def isa(h):
    """ISA troposphere at geometric altitude h [m]: T = 288.15 - 0.0065·h [K],
    p = 101325·(T/288.15)^(g·M/(R·L)) [Pa] with g·M/(R·L) = 9.80665·0.0289644/(8.3144598·0.0065) = 5.25588."""
    t = 288.15 - 0.0065 * h
    return t, 101325.0 * (t / 288.15) ** 5.25588


# -- HIL_SENSOR ------------------------------------------------------------------------------

def test_hil_sensor_accel_in_free_fall_is_zero_on_every_axis(received):
    # Free fall at the vehicle's centre of mass: the specific force is g - g = 0 [m/s²] whatever the
    # rotation (the spinning IMU below puts known non-zero values on x and y). An IMU at the base
    # body's centre of mass, 15.2 mm lower, would read ω×(ω×r) + α×r, up to 0.006 m/s².
    m = received["HIL_SENSOR"]
    assert (m.xacc, m.yacc, m.zacc) == pytest.approx((0.0, 0.0, 0.0), abs=1e-3)


def test_hil_sensor_gyro_is_the_body_rates_frd(received):
    m = received["HIL_SENSOR"]
    assert m.xgyro == pytest.approx(RATES_FRD[0], abs=RATE_TOL)  # 0.1598 rad/s, roll rate
    assert m.ygyro == pytest.approx(RATES_FRD[1], abs=RATE_TOL)  # 0.3232 rad/s, pitch rate
    assert m.zgyro == pytest.approx(RATES_FRD[2], abs=RATE_TOL)  # -0.5 rad/s: turning left (CCW seen from above)


def test_hil_sensor_mag_is_the_wmm_field_in_body_frd_gauss(vehicle, received):
    # pygeomag (WMM) at the origin, altitude in km, for the plant's date: (north, east, down) [nT].
    # Level at heading ψ: x = Bn·cos ψ + Be·sin ψ, y = -Bn·sin ψ + Be·cos ψ, z = Bd; 1 G = 1e5 nT.
    wmm = GeoMag().calculate(glat=LAT0, glon=LON0, alt=ALT0 / 1000.0, time=vehicle.plant.decimal_year)
    expected = [b / 1e5 for b in frd((wmm.x, wmm.y, wmm.z))]
    tol = wmm.f / 1e5 * TURN + 1e-5  # the body turned by 0.0025 rad: at most 0.0012 G
    m = received["HIL_SENSOR"]
    assert m.xmag == pytest.approx(expected[0], abs=tol)
    assert m.ymag == pytest.approx(expected[1], abs=tol)
    assert m.zmag == pytest.approx(expected[2], abs=tol)
    assert math.sqrt(m.xmag**2 + m.ymag**2 + m.zmag**2) == pytest.approx(wmm.f / 1e5, abs=1e-5)


def test_hil_sensor_pressure_altitude_and_temperature_follow_isa(received):
    # The barometer sits at the body origin: h = 488 + 19.99584 = 507.99584 m MSL.
    h = ALT0 + UP
    t, p = isa(h)  # 284.848 K, 95,389 Pa
    m = received["HIL_SENSOR"]
    assert m.abs_pressure == pytest.approx(p / 100.0, abs=2e-4)  # [hPa]; float32 Pa is good to 0.01 Pa
    assert m.pressure_alt == pytest.approx(h, abs=0.01)  # [m]
    assert m.temperature == pytest.approx(t - 273.15, abs=1e-3)  # [°C]
    assert m.diff_pressure == 0.0  # no airspeed sensor
    assert m.id == 0 and m.time_usec == 4000


# -- HIL_GPS ------------------------------------------------------------------------------------

def test_hil_gps_position_velocity_and_course(received):
    m = received["HIL_GPS"]
    # The antenna sits at the centre of mass, 0.011 m below the body origin.
    assert m.lat == pytest.approx(lat_e7(NORTH), abs=2)  # 1 degE7 of latitude is 1.1 cm
    assert m.lon == pytest.approx(lon_e7(EAST), abs=2)  # and of longitude 0.75 cm here
    assert m.alt == pytest.approx((ALT0 + UP - 0.011) * 1000.0, abs=2)  # [mm MSL]
    assert (m.vn, m.ve, m.vd) == (400, 300, 104)  # [cm/s]: 4 north, 3 east, 1.0392 down
    assert m.vel == 500  # ground speed √(4² + 3²) = 5 m/s
    assert m.cog == 3687  # atan2(3 east, 4 north) = 36.87° [cdeg]
    assert (m.eph, m.epv) == (30, 50)  # √(0.02² + 0.3²) m, √(0.04² + 0.5²) m [cm]
    assert m.fix_type == 3 and m.satellites_visible == 10


# -- HIL_STATE_QUATERNION --------------------------------------------------------------------------

def test_ground_truth_attitude_is_w_x_y_z_frd_to_ned(received):
    # A yaw of ψ about down: q = (cos ψ/2, 0, 0, sin ψ/2) = (0.866, 0, 0, 0.5), w first and w ≥ 0.
    # Over the tick the body turned by 0.0025 rad: each component moves by at most half that.
    q = received["HIL_STATE_QUATERNION"].attitude_quaternion
    expected = (math.cos(PSI / 2.0), 0.0, 0.0, math.sin(PSI / 2.0))
    for got, want in zip(q, expected):
        assert got == pytest.approx(want, abs=TURN / 2.0 + 1e-4)


def test_ground_truth_rates_position_velocity_and_acceleration(received):
    m = received["HIL_STATE_QUATERNION"]
    assert m.rollspeed == pytest.approx(RATES_FRD[0], abs=RATE_TOL)
    assert m.pitchspeed == pytest.approx(RATES_FRD[1], abs=RATE_TOL)
    assert m.yawspeed == pytest.approx(RATES_FRD[2], abs=RATE_TOL)
    # The body origin's position (the truth is the body's own pose).
    assert m.lat == pytest.approx(lat_e7(NORTH), abs=2)
    assert m.lon == pytest.approx(lon_e7(EAST), abs=2)
    assert m.alt == pytest.approx((ALT0 + UP) * 1000.0, abs=2)  # [mm]
    assert (m.vx, m.vy, m.vz) == (400, 300, 104)  # centre-of-mass velocity, NED [cm/s]
    speed = round(math.sqrt(sum(v * v for v in V_NED)) * 100.0)  # 5.1054 m/s
    assert m.true_airspeed == speed and m.ind_airspeed == speed
    # Free fall: no specific force on any axis [mG].
    assert (m.xacc, m.yacc, m.zacc) == pytest.approx((0, 0, 0), abs=1)


# -- the accelerometer's axes, on a spinning vehicle -------------------------------------------------

def test_hil_sensor_accel_axes_on_a_vehicle_spinning_about_down(vehicle):
    # Yaw rate Ω = 2 rad/s about up (ENU), free fall, IMU 0.1 m forward and 0.05 m left of the
    # centre of mass: the mount circles the axis, f = ω×(ω×r) = -Ω²·(r_x, r_y, 0) = (-0.4, -0.2, 0)
    # FLU, (-0.4, +0.2, 0) m/s² FRD (gravity cancels in free fall). The gyro reads (0, 0, -2) FRD.
    # About a principal axis nothing drifts.
    imu = Imu("/test/imu", noise=False, rate=0.0, mount=(0.1, 0.05, -0.011))
    sensors = [imu, Magnetometer("/test/mag", plant=vehicle.plant, noise=False, rate=0.0),
               Barometer("/test/baro", plant=vehicle.plant, noise=False, rate=0.0),
               Gps("/test/gps", plant=vehicle.plant, noise=False, rate=0.0)]
    peer = fly_one_tick(vehicle, sensors, position=(0.0, 0.0, 50.0), yaw=math.radians(90.0 - HEADING),
                        angular_velocity=(0.0, 0.0, 2.0))
    m = peer.of_type("HIL_SENSOR")[0]
    assert (m.xacc, m.yacc, m.zacc) == pytest.approx((-0.4, 0.2, 0.0), abs=1e-3)
    assert (m.xgyro, m.ygyro, m.zgyro) == pytest.approx((0.0, 0.0, -2.0), abs=1e-4)
