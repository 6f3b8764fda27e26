"""The types of the values passed between roles.

All are Warp structs or value types, so their signals live on the device.
Inside Nexus every quantity is SI; sensor samples and the estimate are in
NED (world) and FRD (body) axes. The first field of each sample is the sim
time [s] of the tick that took it: between samples a signal keeps the last
one, so a new time marks a new sample.
"""

import warp as wp

#: Width of the ``controls`` row a controller writes (PX4's actuator count).
CONTROLS_WIDTH = 16


@wp.struct
class BodyState:
    """One rigid body as the plant publishes it (signal ``body/<label>``), in Newton's world (ENU).

    ``accel`` holds the solver's ``body_qdd`` observable when some component
    asked for it, and zeros otherwise.
    """

    #: Body frame (FLU) in the world: position [m] and rotation.
    pose: wp.transform
    #: Centre-of-mass velocity [m/s], world frame.
    velocity: wp.vec3
    #: Angular velocity [rad/s], world frame.
    angular_velocity: wp.vec3
    #: Centre-of-mass acceleration [m/s²], world frame (``body_qdd``, linear part).
    accel: wp.vec3
    #: Angular acceleration [rad/s²], world frame (``body_qdd``, angular part).
    angular_accel: wp.vec3
    #: Centre of mass in the body frame [m].
    com: wp.vec3


@wp.struct
class ImuSample:
    time: wp.float64
    #: Specific force [m/s²], FRD (level at rest: (0, 0, -g)).
    accel: wp.vec3
    #: Angular rate [rad/s], FRD.
    gyro: wp.vec3


@wp.struct
class MagSample:
    time: wp.float64
    #: Magnetic flux density [T], FRD.
    field: wp.vec3


@wp.struct
class BaroSample:
    time: wp.float64
    #: Static pressure [Pa].
    pressure: wp.float32
    #: Air temperature [K].
    temperature: wp.float32
    #: ISA pressure altitude [m].
    pressure_altitude: wp.float32


@wp.struct
class GpsSample:
    time: wp.float64
    #: Geodetic latitude and longitude [deg], WGS-84.
    latitude: wp.float64
    longitude: wp.float64
    #: Altitude above mean sea level [m].
    altitude: wp.float64
    #: Velocity [m/s], NED.
    velocity: wp.vec3
    #: 0 none, 2 2D, 3 3D.
    fix_type: wp.int32
    satellites: wp.int32
    #: Horizontal and vertical position accuracy (1σ) [m].
    eph: wp.float32
    epv: wp.float32


@wp.struct
class PoseTwist:
    """The estimate: the base body's pose and twist."""

    time: wp.float64
    #: Position [m], NED, relative to the origin the vehicle settled at.
    position: wp.vec3
    #: Body-FRD-to-NED rotation, Warp (x, y, z, w).
    attitude: wp.quat
    #: Velocity [m/s], NED.
    velocity: wp.vec3
    #: Body rates [rad/s], FRD.
    rates: wp.vec3


@wp.struct
class Setpoint:
    """What a guidance asks the controller for: a position goal and a heading."""

    #: Position goal [m], NED, relative to the NED origin.
    position: wp.vec3
    #: Heading goal [rad], NED (0 north, +π/2 east).
    yaw: wp.float32
