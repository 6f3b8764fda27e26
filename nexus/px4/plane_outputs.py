"""A plane's PX4 outputs: which of HIL_ACTUATOR_CONTROLS' 16 values drives which slot of the ``controls`` row.

PX4 puts each output function on the output channel whose ``PWM_MAIN_FUNCn`` names it (SITL's output
driver, ``pwm_out_sim``; HITL and SIH use ``HIL_ACT_FUNCn``), and sends motors in [0, 1] and servos in
[−1, 1]. ``nexus px4 params`` (:mod:`nexus.px4.plane_params`) assigns them so that PX4's output channel
``n`` is the vehicle file's ``nexus:channel`` ``n``: the propeller's channel carries ``Motor1`` (101) and
each control surface's channel a servo (``Servo1`` = 201 for the first surface in the table below, and so
on), whose type (``CA_SV_CSi_TYPE``) and torque (``CA_SV_CSi_TRQ_R/P/Y``) tell PX4's control allocator
what it moves.

The one thing left to map is the sign. PX4's convention (its actuator docs, "Control Surface Deflection
Convention"): a positive servo value moves a horizontal surface up and a vertical one right, so with the
torques PX4 gives those types by default a positive elevator pitches the nose up and a positive rudder
yaws it right. A vehicle file's surfaces follow the book (Beard and McLain, docs/fixed_wing.md, "Frames"):
a positive elevator is trailing edge down (nose down) and a positive rudder yaws left; a positive aileron
rolls right in both. So:

    controls[channel] = sign · px4[channel]    sign: aileron +1, elevator −1, rudder −1
    controls[propeller channel] = px4[propeller channel]

and every other slot is 0. A flap, or a second surface of one role, has no mapping yet: refused in one line.

A standard VTOL (a plane whose file also has lift rotors' ESCs, ``NexusEscAPI``) is PX4's standard-VTOL
airframe (MAV_TYPE 22, ``CA_AIRFRAME`` 2): its lift ESCs' channels carry ``Motor1`` to ``MotorN`` in channel order
(PX4's multicopter motors, commands in [0, 1] written as they come), the pusher ``MotorN+1`` and the surfaces
the servos as above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nexus.aero.control_surfaces import CONTROL_SURFACE_SPEC
from nexus.aero.propeller_advance import ADVANCE_RATIO_PROPELLER_SPEC
from nexus.core.errors import BuildError
from nexus.plant.controls import CONTROLS_WIDTH
from nexus.plant.esc import ESC_SPEC
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim

#: PX4's output functions (its ``output_functions.yaml``): Motor1, and Servo1 (Servo n is 200 + n).
MOTOR1, SERVO1 = 101, 201
#: MAVLink's MAV_TYPE_FIXED_WING: what PX4's HEARTBEAT says when it runs a fixed-wing airframe (its MAV_TYPE
#: parameter, on its MAVLink links). On the simulator link PX4's HEARTBEAT leaves the type at MAV_TYPE_GENERIC (0:
#: ``SimulatorMavlink::send_heartbeat`` fills only the autopilot and the armed flag), which says nothing either way.
MAV_TYPE_GENERIC, MAV_TYPE_FIXED_WING = 0, 1
#: MAVLink's MAV_TYPE_VTOL_FIXEDROTOR: separate rotors for hover and for cruise (PX4's standard-VTOL airframes).
MAV_TYPE_VTOL_FIXEDROTOR = 22


@dataclass(frozen=True)
class SurfaceKind:
    """How PX4 sees one role of surface: its control-allocation type, the torque (roll, pitch, yaw) a positive
    servo value makes, and the sign that turns PX4's servo value into the vehicle file's command."""

    px4_type: int
    name: str
    torque: tuple[float, float, float]
    sign: float


#: Role -> PX4's view of it (``CA_SV_CSi_TYPE``: 3 Elevator, 4 Rudder, 15 Single Channel Aileron). One aileron
#: channel moves both ailerons (the book's δa), so it is PX4's single-channel aileron, rolling right when positive.
SURFACE_KINDS = {
    "aileron": SurfaceKind(15, "Single Channel Aileron", (1.0, 0.0, 0.0), +1.0),
    "elevator": SurfaceKind(3, "Elevator", (0.0, 1.0, 0.0), -1.0),
    "rudder": SurfaceKind(4, "Rudder", (0.0, 0.0, 1.0), -1.0),
}


@dataclass(frozen=True)
class Surface:
    """One control surface as PX4 drives it: its prim, role, channel (PX4's output channel too), travel [rad]."""

    prim: str
    role: str
    channel: int
    travel: float

    @property
    def kind(self) -> SurfaceKind:
        return SURFACE_KINDS[self.role]


@dataclass(frozen=True)
class PlaneOutputs:
    """The surfaces (in PX4's servo order: Servo1 first) and the propeller's channel of a plane's file, and a
    standard VTOL's lift ESCs' channels (in PX4's motor order; none for a plane)."""

    surfaces: tuple[Surface, ...]
    motor_channel: int
    lift_channels: tuple[int, ...] = ()

    @property
    def mav_type(self) -> int:
        """The MAV_TYPE PX4's airframe for this vehicle says: fixed wing, or a VTOL with fixed lift rotors."""
        return MAV_TYPE_VTOL_FIXEDROTOR if self.lift_channels else MAV_TYPE_FIXED_WING

    def functions(self) -> dict[int, int]:
        """Output channel (0-based) -> PX4 output function; channels not listed are disabled (0)."""
        out = {channel: MOTOR1 + i for i, channel in enumerate(self.lift_channels)}
        out[self.motor_channel] = MOTOR1 + len(self.lift_channels)
        out.update({surface.channel: SERVO1 + i for i, surface in enumerate(self.surfaces)})
        return out

    def signs(self) -> np.ndarray:
        """Per output channel: the factor from PX4's value to the controls row's (0 where nothing is driven)."""
        signs = np.zeros(CONTROLS_WIDTH, dtype=np.float64)
        signs[list(self.lift_channels)] = 1.0
        signs[self.motor_channel] = 1.0
        for surface in self.surfaces:
            signs[surface.channel] = surface.kind.sign
        return signs

    def row(self, px4_controls) -> tuple:
        """HIL_ACTUATOR_CONTROLS' 16 values as the controls row (Python floats, as the exchange writes them)."""
        return tuple((self._signs * np.asarray(px4_controls, dtype=np.float64)).tolist())

    def __post_init__(self):
        object.__setattr__(self, "_signs", self.signs())


def plane_outputs(stage, path) -> PlaneOutputs:
    """The plane in vehicle file ``stage`` (opened from ``path``) as PX4's outputs. A propeller missing, a surface
    PX4 cannot drive yet, two surfaces of one role, or two parts on one channel: one line naming file and prim."""
    surfaces: list[Surface] = []
    motor = None
    lift: list[int] = []
    taken: dict[int, str] = {}
    for prim in stage.Traverse():
        apis = nexus_apis(prim)
        where = f"{path}: {prim.GetPath()}"
        if ESC_SPEC.schema in apis:  # a standard VTOL's lift rotor
            lift.append(int(read_prim(prim, ESC_SPEC, path)["channel"]))
            _claim(taken, lift[-1], where, "nexus:channel")
        if ADVANCE_RATIO_PROPELLER_SPEC.schema in apis:
            if motor is not None:
                raise BuildError(f"{where}: a second propeller; PX4's fixed-wing mapping here drives one (Motor1)")
            motor = int(read_prim(prim, ADVANCE_RATIO_PROPELLER_SPEC, path)["channel"])
            _claim(taken, motor, where, "nexus:channel")
        if CONTROL_SURFACE_SPEC.schema in apis:
            values = read_prim(prim, CONTROL_SURFACE_SPEC, path)
            role = values["role"]
            if role not in SURFACE_KINDS:
                raise BuildError(f"{where}: nexus:role '{role}' has no PX4 output mapping yet (PX4 flies "
                                 f"{', '.join(SURFACE_KINDS)}); remove the surface or fly it with --controller fixed_wing")
            if any(s.role == role for s in surfaces):
                raise BuildError(f"{where}: a second {role}; PX4's mapping here drives one surface per role "
                                 "(split ailerons are not mapped yet)")
            _claim(taken, int(values["channel"]), where, "nexus:channel")
            surfaces.append(Surface(str(prim.GetPath()), role, int(values["channel"]), float(values["travel"])))
    if motor is None:
        raise BuildError(f"{path}: PX4 flies a plane's throttle on a propeller, and the file has none; add a prim "
                         f"with {ADVANCE_RATIO_PROPELLER_SPEC.schema}")
    order = list(SURFACE_KINDS)
    return PlaneOutputs(tuple(sorted(surfaces, key=lambda s: order.index(s.role))), motor, tuple(sorted(lift)))


def _claim(taken: dict[int, str], channel: int, where: str, attribute: str) -> None:
    if not 0 <= channel < CONTROLS_WIDTH:
        raise BuildError(f"{where}: {attribute} = {channel}; PX4 has output channels 0..{CONTROLS_WIDTH - 1}")
    if channel in taken:
        raise BuildError(f"{where}: {attribute} = {channel} is also {taken[channel]}'s; give each part its own channel")
    taken[channel] = where.rpartition(": ")[2]


__all__ = ["MAV_TYPE_FIXED_WING", "MAV_TYPE_GENERIC", "MAV_TYPE_VTOL_FIXEDROTOR", "MOTOR1", "SERVO1", "SURFACE_KINDS", "PlaneOutputs", "Surface", "plane_outputs"]
