"""L1 lateral guidance (Park, Deyst and How, AIAA GNC 2004): a lateral acceleration toward a point ahead on the path.

The reference point lies on the path at the distance ``L1`` from the aircraft (ahead in the direction of
travel); with ``η`` the angle from the ground velocity to the line of sight to it, the law asks for

    a_cmd = 2·V²/L1 · sin η         (η clamped to ±90°)

to the right (positive) or left, and the bank that flies it level is ``φ = atan(a_cmd / g)``. On a straight
line, linearised, the cross-track ``d`` obeys ``d̈ + 2(V/L1)·ḋ + 2(V/L1)²·d = 0``: natural frequency
``ω = √2·V/L1``, damping ``ζ = 1/√2``, whatever the speed. On a circle of radius ``R`` the point a chord
``L1`` ahead gives ``sin η = L1/(2R)``, so ``a_cmd = V²/R``: the centripetal acceleration of the circle.
When the aircraft is farther than ``L1`` from the path, no point is at ``L1``: it aims at the nearest point
of the path. Positions are north-east [m]; the ground velocity is north-east [m/s].
"""

from __future__ import annotations

import warp as wp


@wp.func
def l1_acceleration(velocity: wp.vec2, sight: wp.vec2, l1: float) -> float:
    """``2·V²/L1·sin η`` [m/s²], positive to the right, for a line of sight ``sight`` to the reference point."""
    cross = velocity[0] * sight[1] - velocity[1] * sight[0]
    dot = velocity[0] * sight[0] + velocity[1] * sight[1]
    eta = wp.clamp(wp.atan2(cross, dot), -0.5 * wp.pi, 0.5 * wp.pi)
    speed_squared = velocity[0] * velocity[0] + velocity[1] * velocity[1]
    return 2.0 * speed_squared / l1 * wp.sin(eta)


@wp.func
def line_acceleration(position: wp.vec2, velocity: wp.vec2, start: wp.vec2, end: wp.vec2, l1: float) -> float:
    """The L1 acceleration [m/s²] that follows the straight line from ``start`` toward ``end`` (and beyond)."""
    along = wp.normalize(end - start)
    offset = position - start
    foot = start + along * wp.dot(offset, along)
    cross_track = wp.length(position - foot)
    ahead = wp.sqrt(wp.max(l1 * l1 - cross_track * cross_track, 0.0))
    return l1_acceleration(velocity, foot + along * ahead - position, l1)


@wp.func
def cross_track_error(position: wp.vec2, start: wp.vec2, end: wp.vec2) -> float:
    """Signed distance [m] from the line (positive: right of it, looking from ``start`` to ``end``)."""
    along = wp.normalize(end - start)
    offset = position - start
    return along[0] * offset[1] - along[1] * offset[0]


@wp.func
def loiter_acceleration(position: wp.vec2, velocity: wp.vec2, centre: wp.vec2, radius: float, clockwise: float,
                        l1: float) -> float:
    """The L1 acceleration [m/s²] that flies the circle of ``radius`` [m] about ``centre``, clockwise seen from
    above when ``clockwise`` is +1, anticlockwise when −1 (``L1 ≤ 2R``)."""
    offset = position - centre
    d = wp.max(wp.length(offset), 1.0e-3)
    out = offset / d
    tangent = wp.vec2(-out[1], out[0]) * clockwise  # north (1, 0) of the centre, clockwise heads east (0, 1)
    target = centre + out * radius
    if wp.abs(d - radius) < l1 and l1 < d + radius:
        # The circles |x − p| = L1 and |x − c| = R meet at c + a·out ± h·tangent; take the one ahead.
        a = (d * d + radius * radius - l1 * l1) / (2.0 * d)
        h = wp.sqrt(wp.max(radius * radius - a * a, 0.0))
        target = centre + out * a + tangent * h
    return l1_acceleration(velocity, target - position, l1)
