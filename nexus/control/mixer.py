"""The quad-x mixer: collective thrust and normalised torques -> four ESC commands.

Rotor order and spin follow PX4's quadrotor-x (``docs/vehicles.md``):

====  ===========  ====  =====  =====  ===
slot  rotor        spin  roll   pitch  yaw
====  ===========  ====  =====  =====  ===
0     1 front right CCW   −      +      +
1     2 rear left   CCW   +      −      +
2     3 front left  CW    +      +      −
3     4 rear right  CW    −      −      −
====  ===========  ====  =====  =====  ===

Torques are FRD and normalised to [-1, 1]: +roll (right side down) speeds up
the left rotors, +pitch (nose up) the front ones, +yaw (nose right, about
FRD +z, down) the counter-clockwise ones, whose drag reacts on the airframe
clockwise seen from above. One unit of torque moves each rotor's thrust
fraction by ``TORQUE_SCALE``.

Saturation keeps roll and pitch first: if their spread does not fit in
[0, 1] it is scaled down, then the collective shifts to fit it, and yaw gets
only the headroom left. The thrust fractions pass through the inverse of the
ESC's thrust model ``t = (1 − f)·u + f·u²`` so the command ``u`` gives the
thrust asked for.
"""

from __future__ import annotations

import numpy as np
import warp as wp

#: Change of each rotor's thrust fraction per unit of normalised torque [-].
TORQUE_SCALE = 0.5

ROLL = (-1.0, 1.0, 1.0, -1.0)
PITCH = (1.0, -1.0, 1.0, -1.0)
YAW = (1.0, 1.0, -1.0, -1.0)


@wp.func
def command_for_thrust(thrust: float, factor: float) -> float:
    """The ESC command u in [0, 1] whose thrust fraction is ``thrust``: the positive root of f·u² + (1 − f)·u − t = 0."""
    t = wp.clamp(thrust, 0.0, 1.0)
    if factor <= 1.0e-6:
        return t
    linear = 1.0 - factor
    return (-linear + wp.sqrt(linear * linear + 4.0 * factor * t)) / (2.0 * factor)


@wp.func
def quad_x_thrusts(collective: float, torque: wp.vec3) -> wp.vec4:
    """Per-rotor thrust fractions in [0, 1] for a collective thrust fraction and FRD torques in [-1, 1]."""
    roll = wp.vec4(-1.0, 1.0, 1.0, -1.0)
    pitch = wp.vec4(1.0, -1.0, 1.0, -1.0)
    yaw = wp.vec4(1.0, 1.0, -1.0, -1.0)
    tilt = TORQUE_SCALE * (roll * torque[0] + pitch * torque[1])
    low = wp.min(wp.min(tilt[0], tilt[1]), wp.min(tilt[2], tilt[3]))
    high = wp.max(wp.max(tilt[0], tilt[1]), wp.max(tilt[2], tilt[3]))
    spread = high - low
    if spread > 1.0:
        tilt = tilt / spread
        low = low / spread
        high = high / spread
    # Shift the collective so the roll and pitch spread fits in [0, 1].
    base = wp.clamp(collective, -low, 1.0 - high)
    thrusts = wp.vec4(base) + tilt
    # Yaw takes the headroom that is left.
    spin = TORQUE_SCALE * torque[2] * yaw
    share = float(1.0)
    for i in range(4):
        if spin[i] > 0.0:
            share = wp.min(share, (1.0 - thrusts[i]) / spin[i])
        elif spin[i] < 0.0:
            share = wp.min(share, thrusts[i] / (-spin[i]))
    share = wp.max(share, 0.0)
    thrusts = thrusts + share * spin
    return wp.vec4(
        wp.clamp(thrusts[0], 0.0, 1.0),
        wp.clamp(thrusts[1], 0.0, 1.0),
        wp.clamp(thrusts[2], 0.0, 1.0),
        wp.clamp(thrusts[3], 0.0, 1.0),
    )


def thrust_fraction_np(command, factor: float) -> np.ndarray:
    """The ESC's thrust model, for host code and tests: t = (1 − f)·u + f·u²."""
    u = np.asarray(command, dtype=np.float64)
    return (1.0 - factor) * u + factor * u * u
