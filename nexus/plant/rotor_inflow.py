"""A rotor's thrust when air flows axially through its disc: uniform-inflow blade-element momentum theory.

A propeller's thrust is ``kT·ω²`` in still air. When air already moves
down through the disc (a climb, or the downwash of a rotor above) each
blade section meets the air at a smaller angle and the thrust falls at the
same speed. Two results of Leishman (*Principles of Helicopter
Aerodynamics*, 2nd ed.) meet: the blade-element thrust of a rotor with
uniform inflow and linear twist (ch. 3, pitch taken at 0.75 R) and the
momentum thrust in axial climb (ch. 2), with ``λ_c = w / (ΩR)``, ``s = σ·a``:

    C_T = (s / 2)·(θ₇₅ / 3 - λ / 2)        (blade elements)
    C_T = 2·λ·(λ - λ_c)                     (momentum)

Equal, they give a quadratic in ``λ`` whose positive root is the closed form

    λ = √((s/16 - λ_c/2)² + s·θ₇₅/12) - (s/16 - λ_c/2),

where ``λ = λ_c + λ_i`` is the whole inflow through the disc over the tip
speed, ``σ`` the blade solidity, ``a`` the blade's lift slope and ``θ₇₅``
the blade pitch at three quarters of the radius.

``w`` [m/s] is the axial velocity of the air relative to the rotor, positive
when it flows *down* through the disc (opposite the thrust): a rotor in the
downwash of another, or one that climbs. A descending rotor sees ``w < 0``.

**The constants from kT.** Nexus knows a propeller by ``kT``; the closed form
needs ``s`` and ``θ₇₅``. At ``w = 0``, ``C_T0 = kT / (ρ π R⁴)`` whatever the
speed (``T = C_T ρ A (ΩR)²``, ``A = π R²``), the hover inflow is
``λ_h = √(C_T0 / 2)``, and the first equation gives the one pitch that makes
the rotor produce exactly ``kT·ω²`` in still air:

    θ₇₅ = 6·C_T0 / s + (3/2)·λ_h.

``s`` is the one free constant (``nexus:inflow:solidity`` times
``nexus:inflow:liftSlope``). The thrust *change* is then

    ΔT = T(w) - kT·ω² = -(ρ A s / 4)·(ΩR)·(V(w) - V(0)),   V = λ·ΩR,

written in velocities (no division by the tip speed: a stopped rotor gives
``ΔT = 0``) and with ``V(w) - V(0)`` rationalised, so that ``w = 0`` gives
``ΔT = 0`` exactly and the thrust is ``kT·ω²`` to the bit.

**Where it stops holding.** Momentum theory holds in climb (``w ≥ 0``) and
in the windmill-brake state (``w ≤ -2 v_h``), not in between: in descent at
``-2 < w / v_h < 0`` the rotor meets its own wake (vortex ring state) and
no momentum solution exists (Leishman ch. 2, the induced-velocity curve
in axial flight; Johnson's empirical fit covers it from measurements).
Nexus holds ``w`` at 0 there and below (:func:`held_inflow`): a rising air
or a descending rotor flies its still-air thrust. A large downwash can
push the thrust below zero (the blades at negative angle of attack); the
formula is left to say so.
"""

from __future__ import annotations

import math

import warp as wp

from nexus.core.spec import Param, Spec, positive

#: Air density [kg/m³], ISA sea level (the drag's default too).
AIR_DENSITY = 1.225
#: The blade's lift slope a [1/rad] by default: Leishman's typical 2-D aerofoil value, 0.1 per degree.
LIFT_SLOPE = 5.73
#: The blade solidity σ (blade area over disc area) by default, a typical value (Leishman ch. 3).
SOLIDITY = 0.1

ROTOR_INFLOW_SPEC = Spec(
    name="RotorInflow",
    schema="NexusRotorInflowAPI",
    noun="rotor inflow",
    doc="Opt-in: this propeller's thrust follows blade-element momentum theory when air flows axially through "
        "its disc (a downwash source of the scene: NexusDownwashSourceAPI; with nexus:inflow:vehicleMotion, its own "
        "climb too), exactly kT w^2 in still air. Apply it on a prim that applies NexusPropellerAPI and author "
        "nexus:inflow:rotorRadius.",
    params=(
        positive("rotor_radius", "nexus:inflow:rotorRadius", 0.0254, "m",
                 "Rotor radius R, hub centre to blade tip; must be authored where the schema is applied"),
        Param("solidity", "nexus:inflow:solidity", "float", SOLIDITY, "-",
              "Blade solidity sigma: the blades' area over the disc's", low=0.0, high=1.0, open_low=True),
        Param("lift_slope", "nexus:inflow:liftSlope", "float", LIFT_SLOPE, "1/rad",
              "The blade section's lift slope a (2 pi for a thin aerofoil)", low=0.0, high=2.0 * math.pi,
              open_low=True),
        Param("vehicle_motion", "nexus:inflow:vehicleMotion", "bool", False, "-",
              "Count the rotor's own velocity along its axis as inflow too: a climbing rotor loses thrust (a "
              "descending one keeps its still-air thrust, the vortex ring state not being modelled)"),
    ),
)


def blade_pitch(thrust_coefficient: float, radius: float, lift_slope_solidity: float,
                density: float = AIR_DENSITY) -> float:
    """The pitch θ₇₅ [rad] at which the closed form gives ``kT·ω²`` in still air (see the module)."""
    ct0 = thrust_coefficient / (density * math.pi * radius ** 4)
    return 6.0 * ct0 / lift_slope_solidity + 1.5 * math.sqrt(0.5 * ct0)


@wp.func
def held_inflow(w: wp.float32) -> wp.float32:
    """The inflow [m/s] the closed form is used at: ``w`` in climb, 0 in descent (vortex ring state not modelled)."""
    return wp.max(w, wp.float32(0.0))


@wp.func
def inflow_change(w: wp.float32, tip_speed: wp.float32, s: wp.float32, pitch: wp.float32) -> wp.float32:
    """``V(w) - V(0)`` [m/s]: how much more air flows through the disc at axial inflow ``w`` than in still air,
    ``V = λ·ΩR`` of the closed form, rationalised so that ``w = 0`` gives exactly 0."""
    b0 = s * tip_speed / 16.0
    c = s * pitch * tip_speed * tip_speed / 12.0
    b = b0 - 0.5 * w
    # √(b² + c) - √(b0² + c) = (b² - b0²) / (√(b² + c) + √(b0² + c)); b² - b0² = -(w/2)(2 b0 - w/2).
    roots = wp.sqrt(b * b + c) + wp.sqrt(b0 * b0 + c)
    difference = wp.float32(0.0)
    if roots > 0.0:
        difference = -0.5 * w * (2.0 * b0 - 0.5 * w) / roots
    return difference + 0.5 * w


@wp.func
def thrust_change(omega: wp.float32, w: wp.float32, radius: wp.float32, s: wp.float32, pitch: wp.float32,
                  density: wp.float32) -> wp.float32:
    """``T(w) - kT·ω²`` [N] at rotor speed ``omega`` [rad/s] and axial inflow ``w`` [m/s] (down through the disc
    positive; descent held at 0), for rotor radius ``radius`` [m], ``s = σ·a`` and pitch ``pitch`` [rad]
    (:func:`blade_pitch`)."""
    tip_speed = wp.abs(omega) * radius
    area = wp.float32(math.pi) * radius * radius
    return -0.25 * density * area * s * tip_speed * inflow_change(held_inflow(w), tip_speed, s, pitch)


@wp.func
def induced_velocity(omega: wp.float32, w: wp.float32, radius: wp.float32, s: wp.float32,
                     pitch: wp.float32) -> wp.float32:
    """The rotor's own induced velocity v_i [m/s] at axial inflow ``w`` (held as :func:`held_inflow`):
    ``λ·ΩR - w``, ``v_h = √(T / (2 ρ A))`` in still air."""
    tip_speed = wp.abs(omega) * radius
    held = held_inflow(w)
    b = s * tip_speed / 16.0 - 0.5 * held
    return wp.sqrt(b * b + s * pitch * tip_speed * tip_speed / 12.0) - b - held
