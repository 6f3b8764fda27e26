"""The fixed-wing stack's gains and limits, read from a vehicle file's ``NexusFixedWingGainsAPI`` prim.

A plane's loops are tuned for its own airframe: the thrust a unit of throttle buys, its pitch and roll
control derivatives, its speeds. So the gains live in the vehicle file, on one prim applying
``NexusFixedWingGainsAPI`` (:data:`FIXED_WING_GAINS_SPEC`), each attribute with its unit and bounds and,
where PX4 has one, the PX4 parameter it stands for. A file without that prim flies the defaults, which are
the Aerosonde's (docs/fixed_wing.md, "Flight stack", works them out; "nexus run --vehicle advanced_plane"
works out the small plane's). A value outside its bounds is one line naming the file, the prim and the
attribute, raised while the controller is built, before any stage runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from nexus.core.errors import BuildError
from nexus.core.spec import Param, Spec
from nexus.plant.usd_checks import nexus_apis
from nexus.schemas.reader import read_prim, where


@dataclass(frozen=True)
class FixedWingGains:
    """The stack's gains and limits, as the controller uses them (defaults: the Aerosonde's at 25 m/s)."""

    trim_airspeed: float = 25.0  # [m/s] (FW_AIRSPD_TRIM): the trim the loops' feed-forwards come from
    # TECS (PX4's FW_T_ALT_TC and FW_T_TAS_TC of 5 s as k_h = k_V = 1/5 s).
    height_p: float = 0.2  # [1/s]
    speed_p: float = 0.2  # [1/s]
    climb_max: float = 5.0  # [m/s] (FW_T_CLMB_MAX)
    sink_max: float = 5.0  # [m/s] (FW_T_SINK_MAX)
    acceleration_max: float = 2.0  # [m/s²]
    energy_rate_per_throttle: float = 20.7  # [m/s]: the Aerosonde's dT/dδt 89 N × 25 m/s / (11 kg × g)
    throttle_p: float = 0.05  # [s/m]
    throttle_i: float = 0.05  # [1/m]
    balance_d: float = 0.3  # [-]
    balance_i: float = 0.3  # [1/s]
    pitch_min: float = math.radians(-15.0)  # [rad]
    pitch_max: float = math.radians(20.0)  # [rad]
    # Attitude (Beard and McLain's successive loop closure on the Aerosonde at 25 m/s).
    roll_p: float = 1.1  # [-]
    roll_rate_d: float = 0.02  # [s]
    roll_i: float = 0.2  # [1/s]
    pitch_p: float = 3.46  # [-]
    pitch_rate_d: float = 0.435  # [s]
    pitch_i: float = 1.0  # [1/s]
    yaw_damper: float = 0.2  # [s]
    integral_limit: float = 0.2  # [rad]
    # Guidance.
    l1: float = 60.0  # [m]
    bank_max: float = math.radians(45.0)  # [rad]
    speed_filter_time: float = 0.1  # [s]
    # The airspeed once the pitot has failed (PX4's ASPD_FALLBACK): False flies airspeed-less, True the ground
    # speed less the estimator's wind.
    airspeed_fallback: bool = False
    #: The gains prim, ``<file>: fixed-wing gains prim <path>``, for messages ("" for the defaults).
    where: str = ""


_D = FixedWingGains()

FIXED_WING_GAINS_SPEC = Spec(
    name="FixedWingGains",
    schema="NexusFixedWingGainsAPI",
    noun="fixed-wing gains",
    doc="The fixed-wing flight stack's gains and limits for this plane (TECS, L1 guidance, attitude loops); a "
        "vehicle file without this prim flies the Aerosonde's (docs/fixed_wing.md, \"Flight stack\").",
    params=(
        Param("trim_airspeed", "nexus:trimAirspeed", "float", _D.trim_airspeed, "m/s",
              "Airspeed the stack trims at for its feed-forwards (PX4's FW_AIRSPD_TRIM)", low=0.0, open_low=True),
        Param("height_time_constant", "nexus:heightTimeConstant", "float", 5.0, "s",
              "Time constant of the height loop, k_h = 1/it (PX4's FW_T_ALT_TC)", low=0.0, open_low=True),
        Param("speed_time_constant", "nexus:airspeedTimeConstant", "float", 5.0, "s",
              "Time constant of the airspeed loop, k_V = 1/it (PX4's FW_T_TAS_TC)", low=0.0, open_low=True),
        Param("climb_max", "nexus:climbRateMax", "float", _D.climb_max, "m/s",
              "Largest climb rate the height loop asks (PX4's FW_T_CLMB_MAX)", low=0.0, open_low=True),
        Param("sink_max", "nexus:sinkRateMax", "float", _D.sink_max, "m/s",
              "Largest sink rate the height loop asks (PX4's FW_T_SINK_MAX)", low=0.0, open_low=True),
        Param("acceleration_max", "nexus:accelerationMax", "float", _D.acceleration_max, "m/s^2",
              "Largest airspeed rate the speed loop asks", low=0.0, open_low=True),
        Param("energy_rate_per_throttle", "nexus:energyRatePerThrottle", "float", _D.energy_rate_per_throttle, "m/s",
              "k_T: the total specific energy rate a unit of throttle buys at the trim, dT/d(throttle)·V/(m·g)",
              low=0.0, open_low=True),
        Param("throttle_p", "nexus:throttleDamping", "float", _D.throttle_p, "s/m",
              "Throttle per unit of total energy rate error (PX4's FW_T_THR_DAMPING)", low=0.0),
        Param("throttle_i", "nexus:throttleIntegralGain", "float", _D.throttle_i, "1/m",
              "Throttle integrator's gain on the total energy rate error (PX4's FW_T_I_GAIN_THR)", low=0.0),
        Param("balance_d", "nexus:pitchDamping", "float", _D.balance_d, "-",
              "Balance energy rate error's weight in the pitch goal (PX4's FW_T_PTCH_DAMP)", low=0.0),
        Param("balance_i", "nexus:pitchIntegralGain", "float", _D.balance_i, "1/s",
              "Pitch goal integrator's gain on the balance energy rate error (PX4's FW_T_I_GAIN_PIT)", low=0.0),
        Param("pitch_min", "nexus:pitchMin", "float", _D.pitch_min, "rad",
              "Lowest pitch goal (PX4's FW_P_LIM_MIN, in radians)", low=-1.5707963, high=0.0),
        Param("pitch_max", "nexus:pitchMax", "float", _D.pitch_max, "rad",
              "Highest pitch goal (PX4's FW_P_LIM_MAX, in radians)", low=0.0, high=1.5707963, open_low=True),
        Param("roll_p", "nexus:rollGain", "float", _D.roll_p, "-",
              "k_phi: aileron per radian of bank error", low=0.0, open_low=True),
        Param("roll_rate_d", "nexus:rollRateDamping", "float", _D.roll_rate_d, "s",
              "k_p: aileron per rad/s of roll rate", low=0.0),
        Param("roll_i", "nexus:rollIntegralGain", "float", _D.roll_i, "1/s",
              "k_phi_i: the bank error's integrator gain", low=0.0),
        Param("pitch_p", "nexus:pitchGain", "float", _D.pitch_p, "-",
              "k_theta: elevator per radian of pitch error", low=0.0, open_low=True),
        Param("pitch_rate_d", "nexus:pitchRateDamping", "float", _D.pitch_rate_d, "s",
              "k_q: elevator per rad/s of pitch rate", low=0.0),
        Param("pitch_i", "nexus:pitchAttitudeIntegralGain", "float", _D.pitch_i, "1/s",
              "k_theta_i: the pitch error's integrator gain", low=0.0),
        Param("yaw_damper", "nexus:yawDamper", "float", _D.yaw_damper, "s",
              "k_r: rudder per rad/s of yaw rate beyond the coordinated turn's", low=0.0),
        Param("integral_limit", "nexus:attitudeIntegralLimit", "float", _D.integral_limit, "rad",
              "Bound on each attitude integral, in radians of deflection", low=0.0),
        Param("l1", "nexus:l1Distance", "float", _D.l1, "m",
              "L1 guidance's look-ahead distance (PX4's L1 period FW_L1_PERIOD is pi·sqrt(2)·L1/V at its damping "
              "1/sqrt(2))", low=0.0, open_low=True),
        Param("bank_max", "nexus:rollLimit", "float", _D.bank_max, "rad",
              "Largest bank goal (PX4's FW_R_LIM, in radians)", low=0.0, high=1.3962634, open_low=True),
        Param("speed_filter_time", "nexus:airspeedFilterTime", "float", _D.speed_filter_time, "s",
              "Time constant of the airspeed rate's first-order filter", low=0.0, open_low=True),
        Param("airspeed_fallback", "nexus:airspeedFallback", "bool", _D.airspeed_fallback,
              doc="Once the pitot has failed, fly the ground speed less the estimator's wind (PX4's ASPD_FALLBACK "
                  "1; needs an EKF fusing airspeed, nexus:EKF2_ARSP_THR above 0); 0 flies airspeed-less (no speed "
                  "demand, as PX4 does without airspeed)"),
    ),
)


def gains_from_values(values: dict, where: str = "") -> FixedWingGains:
    """The gains of a prim's checked values (:data:`FIXED_WING_GAINS_SPEC`): the time constants as k_h, k_V."""
    values = dict(values)
    height_tc, speed_tc = values.pop("height_time_constant"), values.pop("speed_time_constant")
    values["airspeed_fallback"] = bool(values["airspeed_fallback"])
    return FixedWingGains(height_p=1.0 / height_tc, speed_p=1.0 / speed_tc, where=where, **values)


def vehicle_gains(stage, path: Path | str) -> FixedWingGains:
    """The gains of the vehicle file ``stage`` (opened from ``path``): its ``NexusFixedWingGainsAPI`` prim's, or
    the defaults (the Aerosonde's) when it has none. Two such prims, or a value outside its bounds, are refused in
    one line naming the file and prim (and the attribute)."""
    prims = [prim for prim in stage.Traverse() if FIXED_WING_GAINS_SPEC.schema in nexus_apis(prim)]
    if not prims:
        return FixedWingGains()
    if len(prims) > 1:
        raise BuildError(f"{path}: {prims[0].GetPath()} and {prims[1].GetPath()} both apply NexusFixedWingGainsAPI; "
                         "keep one")
    return gains_from_values(read_prim(prims[0], FIXED_WING_GAINS_SPEC, path), where(prims[0], FIXED_WING_GAINS_SPEC, path))


__all__ = ["FIXED_WING_GAINS_SPEC", "FixedWingGains", "gains_from_values", "vehicle_gains"]
