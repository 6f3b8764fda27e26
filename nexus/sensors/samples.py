"""The samples the IMU, magnetometer, barometer and GPS write.

Warp structs, so their signals live on the device. Samples are SI, in NED
(world) and FRD (body) axes. The first field is the sim time [s] of the tick
that took the sample: between samples a signal keeps the last one, so a new
time marks a new sample.
"""

import warp as wp


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
