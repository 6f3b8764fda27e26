"""The estimate an estimator writes and guidance and controllers read (signal ``estimate``)."""

import warp as wp


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
