"""What a guidance asks a controller for (signal ``setpoint``)."""

import warp as wp


@wp.struct
class Setpoint:
    """What a guidance asks the controller for: a position goal and a heading."""

    #: Position goal [m], NED, relative to the NED origin.
    position: wp.vec3
    #: Heading goal [rad], NED (0 north, +π/2 east).
    yaw: wp.float32
