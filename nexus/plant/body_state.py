"""What the plant publishes for one rigid body each tick (signal ``body/<label>``)."""

import warp as wp


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
