"""A fixed wing's propeller: thrust and torque from the advance ratio, driven by a DC motor at steady state.

The propulsion model of Beard and McLain's updated chapter 4 (the supplement to *Small
Unmanned Aircraft*, and the authors' ``mavsim`` ``aerosonde_parameters``). A throttle
``δt`` in [0, 1] puts ``V_in = δt·V_max`` across the motor; the motor's torque
``K_Q·(V_in − K_V·Ω)/R − K_Q·i0`` meets the propeller's ``ρ·D⁵·C_Q(J)·(Ω/2π)²`` at the
speed ``Ω`` [rad/s] that solves

    a·Ω² + b·Ω + c = 0,   a = ρD⁵C_Q0/(2π)²,   b = ρD⁴C_Q1·Va/(2π) + K_Q·K_V/R,
                          c = ρD³C_Q2·Va² − K_Q·V_in/R + K_Q·i0

(the larger root), with ``J = 2π·Va/(Ω·D)`` the advance ratio and
``C_T(J) = C_T0 + C_T1·J + C_T2·J²``, ``C_Q(J)`` likewise. Thrust and torque are then

    T = ρ·(Ω/2π)²·D⁴·C_T(J) = ρD⁴C_T0·Ω²/(2π)² + ρD³C_T1·Va·Ω/(2π) + ρD²C_T2·Va²
    Q = ρD⁵C_Q0·Ω²/(2π)² + ρD⁴C_Q1·Va·Ω/(2π) + ρD³C_Q2·Va²

(multiplied out, so a stopped propeller divides by nothing). ``K_V = K_Q = 60/(2π·kv)``
[V·s/rad] from the motor's velocity constant ``kv`` [rpm/V], the same motor constants
as a multirotor's ESC (``nexus:motor:kv``, ``nexus:motor:resistance``,
``nexus:motor:voltage``); unlike the rotors, the motor's speed is taken at its steady
state each tick (its time constant, tens of milliseconds, is left out, as in the book),
so the propeller needs no joint of its own. ``Va`` is the airspeed, as in the book (not
its component along the shaft).

The thrust acts along the base's +x (forward, FLU and FRD alike) at its centre of mass;
the torque the propeller puts on the airframe is ``−spin·Q`` about +x (``spin`` +1: the
propeller turns positively about +x, clockwise seen from behind).
"""

from __future__ import annotations

import math

import warp as wp

from nexus.core import Component
from nexus.core.spec import Input, Param, Spec, positive, non_negative
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.plant import Plant

ADVANCE_RATIO_PROPELLER_SPEC = Spec(
    name="AdvanceRatioPropeller",
    schema="NexusAdvanceRatioPropellerAPI",
    noun="propeller",
    doc="A fixed wing's propeller on its base body: thrust and torque from the advance ratio (CT(J) and CQ(J), "
        "quadratic) at the speed where a DC motor, given throttle times its voltage, meets the propeller's torque.",
    params=(
        positive("diameter", "nexus:diameter", 0.508, "m", "Propeller diameter D"),
        Param("thrust_coefficients", "nexus:thrustCoefficients", "float3", (0.09357, -0.06044, -0.1079), "-",
              "C_T0, C_T1, C_T2 of C_T(J) = C_T0 + C_T1 J + C_T2 J^2"),
        Param("torque_coefficients", "nexus:torqueCoefficients", "float3", (0.005230, 0.004970, -0.01664), "-",
              "C_Q0, C_Q1, C_Q2 of C_Q(J); C_Q0 > 0"),
        positive("kv", "nexus:motor:kv", 145.0, "rpm/V", "Motor velocity constant"),
        positive("voltage", "nexus:motor:voltage", 44.4, "V", "Supply voltage at full throttle"),
        positive("resistance", "nexus:motor:resistance", 0.042, "ohm", "Winding resistance"),
        non_negative("no_load_current", "nexus:motor:noLoadCurrent", 1.5, "A", "Current at zero torque"),
        positive("air_density", "nexus:airDensity", 1.225, "kg/m^3", "Air density rho"),
        Param("channel", "nexus:channel", "int", 4, "-", "Index of the controls row's element holding the throttle",
              low=0, high=CONTROLS_WIDTH - 1),
        Param("spin", "nexus:spin", "int", 1, "-", "+1: turns positively about the base's +x (clockwise seen from "
              "behind); -1 the other way", choices=(-1, 1)),
    ),
    inputs=(
        Input("wind", wp.vec3, default=wp.vec3(0.0, 0.0, 0.0),
              doc="The air's velocity at the base [m/s], world ENU; still air when no wind field writes it"),
        Input("controls", wp.float32, (1, CONTROLS_WIDTH), default=0.0, connectable=True,
              doc="The prim whose stage writes the `controls` signal (a controller)."),
    ),
    stage="propulsion",
    kind="force",
)


@wp.struct
class PropellerModel:
    """The propeller's and motor's constants as the kernels read them (see the module doc)."""

    diameter: wp.float32
    ct: wp.vec3
    cq: wp.vec3
    k_motor: wp.float32  # K_V = K_Q [V s/rad]
    voltage: wp.float32
    resistance: wp.float32
    no_load_current: wp.float32
    density: wp.float32
    spin: wp.float32


def propeller_model(values: dict) -> PropellerModel:
    """The kernels' struct from a prim's checked values (:data:`ADVANCE_RATIO_PROPELLER_SPEC`)."""
    m = PropellerModel()
    m.diameter = float(values["diameter"])
    m.ct = wp.vec3(*(float(c) for c in values["thrust_coefficients"]))
    m.cq = wp.vec3(*(float(c) for c in values["torque_coefficients"]))
    m.k_motor = 60.0 / (2.0 * math.pi * float(values["kv"]))
    m.voltage, m.resistance = float(values["voltage"]), float(values["resistance"])
    m.no_load_current, m.density = float(values["no_load_current"]), float(values["air_density"])
    m.spin = float(values["spin"])
    return m


@wp.func
def propeller_speed(airspeed: wp.float32, throttle: wp.float32, m: PropellerModel) -> wp.float32:
    """Ω [rad/s] where the motor's torque meets the propeller's, 0 where no positive speed does."""
    two_pi = 2.0 * wp.pi
    d = m.diameter
    a = m.density * d * d * d * d * d * m.cq[0] / (two_pi * two_pi)
    b = m.density * d * d * d * d * m.cq[1] * airspeed / two_pi + m.k_motor * m.k_motor / m.resistance
    c = (m.density * d * d * d * m.cq[2] * airspeed * airspeed
         - m.k_motor * m.voltage * wp.clamp(throttle, 0.0, 1.0) / m.resistance + m.k_motor * m.no_load_current)
    return wp.max(0.0, (-b + wp.sqrt(wp.max(b * b - 4.0 * a * c, 0.0))) / (2.0 * a))


@wp.func
def propeller_thrust_torque(airspeed: wp.float32, throttle: wp.float32, m: PropellerModel) -> wp.vec2:
    """Thrust T [N] and torque Q [N·m] at ``airspeed`` [m/s] and ``throttle`` [0, 1] (see the module doc)."""
    omega = propeller_speed(airspeed, throttle, m)
    d = m.diameter
    n = omega / (2.0 * wp.pi)  # [rev/s]
    thrust = m.density * d * d * (d * d * m.ct[0] * n * n + d * m.ct[1] * airspeed * n + m.ct[2] * airspeed * airspeed)
    torque = m.density * d * d * d * (d * d * m.cq[0] * n * n + d * m.cq[1] * airspeed * n
                                      + m.cq[2] * airspeed * airspeed)
    return wp.vec2(thrust, torque)


@wp.func
def propeller_wrench_body(airspeed: wp.float32, throttle: wp.float32, m: PropellerModel) -> wp.spatial_vector:
    """Force [N] and moment [N·m] on the airframe, body frame (along and about +x: FLU and FRD alike)."""
    tq = propeller_thrust_torque(airspeed, throttle, m)
    return wp.spatial_vector(wp.vec3(tq[0], 0.0, 0.0), wp.vec3(-m.spin * tq[1], 0.0, 0.0))


@wp.kernel
def add_propeller_thrust(
    # In:
    wind: wp.array(dtype=wp.vec3),
    controls: wp.array2d(dtype=wp.float32),
    body_q: wp.array(dtype=wp.transform),
    body_qd: wp.array(dtype=wp.spatial_vector),
    # Model:
    base: wp.int32,
    bodies_per_world: wp.int32,
    channel: wp.int32,
    model: PropellerModel,
    # Out:
    body_f: wp.array(dtype=wp.spatial_vector),
):
    world = wp.tid()
    b = base + world * bodies_per_world
    rotation = wp.transform_get_rotation(body_q[b])
    airspeed = wp.length(wp.spatial_top(body_qd[b]) - wind[world])
    wrench = propeller_wrench_body(airspeed, controls[world, channel], model)
    body_f[b] = body_f[b] + wp.spatial_vector(wp.quat_rotate(rotation, wp.spatial_top(wrench)),
                                              wp.quat_rotate(rotation, wp.spatial_bottom(wrench)))


class AdvanceRatioPropeller(Component):
    """A fixed wing's propeller on the base body, one kernel a tick over the worlds (see the module doc)."""

    spec = ADVANCE_RATIO_PROPELLER_SPEC

    def __init__(self, name: str, plant: Plant, **params):
        super().__init__(name)
        self.plant = plant
        self.values = {**self.spec.defaults(), **params}
        self.channel = int(self.values["channel"])
        self.model = propeller_model(self.values)

    @classmethod
    def from_prim(cls, prim, values, ctx) -> AdvanceRatioPropeller:
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def run(self, io) -> None:
        plant = self.plant
        wp.launch(add_propeller_thrust, plant.worlds,
                  inputs=[io["wind"], io["controls"], plant.state.body_q, plant.state.body_qd, plant.base,
                          plant.bodies_per_world, self.channel, self.model],
                  outputs=[plant.state.body_f], device=io.device)
