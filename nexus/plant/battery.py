"""The battery: an equivalent-circuit pack that the rotors draw down, and whose voltage caps their speed.

The pack is ``cells`` cells in series, each with an open-circuit voltage
``OCV(s)`` over the state of charge ``s`` (points, linear between them),
behind a series resistance ``R0`` and one RC pair (``R1``, ``C1``):

    V = cells·OCV(s) - V1 - R0·I          terminal voltage [V]
    dV1/dt = I / C1 - V1 / (R1·C1)        the RC pair's voltage [V]
    ds/dt = -I / (3600·Q)                 Q the capacity [Ah]

The load is the rotors' electrical power, their shaft power over an
efficiency: ``P = Σ kQ·|ω|³ / η`` (drag torque ``kQ·ω²`` times speed ``ω``,
from the rotor speeds the step starts from, as the propellers use). The
current is the one at which the pack delivers ``P``:
``V·I = P`` with ``V = E - V1 - R0·I`` is ``R0·I² - (E - V1)·I + P = 0``,
whose smaller root is taken; above the most the pack can deliver
(``(E - V1)² / 4R0``) the current stops at that maximum. The RC pair advances
exactly over the tick (``V1 ← V1·a + R1·I·(1 - a)``, ``a = exp(-dt / R1C1)``).

The sagging voltage caps each rotor's speed: a motor spins at most
``maxSpeed·V / voltage`` (its ESC's ``nexus:maxSpeed`` at its rated
``nexus:motor:voltage``), so the stage lowers the ESC's speed target to that
cap when it is above it. A full pack above the motor's rated voltage caps
nothing.

When the charge reaches 0 the world ends with done flag 3 (exit reason
``battery-empty``). Voltage, current and state of charge are recorded as
``battery.voltage``, ``battery.current`` and ``battery.state_of_charge``.

A force stage (after the ESCs wrote their targets, before the step), on a
prim applying ``NexusBatteryAPI`` under the vehicle; a vehicle without one
keeps its bits.

A variation file draws each world's ``battery_capacity`` [Ah],
``battery_initial_charge`` [-] and ``battery_resistance`` [ohm]
(:data:`BATTERY_DRAWS`), which replace the prim's values in that world; a
vehicle without a battery refuses them.
"""

from __future__ import annotations

import math
from itertools import pairwise

import numpy as np
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Param, Spec, StateVar, non_negative, positive
from nexus.plant.plant import Plant
from nexus.schemas.reader import where
from nexus.vocab import drawn

#: The done flag a world gets when its pack is empty (1 is a mission's "done", 2 a failed world).
BATTERY_EMPTY = wp.constant(3)
#: The exit reason of a world (and of a run whose every world) ended by an empty pack.
BATTERY_EMPTY_REASON = "battery-empty"

#: A 1S lithium-polymer cell at rest: (state of charge, open-circuit voltage [V]).
LIPO_CELL = ((0.0, 3.3), (0.05, 3.5), (0.1, 3.6), (0.2, 3.7), (0.4, 3.8), (0.6, 3.9), (0.8, 4.0), (0.9, 4.1),
             (1.0, 4.2))


@wp.struct
class BatterySample:
    voltage: wp.float32  # terminal voltage [V]
    current: wp.float32  # drawn [A]
    state_of_charge: wp.float32  # charge left over capacity [-], after the tick


def _initial_pack(component: Battery, ctx) -> list[float]:
    """The world's drawn initial charge (else the prim's) and an RC pair at rest."""
    values = getattr(ctx, "world_values", None) or {}
    return [float(values.get("battery_initial_charge", component.initial_charge)), 0.0]


#: Each world's drawn pack: replaces the prim's value in that world (docs/battery.md).
BATTERY_DRAWS = (
    drawn.Drawn("battery_capacity", "Ah", "the battery's charge when full (replaces nexus:battery:capacity)", "> 0",
                accepts=drawn.positive),
    drawn.Drawn("battery_initial_charge", "-", "the battery's state of charge at the start (replaces "
                "nexus:battery:initialCharge)", "in (0, 1]", accepts=drawn.within(0.0, 1.0, open_low=True)),
    drawn.Drawn("battery_resistance", "ohm", "the battery's series resistance R0 (replaces "
                "nexus:battery:resistance)", ">= 0", accepts=drawn.non_negative),
)
BATTERY_PARAMETERS = tuple(d.name for d in BATTERY_DRAWS)


BATTERY_SPEC = Spec(
    name="Battery",
    schema="NexusBatteryAPI",
    noun="battery",
    doc="An equivalent-circuit battery pack: cells in series, each with an open-circuit voltage over state of charge, "
        "behind a series resistance and one RC pair. The rotors draw their shaft power (drag torque times speed) over "
        "an efficiency; the terminal voltage caps each rotor's speed at its ESC's maxSpeed times voltage over its "
        "motor's rated voltage; an empty pack ends the world's run (battery-empty).",
    params=(
        Param("cells", "nexus:battery:cells", "int", 12, "-", "Cells in series", low=1),
        positive("capacity", "nexus:battery:capacity", 16.0, "Ah", "Charge of the full pack"),
        non_negative("resistance", "nexus:battery:resistance", 0.02, "ohm",
                     "Series (ohmic) resistance of the whole pack, R0"),
        non_negative("rc_resistance", "nexus:battery:rcResistance", 0.01, "ohm",
                     "Resistance of the pack's RC pair, R1 (0: no RC pair)"),
        positive("rc_capacitance", "nexus:battery:rcCapacitance", 2000.0, "F", "Capacitance of the pack's RC pair, C1"),
        Param("open_circuit_voltage", "nexus:battery:openCircuitVoltage", "float2[]", LIPO_CELL, "(-, V)",
              "One cell's open-circuit voltage over state of charge: points (state of charge, voltage [V]), state of "
              "charge from 0 to 1 and voltage both rising; linear between points", low=0.0),
        Param("efficiency", "nexus:battery:efficiency", "float", 0.8, "-",
              "Shaft power over electrical power of the motors and ESCs", low=0.0, high=1.0, open_low=True),
        Param("initial_charge", "nexus:battery:initialCharge", "float", 1.0, "-",
              "State of charge at the start of the run", low=0.0, high=1.0, open_low=True),
    ),
    outputs=(Output("battery", BatterySample, recorded=True,
                    doc="Terminal voltage [V], current [A] and state of charge [-] of the pack"),),
    state=(StateVar("pack", wp.float64, (2,), _initial_pack, "state of charge [-] and the RC pair's voltage [V]"),),
    stage="battery",
    kind="force",
)


@wp.func
def open_circuit_voltage(charge: wp.float32, soc: wp.array(dtype=wp.float32),
                         volts: wp.array(dtype=wp.float32)) -> wp.float32:
    """One cell's open-circuit voltage [V] at state of charge ``charge``, linear between the curve's points."""
    v = volts[0]
    for k in range(soc.shape[0] - 1):
        if charge >= soc[k]:
            t = wp.clamp((charge - soc[k]) / (soc[k + 1] - soc[k]), 0.0, 1.0)
            v = volts[k] + t * (volts[k + 1] - volts[k])
    return v


@wp.func
def pack_current(head: wp.float32, resistance: wp.float32, power: wp.float32) -> wp.float32:
    """The current [A] at which a source ``head`` [V] behind ``resistance`` [ohm] delivers ``power`` [W].

    The smaller root of ``R·I² - head·I + P = 0``, written ``2P / (head + √(head² - 4RP))`` so that R = 0 is
    ``P / head``; past the most the source can deliver the root is held at ``head / 2R``."""
    return 2.0 * power / (head + wp.sqrt(wp.max(head * head - 4.0 * resistance * power, 0.0)))


@wp.kernel
def draw_battery(
    # Model:
    cells: wp.float32,
    capacity: wp.array(dtype=wp.float64),  # per world [C]
    resistance: wp.array(dtype=wp.float32),  # per world [ohm]
    rc_resistance: wp.float32,
    rc_decay: wp.float64,
    efficiency: wp.float32,
    dt: wp.float64,
    ocv_soc: wp.array(dtype=wp.float32),
    ocv_volts: wp.array(dtype=wp.float32),
    rotor: wp.array(dtype=wp.int32),
    dof: wp.array(dtype=wp.int32),
    spin: wp.array(dtype=wp.float32),
    torque_coefficient: wp.array(dtype=wp.float32),
    speed_per_volt: wp.array(dtype=wp.float32),
    rotors: wp.int32,
    dofs_per_world: wp.int32,
    # Data in:
    running: wp.array(dtype=wp.int32),
    joint_qd: wp.array(dtype=wp.float32),
    pack_in: wp.array2d(dtype=wp.float64),
    # Data out:
    pack_out: wp.array2d(dtype=wp.float64),
    sample: wp.array(dtype=BatterySample),
    done: wp.array(dtype=wp.int32),
    esc_speed: wp.array(dtype=wp.float32),
    target_qd: wp.array(dtype=wp.float32),
    feedforward: wp.array(dtype=wp.float32),
):
    world = wp.tid()
    charge = pack_in[world, 0]
    polarization = pack_in[world, 1]
    pack_out[world, 0] = charge
    pack_out[world, 1] = polarization
    if running[world] == 0:
        return
    shaft = wp.float32(0.0)
    for i in range(rotors):
        omega = wp.abs(joint_qd[dof[i] + world * dofs_per_world])
        shaft = shaft + torque_coefficient[i] * omega * omega * omega
    power = shaft / efficiency
    head = wp.max(cells * open_circuit_voltage(wp.float32(charge), ocv_soc, ocv_volts) - wp.float32(polarization),
                  wp.float32(1.0e-3))
    current = pack_current(head, resistance[world], power)
    voltage = head - resistance[world] * current
    charge = charge - wp.float64(current) * dt / capacity[world]
    polarization = polarization * rc_decay + wp.float64(rc_resistance * current) * (wp.float64(1.0) - rc_decay)
    if charge <= wp.float64(0.0):
        charge = wp.float64(0.0)
        if done[world] == 0:
            done[world] = BATTERY_EMPTY
    pack_out[world, 0] = charge
    pack_out[world, 1] = polarization
    out = BatterySample()
    out.voltage = voltage
    out.current = current
    out.state_of_charge = wp.float32(charge)
    sample[world] = out
    # The sagging voltage caps each motor's speed: its ESC's target comes down to the cap.
    for i in range(rotors):
        cap = speed_per_volt[i] * voltage
        r = rotor[i] + world * rotors
        if esc_speed[r] > cap:
            d = dof[i] + world * dofs_per_world
            esc_speed[r] = cap
            target_qd[d] = spin[i] * cap
            feedforward[d] = spin[i] * torque_coefficient[i] * cap * cap


def check_curve(points, where: str) -> None:
    """Refuse an open-circuit voltage curve that does not rise from state of charge 0 to 1 (one line, naming it)."""
    attr = "nexus:battery:openCircuitVoltage"
    fix = ("give points (state of charge, cell voltage [V]) from (0, ...) to (1, ...), both rising, e.g. "
           "[(0, 3.3), (0.5, 3.8), (1, 4.2)]")
    if len(points) < 2:
        raise BuildError(f"{where}: {attr} has {len(points)} point(s); {fix}")
    if points[0][0] != 0.0 or points[-1][0] != 1.0:
        raise BuildError(f"{where}: {attr} runs from state of charge {points[0][0]:g} to {points[-1][0]:g}, "
                         f"not 0 to 1; {fix}")
    for (s0, v0), (s1, v1) in pairwise(points):
        if not (s1 > s0 and v1 > v0):
            raise BuildError(f"{where}: {attr} is not increasing in state of charge: ({s1:g}, {v1:g} V) follows "
                             f"({s0:g}, {v0:g} V); {fix}")


@drawn.draws(*BATTERY_DRAWS)
class Battery(Component):
    """One pack feeding every rotor of the plant: one force stage, one launch over the worlds."""

    spec = BATTERY_SPEC

    @classmethod
    def from_draws(cls, ring) -> None:
        """Nothing joins the ring (the vehicle's pack reads its worlds' draws); a vehicle without one refuses them."""
        if not any(isinstance(c, Battery) for c in ring.components):
            names = sorted({n for values in ring.variation for n in values if n in BATTERY_PARAMETERS})
            raise BuildError(f"the variation draws {', '.join(names)}, but the vehicle has no battery; apply "
                             "NexusBatteryAPI to a prim under the vehicle (docs/battery.md) or drop them")
        return None

    def __init__(self, name: str, plant: Plant, **params):
        super().__init__(name)
        self.plant = plant
        values = {p.key: p.default for p in self.spec.params} | params
        check_curve(values["open_circuit_voltage"], f"battery {name}")
        self.values = values
        self.initial_charge = float(values["initial_charge"])

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Battery:
        check_curve(values["open_circuit_voltage"], where(prim, cls.spec, ctx.path))
        return cls(str(prim.GetPath()), ctx.plant, **values)

    def stages(self) -> list[Stage]:
        reads = (Read("running", wp.int32, (1,), default=1),)
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=reads, writes=self.writes(), finishes=True)]

    def prepare(self, ctx) -> None:
        v, plant = self.values, self.plant
        rotors = plant.rotors

        def column(values, dtype=wp.float32):
            return wp.array(values, dtype=dtype, device=ctx.device)

        tau = v["rc_resistance"] * v["rc_capacitance"]
        decay = math.exp(-ctx.dt / tau) if tau > 0.0 else 0.0
        curve = np.asarray(v["open_circuit_voltage"], dtype=np.float32)
        # Each world's drawn capacity and resistance (``--vary``), else the prim's.
        worlds = [ctx.values_of(w) for w in range(ctx.worlds)] if hasattr(ctx, "values_of") else [{}] * plant.worlds
        capacity = [w.get("battery_capacity", v["capacity"]) * 3600.0 for w in worlds]
        resistance = [w.get("battery_resistance", v["resistance"]) for w in worlds]
        self._args = [
            float(v["cells"]), column(capacity, wp.float64), column(resistance), v["rc_resistance"], decay,
            v["efficiency"],
            float(ctx.dt), column(curve[:, 0]), column(curve[:, 1]),
            column([r.index for r in rotors], wp.int32), column([r.dof for r in rotors], wp.int32),
            column([float(r.spin) for r in rotors]), column([r.torque_coefficient for r in rotors]),
            column([r.esc["max_speed"] / r.esc["voltage"] for r in rotors]), len(rotors), plant.dofs_per_world,
        ]

    def run(self, io) -> None:
        plant = self.plant
        control = plant.control
        wp.launch(draw_battery, dim=plant.worlds,
                  inputs=[*self._args, io["running"], plant.state.joint_qd, io.state_in["pack"]],
                  outputs=[io.state_out["pack"], io["battery"], io.done, plant.esc_speed_out, control.joint_target_qd,
                           control.joint_act],
                  device=io.device)
