"""A fixed wing's aerodynamic force stage: lift, drag, side force and the three moments on the base body.

The model is Beard and McLain's, *Small Unmanned Aircraft* (Princeton 2012), ch. 4
(eq. 4.6 to 4.19), with the stability and control derivatives of a vehicle file
(``NexusFixedWingAeroAPI``). Frames: the book works in body FRD (x forward, y right,
z down) and NED; Nexus's bodies are FLU in an ENU world (:mod:`nexus.plant.frames`).
The kernel

1. takes the air's velocity at the base [m/s, world ENU] from the ``wind`` input (the
   air package's mean wind, gusts and Dryden turbulence; still air without one), and
   the aircraft's velocity relative to it, ``v_r = v_base − wind``, into body FLU, then
   into FRD by ``(x, y, z) → (x, −y, −z)``: the book's ``(u_r, v_r, w_r)``;
2. forms ``Va = |v_r|``, ``α = atan2(w_r, u_r)``, ``β = asin(v_r / Va)`` and the body
   rates ``(p, q, r)``, FRD likewise from the base's angular velocity;
3. evaluates, with ``q̄ = ½ρVa²S``,

       F_lift = q̄ [CL(α) + CL_q·c·q/(2Va) + CL_δe·δe + CL_δf·δf]
       F_drag = q̄ [CD(α) + CD_q·c·q/(2Va) + CD_δe·δe + CD_δf·δf]
       fx = −cosα·F_drag + sinα·F_lift,   fz = −sinα·F_drag − cosα·F_lift
       fy = q̄ [CY0 + CY_β·β + CY_p·b·p/(2Va) + CY_r·b·r/(2Va) + CY_δa·δa + CY_δr·δr]
       l  = q̄·b [Cℓ0 + Cℓ_β·β + Cℓ_p·b·p/(2Va) + Cℓ_r·b·r/(2Va) + Cℓ_δa·δa + Cℓ_δr·δr]
       m  = q̄·c [Cm0 + Cm_α·α + Cm_q·c·q/(2Va) + Cm_δe·δe + Cm_δf·δf]
       n  = q̄·b [Cn0 + Cn_β·β + Cn_p·b·p/(2Va) + Cn_r·b·r/(2Va) + Cn_δa·δa + Cn_δr·δr]

   with CL(α) the stall blend of :mod:`nexus.aero.lift_blend` and CD(α) either the
   parabolic polar ``CD_p + (CL0 + CL_α·α)²/(π·e·AR)`` (eq. 4.11, ``dragModel = "polar"``)
   or the linear ``CD0 + CD_α·α`` (eq. 4.9, ``"linear"``). The rate terms are written
   multiplied out (``¼ρ·Va·S·c·CL_q·q``), so still air gives a zero wrench, not 0/0;
4. turns the force and moment back from FRD to FLU and into the world, and adds them to
   the base's applied wrench at its centre of mass (as :mod:`nexus.air.drag` does).

The derivatives are about their reference point (``nexus:referencePoint`` [m, body FLU], measured
from the centre of mass the vehicle file gives the base; default: that centre of mass). When the
base's centre of mass is elsewhere (a drawn ``com_x``, ``com_y``, ``com_z``), with ``r`` the arm
from the centre of mass to the reference point, the air is taken at the reference point
(``v_r + ω × r``, which moves the rate derivatives) and the moment about the centre of mass is
``M_cg = M_ref + r × F``. With the two points the same (every file that does not declare one, with
no drawn offset) the stage adds nothing and flies the same bits.

Deflections ``δa, δe, δr, δf`` [rad] are the book's signs (a positive elevator is
trailing edge down, pitching the nose down when Cm_δe < 0) and come from the control
surfaces' signals (:mod:`nexus.aero.control_surfaces`); a file whose derivatives use a
surface must have that surface's actuator.
"""

from __future__ import annotations

import logging
import math

import warp as wp

from nexus.aero.control_surfaces import CONTROL_SURFACE_SPEC
from nexus.aero.lift_blend import blended_lift_coefficient
from nexus.core import Component
from nexus.core.errors import BuildError
from nexus.core.spec import Input, Param, Spec, non_negative, positive
from nexus.plant.plant import Plant
from nexus.schemas.reader import where

log = logging.getLogger("nexus")

#: The control surfaces a wing's derivatives may name, and the suffix of their derivatives.
SURFACE_ROLES = ("aileron", "elevator", "rudder", "flap")
SURFACE_SUFFIX = {"aileron": "delta_a", "elevator": "delta_e", "rudder": "delta_r", "flap": "delta_f"}
#: ``dragModel`` token -> the kernel's integer.
DRAG_MODELS = {"polar": 0, "linear": 1}


def _coefficient(key: str, default: float, doc: str) -> Param:
    return Param(key, f"nexus:{key}", "float", default, "-", doc)


#: Stability and control derivatives (Beard and McLain's names), each per radian or per unit rate term.
COEFFICIENTS = (
    _coefficient("C_L_0", 0.0, "Lift coefficient at zero angle of attack"),
    _coefficient("C_L_alpha", 0.0, "Lift slope per radian of angle of attack"),
    _coefficient("C_L_q", 0.0, "Lift per unit pitch-rate term c q / (2 Va)"),
    _coefficient("C_L_delta_e", 0.0, "Lift per radian of elevator"),
    _coefficient("C_L_delta_f", 0.0, "Lift per radian of flap"),
    _coefficient("C_D_0", 0.0, "Drag coefficient at zero angle of attack (linear drag model)"),
    _coefficient("C_D_alpha", 0.0, "Drag per radian of angle of attack (linear drag model)"),
    _coefficient("C_D_p", 0.0, "Parasitic drag coefficient (polar drag model)"),
    _coefficient("C_D_q", 0.0, "Drag per unit pitch-rate term"),
    _coefficient("C_D_delta_e", 0.0, "Drag per radian of elevator"),
    _coefficient("C_D_delta_f", 0.0, "Drag per radian of flap"),
    _coefficient("C_m_0", 0.0, "Pitching-moment coefficient at zero angle of attack"),
    _coefficient("C_m_alpha", 0.0, "Pitching moment per radian of angle of attack (< 0: statically stable)"),
    _coefficient("C_m_q", 0.0, "Pitching moment per unit pitch-rate term"),
    _coefficient("C_m_delta_e", 0.0, "Pitching moment per radian of elevator"),
    _coefficient("C_m_delta_f", 0.0, "Pitching moment per radian of flap"),
    _coefficient("C_Y_0", 0.0, "Side-force coefficient at zero sideslip"),
    _coefficient("C_Y_beta", 0.0, "Side force per radian of sideslip"),
    _coefficient("C_Y_p", 0.0, "Side force per unit roll-rate term b p / (2 Va)"),
    _coefficient("C_Y_r", 0.0, "Side force per unit yaw-rate term b r / (2 Va)"),
    _coefficient("C_Y_delta_a", 0.0, "Side force per radian of aileron"),
    _coefficient("C_Y_delta_r", 0.0, "Side force per radian of rudder"),
    _coefficient("C_ell_0", 0.0, "Rolling-moment coefficient at zero sideslip"),
    _coefficient("C_ell_beta", 0.0, "Rolling moment per radian of sideslip"),
    _coefficient("C_ell_p", 0.0, "Rolling moment per unit roll-rate term"),
    _coefficient("C_ell_r", 0.0, "Rolling moment per unit yaw-rate term"),
    _coefficient("C_ell_delta_a", 0.0, "Rolling moment per radian of aileron"),
    _coefficient("C_ell_delta_r", 0.0, "Rolling moment per radian of rudder"),
    _coefficient("C_n_0", 0.0, "Yawing-moment coefficient at zero sideslip"),
    _coefficient("C_n_beta", 0.0, "Yawing moment per radian of sideslip"),
    _coefficient("C_n_p", 0.0, "Yawing moment per unit roll-rate term"),
    _coefficient("C_n_r", 0.0, "Yawing moment per unit yaw-rate term"),
    _coefficient("C_n_delta_a", 0.0, "Yawing moment per radian of aileron"),
    _coefficient("C_n_delta_r", 0.0, "Yawing moment per radian of rudder"),
)

FIXED_WING_AERO_SPEC = Spec(
    name="FixedWingAero",
    schema="NexusFixedWingAeroAPI",
    noun="fixed-wing aerodynamics",
    doc="A fixed wing's lift, drag, side force and roll, pitch and yaw moments on the vehicle's base body, from the "
        "air's velocity relative to it (wind, gusts and turbulence included), angle of attack, sideslip, body rates "
        "and control-surface deflections, with Beard and McLain's stability and control derivatives (Small Unmanned "
        "Aircraft, ch. 4); the lift curve blends into a flat plate past the stall angle.",
    params=(
        positive("wing_area", "nexus:wingArea", 0.55, "m^2", "Wing reference area S"),
        positive("wing_span", "nexus:wingSpan", 2.8956, "m", "Wing span b"),
        positive("chord", "nexus:meanChord", 0.18994, "m", "Mean aerodynamic chord c"),
        positive("air_density", "nexus:airDensity", 1.225, "kg/m^3", "Air density rho"),
        positive("oswald", "nexus:oswaldEfficiency", 0.9, "-", "Oswald efficiency e of the polar drag model"),
        Param("drag_model", "nexus:dragModel", "token", "polar", "-",
              "polar: CD_p + (CL0 + CLalpha alpha)^2 / (pi e AR); linear: CD0 + CDalpha alpha",
              choices=tuple(DRAG_MODELS)),
        non_negative("sharpness", "nexus:stallSharpness", 50.0, "-", "Sharpness M of the stall blend"),
        Param("stall_angle", "nexus:stallAngle", "float", 0.47, "rad", "Stall angle alpha0 of the blend",
              low=0.0, high=math.pi / 2, open_low=True),
        Param("reference_point", "nexus:referencePoint", "float3", (0.0, 0.0, 0.0), "m",
              "Point the stability and control derivatives are about, body FLU, measured from the centre of mass the "
              "file gives the base (0: that centre of mass); a drawn centre of mass moves the moments by r x F"),
        *COEFFICIENTS,
    ),
    inputs=(
        Input("wind", wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
              doc="The air's velocity at the base [m/s], world ENU; still air when no wind field writes it"),
        *(Input(f"surface/{role}", wp.float32, default=0.0,
                doc=f"The {role}'s deflection [rad] (book sign); 0 without a control surface of that role")
          for role in SURFACE_ROLES),
    ),
    stage="aero",
    kind="force",
)


@wp.struct
class AeroModel:
    """A wing's constants as the kernels read them (see the module doc for each symbol)."""

    area: wp.float32
    span: wp.float32
    chord: wp.float32
    density: wp.float32
    polar: wp.float32  # 1: polar drag, 0: linear
    aspect_ratio: wp.float32
    oswald: wp.float32
    sharpness: wp.float32
    stall_angle: wp.float32
    lift: wp.vec4  # C_L_0, C_L_alpha, C_L_q, C_L_delta_e
    drag: wp.vec4  # C_D_0, C_D_alpha, C_D_q, C_D_delta_e
    pitch: wp.vec4  # C_m_0, C_m_alpha, C_m_q, C_m_delta_e
    flap: wp.vec3  # C_L_delta_f, C_D_delta_f, C_m_delta_f
    parasitic: wp.float32  # C_D_p
    side: wp.spatial_vector  # C_Y_0, _beta, _p, _r, _delta_a, _delta_r
    roll: wp.spatial_vector  # C_ell_0, ...
    yaw: wp.spatial_vector  # C_n_0, ...


def aero_model(values: dict) -> AeroModel:
    """The kernels' struct from a prim's checked values (:data:`FIXED_WING_AERO_SPEC`)."""
    v = values
    m = AeroModel()
    m.area, m.span, m.chord = float(v["wing_area"]), float(v["wing_span"]), float(v["chord"])
    m.density, m.oswald = float(v["air_density"]), float(v["oswald"])
    m.polar = 1.0 if DRAG_MODELS[v["drag_model"]] == 0 else 0.0
    m.aspect_ratio = m.span * m.span / m.area
    m.sharpness, m.stall_angle = float(v["sharpness"]), float(v["stall_angle"])
    m.lift = wp.vec4(*(float(v[k]) for k in ("C_L_0", "C_L_alpha", "C_L_q", "C_L_delta_e")))
    m.drag = wp.vec4(*(float(v[k]) for k in ("C_D_0", "C_D_alpha", "C_D_q", "C_D_delta_e")))
    m.pitch = wp.vec4(*(float(v[k]) for k in ("C_m_0", "C_m_alpha", "C_m_q", "C_m_delta_e")))
    m.flap = wp.vec3(*(float(v[k]) for k in ("C_L_delta_f", "C_D_delta_f", "C_m_delta_f")))
    m.parasitic = float(v["C_D_p"])
    lateral = ("0", "beta", "p", "r", "delta_a", "delta_r")
    m.side = wp.spatial_vector(*(float(v[f"C_Y_{k}"]) for k in lateral))
    m.roll = wp.spatial_vector(*(float(v[f"C_ell_{k}"]) for k in lateral))
    m.yaw = wp.spatial_vector(*(float(v[f"C_n_{k}"]) for k in lateral))
    return m


@wp.func
def lateral(c: wp.spatial_vector, beta: wp.float32, aileron: wp.float32, rudder: wp.float32) -> wp.float32:
    """A lateral coefficient's terms in sideslip and deflections (the rate terms are added times q̄, below)."""
    return c[0] + c[1] * beta + c[4] * aileron + c[5] * rudder


@wp.func
def aero_wrench_frd(air: wp.vec3, rates: wp.vec3, surfaces: wp.vec4, m: AeroModel) -> wp.spatial_vector:
    """Force [N] and moment [N·m] in body FRD from the velocity relative to the air ``air`` [m/s, FRD], the body
    rates ``(p, q, r)`` [rad/s, FRD] and the deflections ``(δa, δe, δr, δf)`` [rad] (see the module doc)."""
    va = wp.length(air)
    alpha = wp.atan2(air[2], air[0])
    beta = wp.float32(0.0)
    if va > 0.0:
        beta = wp.asin(wp.clamp(air[1] / va, -1.0, 1.0))
    aileron, elevator, rudder, flap = surfaces[0], surfaces[1], surfaces[2], surfaces[3]
    half_rho_s = 0.5 * m.density * m.area
    qbar = half_rho_s * va * va
    # q̄·X·c·q/(2Va) = ½ρS·Va·(c/2)·q·X: the rate terms times q̄, without dividing by Va.
    pitch_rate = half_rho_s * va * 0.5 * m.chord * rates[1]
    roll_rate = half_rho_s * va * 0.5 * m.span * rates[0]
    yaw_rate = half_rho_s * va * 0.5 * m.span * rates[2]
    linear_lift = m.lift[0] + m.lift[1] * alpha
    cl = blended_lift_coefficient(alpha, m.lift[0], m.lift[1], m.sharpness, m.stall_angle)
    cd = m.polar * (m.parasitic + linear_lift * linear_lift / (wp.pi * m.oswald * m.aspect_ratio)) + (
        1.0 - m.polar) * (m.drag[0] + m.drag[1] * alpha)
    lift = qbar * (cl + m.lift[3] * elevator + m.flap[0] * flap) + m.lift[2] * pitch_rate
    drag = qbar * (cd + m.drag[3] * elevator + m.flap[1] * flap) + m.drag[2] * pitch_rate
    ca, sa = wp.cos(alpha), wp.sin(alpha)
    fx = -ca * drag + sa * lift
    fz = -sa * drag - ca * lift
    fy = qbar * lateral(m.side, beta, aileron, rudder) + m.side[2] * roll_rate + m.side[3] * yaw_rate
    l_moment = m.span * (qbar * lateral(m.roll, beta, aileron, rudder) + m.roll[2] * roll_rate
                         + m.roll[3] * yaw_rate)
    m_moment = m.chord * (qbar * (m.pitch[0] + m.pitch[1] * alpha + m.pitch[3] * elevator + m.flap[2] * flap)
                          + m.pitch[2] * pitch_rate)
    n_moment = m.span * (qbar * lateral(m.yaw, beta, aileron, rudder) + m.yaw[2] * roll_rate
                         + m.yaw[3] * yaw_rate)
    return wp.spatial_vector(wp.vec3(fx, fy, fz), wp.vec3(l_moment, m_moment, n_moment))


@wp.func
def frd(v: wp.vec3) -> wp.vec3:
    """FLU <-> FRD (its own inverse: 180° about x)."""
    return wp.vec3(v[0], -v[1], -v[2])


@wp.kernel
def add_aero_wrench(
    # In:
    wind: wp.array(dtype=wp.vec3),
    aileron: wp.array(dtype=wp.float32),
    elevator: wp.array(dtype=wp.float32),
    rudder: wp.array(dtype=wp.float32),
    flap: wp.array(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    body_com: wp.array(dtype=wp.vec3),
    # Model:
    base: wp.int32,
    bodies_per_world: wp.int32,
    model: AeroModel,
    reference: wp.vec3,
    # Out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    b = base + world * bodies_per_world
    rotation = wp.transform_get_rotation(body_q[b])
    relative = wp.quat_rotate_inv(rotation, wp.spatial_top(body_qd[b]) - wind[world])  # FLU
    rates = wp.quat_rotate_inv(rotation, wp.spatial_bottom(body_qd[b]))  # FLU
    arm = reference - body_com[b]  # [m, FLU] from the centre of mass to the derivatives' reference point
    moved = wp.length_sq(arm) > 0.0
    if moved:
        relative = relative + wp.cross(rates, arm)  # the air at the reference point
    wrench = aero_wrench_frd(frd(relative), frd(rates),
                             wp.vec4(aileron[world], elevator[world], rudder[world], flap[world]), model)
    force_body = frd(wp.spatial_top(wrench))
    moment_body = frd(wp.spatial_bottom(wrench))
    if moved:
        moment_body = moment_body + wp.cross(arm, force_body)  # M_cg = M_ref + (r_ref − r_cg) × F
    force = wp.quat_rotate(rotation, force_body)
    moment = wp.quat_rotate(rotation, moment_body)
    body_f[b] = body_f[b] + wp.spatial_vector(force, moment)


def check_wing(prim, values: dict, path, stage) -> None:
    """The checks a wing's prim needs beyond its spec's bounds: a one-line BuildError for a control derivative
    whose surface has no actuator, a warning for a statically unstable pitch or a negative lift slope."""
    at = where(prim, FIXED_WING_AERO_SPEC, path)
    unset = CONTROL_SURFACE_SPEC.param("role").default  # a surface prim without nexus:role is the spec's default
    roles = {str(p.GetAttribute("nexus:role").Get() or unset) for p in stage.Traverse()
             if p.HasAPI(CONTROL_SURFACE_SPEC.schema)}
    for role in SURFACE_ROLES:
        used = [p.attr for p in FIXED_WING_AERO_SPEC.params if p.key.endswith(SURFACE_SUFFIX[role]) and values[p.key] != 0]
        if used and role not in roles:
            raise BuildError(f"{at}: {used[0]} is {values[used[0].removeprefix('nexus:')]:g} but no prim with "
                             f"{CONTROL_SURFACE_SPEC.schema} has nexus:role = \"{role}\"; add the {role}'s actuator "
                             f"or set its derivatives ({', '.join(used)}) to 0")
    if values["C_m_alpha"] >= 0.0:
        log.warning("%s: nexus:C_m_alpha is %g >= 0: the airframe is statically unstable in pitch", at,
                    values["C_m_alpha"])
    if values["C_L_alpha"] < 0.0:
        log.warning("%s: nexus:C_L_alpha is %g < 0: the lift falls as the angle of attack rises", at,
                    values["C_L_alpha"])


class FixedWingAero(Component):
    """One wing's aerodynamics on the base body, one kernel a tick over the worlds (see the module doc)."""

    spec = FIXED_WING_AERO_SPEC

    def __init__(self, name: str, plant: Plant, **params):
        super().__init__(name)
        self.plant = plant
        self.values = {**self.spec.defaults(), **params}
        self.model = aero_model(self.values)
        # The reference point in the base's frame [m, FLU]: the file's centre of mass (read before any draw moves
        # it) plus the declared offset.
        com = plant.model.body_com.numpy()[plant.base]
        self.reference = wp.vec3(*(float(c) + float(r) for c, r in zip(com, self.values["reference_point"])))

    @classmethod
    def from_prim(cls, prim, values, ctx) -> FixedWingAero:
        check_wing(prim, values, ctx.path, ctx.stage)
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def run(self, io) -> None:
        plant = self.plant
        wp.launch(add_aero_wrench, plant.worlds,
                  inputs=[io["wind"], *(io[f"surface/{r}"] for r in SURFACE_ROLES), plant.state.body_q,
                          plant.state.body_qd, plant.model.body_com, plant.base, plant.bodies_per_world,
                          self.model, self.reference],
                  outputs=[plant.state.body_f], device=io.device)
