"""The Aerosonde of Beard and McLain, written from the book's equations: an independent reference for Nexus.

Beard, R. W. and McLain, T. W., *Small Unmanned Aircraft: Theory and Practice*, Princeton University Press,
2012: the forces and moments of ch. 4 (eqs. 4.6, 4.9 and 4.18-4.19, the lift's sigmoid blend to a flat plate
past stall), the straight-flight trim of ch. 5.3 and the longitudinal state-space model of ch. 5.5 (Table 5.2).
The airframe's numbers are the authors' Appendix E Aerosonde as they publish it with their simulator
(``mavsim_python/parameters/aerosonde_parameters.py`` in github.com/randybeard/mavsim_public, the updated
Table E.2), and the propeller is McLain's updated propulsion model there (a motor with speed constant,
resistance and no-load current on a battery, a propeller with quadratic fits CT(J), CQ(J)); sources per number
below. Nothing here imports Nexus: the fixed-wing tests check Nexus's aerodynamics against this module, so
the two must not share code (docs/fixed_wing_jsbsim.md).

Frames and signs are the book's: body x forward, z down; alpha = atan(w/u) [rad]; elevator positive trailing
edge down (a negative ``C_m_delta_e``); throttle in [0, 1] scales the battery voltage on the motor.

Two choices the printed book leaves open, stated once here:

- **Drag.** The book gives two drag laws: the polar of eq. 4.11, ``C_D = C_D_p + (C_L_0 + C_L_alpha alpha)^2 /
  (pi e AR)``, which its simulator flies, and the linear ``C_D_0 + C_D_alpha alpha`` Table 5.2 is written for.
  The default is the polar with the file's ``C_D_p = 0`` (plus ``C_D_q`` and ``C_D_delta_e`` terms, eq. 4.19):
  with it the trim at 25 m/s is mavsim's published one (``design_projects/model_coef.py``: alpha 0.050107,
  elevator -0.125044, throttle 0.676775) to six digits. It is a very clean airframe (C_D = 0.0044 at cruise,
  L/D 113); ``Aerosonde(drag_polar=False)`` gives the linear law (C_D = 0.043, throttle 0.764).
- **Table 5.2's alpha derivatives.** The book writes ``C_X_alpha = -C_D_alpha cos(alpha*) + C_L_alpha
  sin(alpha*)``, holding the stability-to-body rotation at trim. The full derivative of ``C_X(alpha) =
  -C_D(alpha) cos(alpha) + C_L(alpha) sin(alpha)`` adds ``C_D sin(alpha) + C_L cos(alpha)`` (about 0.51 at
  25 m/s, as large as ``C_X_alpha`` itself): the lift vector turning with the flow. :func:`longitudinal_matrix`
  keeps the table's closed form with the full derivative (``rotation_terms=True``, the default), which is the
  exact Jacobian of the equations of motion at trim and matches mavsim's published numerical ``A_lon``;
  ``rotation_terms=False`` gives the table as printed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Source tags used in the comments below.
#: [E.2]  the authors' Appendix E Aerosonde, mavsim_public parameters/aerosonde_parameters.py (updated Table E.2)
#: [prop] McLain's propulsion addendum, the same file's "Propeller thrust / torque parameters" section


@dataclass(frozen=True)
class Aerosonde:
    """Every number of the book's Aerosonde that the longitudinal model reads, in SI units."""

    # Mass, inertia, geometry, air [E.2]
    mass: float = 11.0  # m [kg]
    Jx: float = 0.8244  # roll inertia [kg m^2]
    Jy: float = 1.135  # pitch inertia [kg m^2]
    Jz: float = 1.759  # yaw inertia [kg m^2]
    Jxz: float = 0.1204  # product of inertia [kg m^2]
    S: float = 0.55  # wing area S_wing [m^2]
    b: float = 2.8956  # span [m]
    c: float = 0.18994  # mean aerodynamic chord [m]
    rho: float = 1.2682  # air density [kg/m^3]
    e: float = 0.9  # Oswald efficiency [-]
    g: float = 9.81  # gravity [m/s^2]
    # Longitudinal coefficients [E.2]; derivatives per [rad], rate derivatives per nondimensional rate c q/(2 Va)
    C_L_0: float = 0.23  # lift at zero alpha [-]
    C_L_alpha: float = 5.61  # lift slope [1/rad]
    C_L_q: float = 7.95  # lift per nondimensional pitch rate [-]
    C_L_delta_e: float = 0.13  # lift per elevator [1/rad]
    C_D_0: float = 0.043  # drag at zero alpha of the linear law (drag_polar=False) [-]
    C_D_alpha: float = 0.03  # drag slope of the linear law [1/rad]
    C_D_q: float = 0.0  # drag per nondimensional pitch rate [-]
    C_D_delta_e: float = 0.0135  # drag per elevator [1/rad]
    C_D_p: float = 0.0  # parasitic drag of the polar, eq. 4.11 [-]
    C_m_0: float = 0.0135  # pitching moment at zero alpha [-]
    C_m_alpha: float = -2.74  # pitch stiffness [1/rad]
    C_m_q: float = -38.21  # pitch damping per nondimensional rate [-]
    C_m_delta_e: float = -0.99  # elevator power [1/rad]
    M: float = 50.0  # sharpness of the stall blend, eq. 4.10 [-]
    alpha0: float = 0.47  # stall angle of the blend, eq. 4.10 [rad]
    # Propulsion [prop]
    D_prop: float = 20 * 0.0254  # propeller diameter, 20 in [m]
    KV_rpm_per_volt: float = 145.0  # motor speed constant from the data sheet [rpm/V]
    R_motor: float = 0.042  # winding resistance [ohm]
    i0: float = 1.5  # no-load current [A]
    V_max: float = 3.7 * 12  # battery voltage at full throttle, 12 cells of 3.7 V [V]
    C_T0: float = 0.09357  # thrust coefficient fit CT(J) = C_T2 J^2 + C_T1 J + C_T0 [-]
    C_T1: float = -0.06044
    C_T2: float = -0.1079
    C_Q0: float = 0.005230  # torque coefficient fit CQ(J) = C_Q2 J^2 + C_Q1 J + C_Q0 [-]
    C_Q1: float = 0.004970
    C_Q2: float = -0.01664
    # Which drag: the polar of eq. 4.11 (True, as mavsim flies it) or the linear C_D_0 + C_D_alpha alpha
    drag_polar: bool = True

    @property
    def aspect_ratio(self) -> float:
        """AR = b^2 / S [-]."""
        return self.b**2 / self.S

    @property
    def KV(self) -> float:
        """Back-EMF constant [V s/rad]: 145 rpm/V is 60 / (2 pi 145) V per rad/s."""
        return 60.0 / (2.0 * math.pi * self.KV_rpm_per_volt)

    @property
    def KQ(self) -> float:
        """Torque constant [N m/A], equal to KV in SI units."""
        return self.KV


AEROSONDE = Aerosonde()


@dataclass(frozen=True)
class Trim:
    """A straight-flight trim: the book's alpha*, delta_e*, delta_t*, theta* and the state it holds."""

    Va: float  # airspeed [m/s]
    gamma: float  # flight-path angle [rad]
    alpha: float  # angle of attack [rad]
    elevator: float  # elevator [rad], positive trailing edge down
    throttle: float  # throttle [0..1]
    theta: float  # pitch [rad]
    thrust: float  # propeller thrust [N]
    omega: float  # propeller speed [rad/s]

    @property
    def u(self) -> float:
        """Body-x airspeed [m/s]."""
        return self.Va * math.cos(self.alpha)

    @property
    def w(self) -> float:
        """Body-z airspeed [m/s]."""
        return self.Va * math.sin(self.alpha)


def stall_blend(alpha: float, p: Aerosonde = AEROSONDE) -> float:
    """The sigmoid sigma(alpha) of eq. 4.10: 0 on the attached-flow side of +/- alpha0, 1 past it [-]."""
    minus = math.exp(-p.M * (alpha - p.alpha0))
    plus = math.exp(p.M * (alpha + p.alpha0))
    return (1.0 + minus + plus) / ((1.0 + minus) * (1.0 + plus))


def lift_coefficient(alpha: float, p: Aerosonde = AEROSONDE) -> float:
    """C_L(alpha) of eq. 4.9: the linear lift blended into a flat plate's 2 sign(alpha) sin^2 cos past stall [-]."""
    sigma = stall_blend(alpha, p)
    flat_plate = 2.0 * math.copysign(1.0, alpha) * math.sin(alpha) ** 2 * math.cos(alpha)
    return (1.0 - sigma) * (p.C_L_0 + p.C_L_alpha * alpha) + sigma * flat_plate


def lift_slope(alpha: float, p: Aerosonde = AEROSONDE) -> float:
    """dC_L/dalpha of eq. 4.9, the blend's own slope included [1/rad] (written out, not differenced)."""
    minus = math.exp(-p.M * (alpha - p.alpha0))
    plus = math.exp(p.M * (alpha + p.alpha0))
    sigma = (1.0 + minus + plus) / ((1.0 + minus) * (1.0 + plus))
    # d sigma / d alpha by the quotient rule: N = 1 + m + p, D = (1 + m)(1 + p), m' = -M m, p' = M p.
    n, d = 1.0 + minus + plus, (1.0 + minus) * (1.0 + plus)
    dn = -p.M * minus + p.M * plus
    dd = -p.M * minus * (1.0 + plus) + (1.0 + minus) * p.M * plus
    dsigma = (dn * d - n * dd) / d**2
    sign = math.copysign(1.0, alpha)
    plate = 2.0 * sign * math.sin(alpha) ** 2 * math.cos(alpha)
    dplate = 2.0 * sign * (2.0 * math.sin(alpha) * math.cos(alpha) ** 2 - math.sin(alpha) ** 3)
    linear = p.C_L_0 + p.C_L_alpha * alpha
    return (1.0 - sigma) * p.C_L_alpha + sigma * dplate + dsigma * (plate - linear)


def drag_coefficient(alpha: float, p: Aerosonde = AEROSONDE) -> float:
    """C_D(alpha) [-]: the polar of eq. 4.11, C_D_p + (C_L_0 + C_L_alpha alpha)^2 / (pi e AR), or the linear
    C_D_0 + C_D_alpha alpha when ``p.drag_polar`` is off."""
    if p.drag_polar:
        return p.C_D_p + (p.C_L_0 + p.C_L_alpha * alpha) ** 2 / (math.pi * p.e * p.aspect_ratio)
    return p.C_D_0 + p.C_D_alpha * alpha


def drag_slope(alpha: float, p: Aerosonde = AEROSONDE) -> float:
    """dC_D/dalpha of :func:`drag_coefficient` [1/rad]."""
    if p.drag_polar:
        return 2.0 * p.C_L_alpha * (p.C_L_0 + p.C_L_alpha * alpha) / (math.pi * p.e * p.aspect_ratio)
    return p.C_D_alpha


@dataclass(frozen=True)
class Propeller:
    """The propeller's operating point: thrust [N], torque [N m], speed [rad/s] and dT/dVa [N s/m]."""

    thrust: float
    torque: float
    omega: float
    dthrust_dVa: float
    dthrust_dthrottle: float


def propeller(Va: float, throttle: float, p: Aerosonde = AEROSONDE) -> Propeller:
    """The motor-propeller balance of McLain's addendum: the speed at which the motor's torque meets CQ(J)'s.

    With Omega the speed [rad/s], n = Omega / (2 pi) [rev/s] and J = Va / (n D), the propeller's torque
    rho n^2 D^5 CQ(J) equals the motor's KQ ((V_in - KV Omega) / R - i0); both sides are quadratic in Omega:
    a Omega^2 + b Omega + c = 0 with
        a = rho D^5 C_Q0 / (2 pi)^2,
        b = rho D^4 C_Q1 Va / (2 pi) + KQ KV / R,
        c = rho D^3 C_Q2 Va^2 - KQ V_in / R + KQ i0,
    and the thrust is rho n^2 D^4 CT(J) = rho D^4 / (4 pi^2) (C_T0 Omega^2 + C_T1 (2 pi Va / D) Omega
    + C_T2 (2 pi Va / D)^2). The derivatives by Va and by throttle are the implicit function's, written out.
    """
    D, rho, two_pi = p.D_prop, p.rho, 2.0 * math.pi
    V_in = p.V_max * throttle
    a = rho * D**5 * p.C_Q0 / two_pi**2
    b = rho * D**4 * p.C_Q1 * Va / two_pi + p.KQ * p.KV / p.R_motor
    c = rho * D**3 * p.C_Q2 * Va**2 - p.KQ * V_in / p.R_motor + p.KQ * p.i0
    root = math.sqrt(b * b - 4.0 * a * c)
    omega = (-b + root) / (2.0 * a)
    k = rho * D**4 / two_pi**2
    s = two_pi / D  # J-scaling: 2 pi Va / D is Omega J [rad/s]
    thrust = k * (p.C_T0 * omega**2 + p.C_T1 * s * Va * omega + p.C_T2 * (s * Va) ** 2)
    torque = rho * D**5 / two_pi**2 * (p.C_Q0 * omega**2 + p.C_Q1 * s * Va * omega + p.C_Q2 * (s * Va) ** 2)
    # f(Omega, Va, V_in) = a Omega^2 + b Omega + c = 0:  dOmega = -(df/dVa dVa + df/dV_in dV_in) / (df/dOmega)
    df_domega = 2.0 * a * omega + b
    df_dVa = rho * D**4 * p.C_Q1 / two_pi * omega + 2.0 * rho * D**3 * p.C_Q2 * Va
    df_dVin = -p.KQ / p.R_motor
    domega_dVa = -df_dVa / df_domega
    domega_dthrottle = -df_dVin * p.V_max / df_domega
    dT_domega = k * (2.0 * p.C_T0 * omega + p.C_T1 * s * Va)
    dT_dVa_direct = k * (p.C_T1 * s * omega + 2.0 * p.C_T2 * s * s * Va)
    return Propeller(thrust, torque, omega, dT_dVa_direct + dT_domega * domega_dVa, dT_domega * domega_dthrottle)


def longitudinal_derivatives(u: float, w: float, q: float, theta: float, elevator: float, throttle: float,
                             p: Aerosonde = AEROSONDE) -> np.ndarray:
    """(du/dt [m/s^2], dw/dt [m/s^2], dq/dt [rad/s^2]) of the book's eqs. 3.15-3.17 and 4.18-4.19, wings level.

    Forces: gravity, the wing's lift and drag rotated from the stability to the body axes (eq. 4.19), the
    propeller's thrust along body x. The moment: the book's C_m (the propeller makes none in pitch).
    """
    Va = math.hypot(u, w)
    alpha = math.atan2(w, u)
    qbar_S = 0.5 * p.rho * Va**2 * p.S
    q_nd = p.c * q / (2.0 * Va)
    C_L = lift_coefficient(alpha, p) + p.C_L_q * q_nd + p.C_L_delta_e * elevator
    C_D = drag_coefficient(alpha, p) + p.C_D_q * q_nd + p.C_D_delta_e * elevator
    C_m = p.C_m_0 + p.C_m_alpha * alpha + p.C_m_q * q_nd + p.C_m_delta_e * elevator
    ca, sa = math.cos(alpha), math.sin(alpha)
    fx = qbar_S * (-C_D * ca + C_L * sa) + propeller(Va, throttle, p).thrust
    fz = qbar_S * (-C_D * sa - C_L * ca)
    du = -q * w - p.g * math.sin(theta) + fx / p.mass
    dw = q * u + p.g * math.cos(theta) + fz / p.mass
    dq = qbar_S * p.c * C_m / p.Jy
    return np.array([du, dw, dq])


def _newton(residual, x0: np.ndarray, what: str, tol: float = 1e-13, iterations: int = 50) -> np.ndarray:
    """Newton's method with a difference Jacobian and step halving: the root of ``residual`` near ``x0``.

    (scipy.optimize.root would do; scipy is not among Nexus's dependencies, and three unknowns need no more.)
    """
    x = np.array(x0, dtype=float)
    r = residual(x)
    for _ in range(iterations):
        if np.max(np.abs(r)) < tol:
            return x
        J = np.empty((r.size, x.size))
        for j in range(x.size):
            h = 1e-7 * max(1.0, abs(x[j]))
            step = np.zeros_like(x)
            step[j] = h
            J[:, j] = (residual(x + step) - residual(x - step)) / (2.0 * h)
        dx = np.linalg.solve(J, -r)
        t = 1.0
        while t > 1e-6:
            trial = residual(x + t * dx)
            if np.max(np.abs(trial)) < np.max(np.abs(r)):
                break
            t *= 0.5
        x, r = x + t * dx, trial
    raise ArithmeticError(f"book_model: the {what} did not converge (residual {np.max(np.abs(r)):.3g})")


def trim(Va: float, gamma: float = 0.0, p: Aerosonde = AEROSONDE) -> Trim:
    """The straight-flight trim of ch. 5.3 at airspeed ``Va`` [m/s] and flight-path angle ``gamma`` [rad].

    Unknowns alpha, elevator, throttle; theta = alpha + gamma, q = 0; the three accelerations of
    :func:`longitudinal_derivatives` are driven to zero (elevator lift and drag included).
    """
    if Va <= 0.0:
        raise ValueError(f"book_model.trim: Va must be positive [m/s], got {Va}")

    def residual(x: np.ndarray) -> np.ndarray:
        alpha, elevator, throttle = x
        return longitudinal_derivatives(Va * math.cos(alpha), Va * math.sin(alpha), 0.0, alpha + gamma,
                                        elevator, throttle, p)

    alpha, elevator, throttle = _newton(residual, np.array([0.05, -0.1, 0.5]), f"trim at {Va} m/s")
    prop = propeller(Va, throttle, p)
    return Trim(Va, gamma, float(alpha), float(elevator), float(throttle), float(alpha + gamma), prop.thrust,
                prop.omega)


def longitudinal_matrix(t: Trim, p: Aerosonde = AEROSONDE, rotation_terms: bool = True) -> np.ndarray:
    """The 5x5 A of the book's eq. 5.50 with Table 5.2's closed-form entries; state (u, w, q, theta, h).

    The aerodynamic X and Z coefficients at trim, C_X = -C_D cos(alpha*) + C_L sin(alpha*) and C_Z = -C_D
    sin(alpha*) - C_L cos(alpha*), and their alpha, q and elevator derivatives; the propeller's dT/dVa enters
    X_u and X_w through dVa/du = u/Va, dVa/dw = w/Va (the updated propulsion model's form of the table's
    rho S_prop C_prop terms). ``rotation_terms`` adds the derivative of the stability-to-body rotation to
    C_X_alpha and C_Z_alpha (see the module docstring).
    """
    u, w, Va, alpha, theta = t.u, t.w, t.Va, t.alpha, t.theta
    ca, sa = math.cos(alpha), math.sin(alpha)
    C_L = lift_coefficient(alpha, p) + p.C_L_delta_e * t.elevator
    C_D = drag_coefficient(alpha, p) + p.C_D_delta_e * t.elevator
    C_L_alpha = lift_slope(alpha, p)
    C_X = -C_D * ca + C_L * sa
    C_Z = -C_D * sa - C_L * ca
    C_D_alpha = drag_slope(alpha, p)
    C_X_alpha = -C_D_alpha * ca + C_L_alpha * sa
    C_Z_alpha = -C_D_alpha * sa - C_L_alpha * ca
    if rotation_terms:
        C_X_alpha += C_D * sa + C_L * ca
        C_Z_alpha += -C_D * ca + C_L * sa
    C_X_q = -p.C_D_q * ca + p.C_L_q * sa
    C_Z_q = -p.C_D_q * sa - p.C_L_q * ca
    C_m = p.C_m_0 + p.C_m_alpha * alpha + p.C_m_delta_e * t.elevator
    rho, S, c, m, Jy, g = p.rho, p.S, p.c, p.mass, p.Jy, p.g
    dT_dVa = propeller(Va, t.throttle, p).dthrust_dVa
    q = 0.0  # straight flight
    X_u = u * rho * S / m * C_X - rho * S * w * C_X_alpha / (2 * m) + rho * S * c * C_X_q * u * q / (4 * m * Va) \
        + dT_dVa * u / (Va * m)
    X_w = -q + w * rho * S / m * C_X + rho * S * c * C_X_q * w * q / (4 * m * Va) + rho * S * C_X_alpha * u / (2 * m) \
        + dT_dVa * w / (Va * m)
    X_q = -w + rho * Va * S * C_X_q * c / (4 * m)
    Z_u = q + u * rho * S / m * C_Z - rho * S * C_Z_alpha * w / (2 * m) + u * rho * S * C_Z_q * c * q / (4 * m * Va)
    Z_w = w * rho * S / m * C_Z + rho * S * C_Z_alpha * u / (2 * m) + rho * w * S * c * C_Z_q * q / (4 * m * Va)
    Z_q = u + rho * Va * S * C_Z_q * c / (4 * m)
    M_u = u * rho * S * c / Jy * C_m - rho * S * c * p.C_m_alpha * w / (2 * Jy) \
        + rho * S * c**2 * p.C_m_q * q * u / (4 * Jy * Va)
    M_w = w * rho * S * c / Jy * C_m + rho * S * c * p.C_m_alpha * u / (2 * Jy) \
        + rho * S * c**2 * p.C_m_q * q * w / (4 * Jy * Va)
    M_q = rho * Va * S * c**2 * p.C_m_q / (4 * Jy)
    ct, st = math.cos(theta), math.sin(theta)
    return np.array([
        [X_u, X_w, X_q, -g * ct, 0.0],
        [Z_u, Z_w, Z_q, -g * st, 0.0],
        [M_u, M_w, M_q, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0, 0.0],
        [st, -ct, 0.0, u * ct + w * st, 0.0],
    ])


def longitudinal_modes(t: Trim, p: Aerosonde = AEROSONDE, rotation_terms: bool = True) -> dict[str, tuple]:
    """The short period and phugoid as (natural frequency [rad/s], damping ratio [-]) from A's eigenvalues.

    A has one zero eigenvalue (height does not feed back) and two complex pairs; the faster pair is the
    short period. A real pair instead of a complex one is an error: the mode is then not an oscillation.
    """
    eig = np.linalg.eigvals(longitudinal_matrix(t, p, rotation_terms))
    pairs = sorted((lam for lam in eig if lam.imag > 1e-9), key=abs)
    if len(pairs) != 2:
        raise ArithmeticError(f"book_model: expected two oscillatory longitudinal pairs, eigenvalues {eig}")
    modes = {}
    for name, lam in zip(("phugoid", "short_period"), pairs):
        wn = abs(lam)
        modes[name] = (float(wn), float(-lam.real / wn))
    return modes
