"""The air's velocity relative to a point on a body: what a pitot or a static port feels.

    a = wind - (v_com + omega x R·(mount - com))        [m/s], world frame (ENU)

``wind`` is the wind field's signal at the base (:mod:`nexus.air.wind_field`; zero when the
ring has no wind stage), ``v_com`` and ``omega`` the body's centre-of-mass and angular velocity
as the plant publishes them. The airspeed sensor and the barometer's dynamic-pressure error read it.
"""

from __future__ import annotations

import warp as wp

from nexus.core.spec import Input
from nexus.plant.body_state import BodyState

#: The wind signal as a sensor reads it: still air when no wind field writes it.
WIND_INPUT = Input("wind", wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
                   doc="The air's velocity at the base [m/s], world ENU; still air when no wind field writes it")


@wp.func
def relative_air(state: BodyState, wind: wp.vec3, mount: wp.vec3) -> wp.vec3:
    """The air's velocity relative to the point ``mount`` (body frame, FLU [m]) of ``state`` [m/s], world frame."""
    arm = wp.quat_rotate(wp.transform_get_rotation(state.pose), mount - state.com)
    return wind - (state.velocity + wp.cross(state.angular_velocity, arm))


__all__ = ["WIND_INPUT", "relative_air"]
