"""What a vehicle is made of, from what the user gives and the sizing rules that fill in the rest.

Everything is SI. The inputs (:class:`AirframeInput`) come from ``nexus vehicle new``'s options or from a
TOML file (same names as keys); :func:`size` checks each against its physical range (a bad value is one
line naming the option or key) and returns an :class:`Airframe` whose every number is fixed. The rules,
written out in ``docs/vehicles.md``:

* rotors: each ``rotor_mass`` = 5 % of the vehicle's mass over the rotor count; propeller diameter 90 %
  of the gap between neighbouring rotors; rotor inertia a thin rod of half the rotor's mass across the
  diameter (Izz = m D²/24), in-plane 0.55 Izz (a flat disk has Izz/2; the bell and the blades have depth);
* propeller: kT = C_T ρ D⁴ / (4π²), kQ = C_P ρ D⁵ / (8π³) with C_T 0.1, C_P 0.04, ρ 1.225 kg/m³;
* maximum rotor speed: 80 % of the motor's no-load speed kv·V when both are given, otherwise the speed
  at which the vehicle has a thrust-to-weight ratio of 2 (hover at half thrust);
* inertia, when not given: 60 % of the base's mass in a solid box (``box`` [m], default arm × arm ×
  arm/3) and 40 % (arms, motors, ESCs) as point masses at the rotor positions;
* motor envelope (Newton's ClampingDCMotor): no-load speed 1.25 × maximum speed, a torque limit of
  the drag at full speed plus what spins the rotor up along the ESC lag, stall torque 7.5 × the drag
  at full speed (at least 1.5 × the torque limit); speed servo gain = rotor Izz / 10 ms.
"""

from __future__ import annotations

import math
import typing
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

import msgspec

from nexus.airframe.frames import FRAMES, RotorPlace
from nexus.core.errors import BuildError
from nexus.vocab import data_file
from nexus.vocab.data_file import Problem

GRAVITY = 9.80665  # [m/s²]
AIR_DENSITY = 1.225  # [kg/m³]
THRUST_COEFFICIENT = 0.1  # C_T [-]
POWER_COEFFICIENT = 0.04  # C_P [-]
ROTOR_MASS_SHARE = 0.05  # of the whole vehicle, all rotors together
HOVER_THRUST_TO_WEIGHT = 2.0  # when nothing fixes the maximum rotor speed
MIN_THRUST_TO_WEIGHT = 1.3
LOADED_SPEED_SHARE = 0.8  # maximum speed / no-load speed
SERVO_TIME_CONSTANT = 0.01  # [s]
HUB_SHARE = 0.6  # of the base's mass, in the hub box; the rest at the rotor positions
SENSORS = ("imu", "mag", "baro", "gps")


@dataclass
class AirframeInput:
    """What the user gives (None: the sizing rule decides). Names are the TOML keys and, with '-' for '_',
    the command's options."""

    frame: str = "quad-x"
    arm: float | None = None  # centre to rotor axis [m]
    mass: float | None = None  # whole vehicle [kg]
    base_mass: float | None = None  # the airframe without its rotors [kg] (instead of mass)
    inertia: list[float] | None = None  # whole vehicle about its centre of mass, (xx, yy, zz) [kg m²]
    base_inertia: list[float] | None = None  # the airframe without its rotors, about its own centre of mass [kg m²]
    box: list[float] | None = None  # hub box (length, width, height) [m], for the inertia estimate and the collider
    rotor_mass: float | None = None  # each rotor: propeller and motor bell [kg]
    rotor_inertia: list[float] | None = None  # each rotor about its centre (xx, yy, zz) [kg m²]
    rotor_height: float | None = None  # rotor plane above the base's origin [m]; default arm / 4
    coaxial_gap: float | None = None  # x8: half the distance between upper and lower rotor [m]; default arm / 5
    thrust_coefficient: float | None = None  # kT [N/(rad/s)²]
    torque_coefficient: float | None = None  # kQ [N m/(rad/s)²]
    moment_constant: float | None = None  # kQ / kT [m] (instead of torque_coefficient)
    diameter: float | None = None  # propeller [m]
    kv: float | None = None  # [rpm/V]
    voltage: float | None = None  # [V]
    max_speed: float | None = None  # rotor speed at command 1 [rad/s]
    min_speed: float = 0.0  # [rad/s]
    thrust_model_factor: float = 0.0  # PX4's THR_MDL_FAC [-]
    tau_up: float = 0.0125  # ESC and motor time constant, speeding up [s]
    tau_down: float = 0.025  # and slowing down [s]
    gear_height: float | None = None  # base origin above the ground at rest [m]; default arm / 2
    sensors: list[str] = field(default_factory=lambda: list(SENSORS))
    px4: dict = field(default_factory=dict)  # PX4 parameters the airframe file pins (``nexus px4 params``)
    doc: str = ""  # one line about the vehicle and its sources

    @classmethod
    def from_toml(cls, path: str | Path) -> AirframeInput:
        """The input a TOML file holds: its keys and their types checked against :data:`AirframeSource` (an
        unknown key or a value of the wrong type is an error naming the key); :func:`size` checks the ranges."""
        path = Path(path)

        def unreadable(error: OSError) -> BuildError:
            if isinstance(error, FileNotFoundError):
                return BuildError(f"{path}: no such file; give the path of a TOML vehicle description")
            return BuildError(f"{path}: cannot be read ({error.strerror}); give the path of a TOML vehicle "
                              "description")

        data = data_file.read_toml(path, unreadable=unreadable,
                                   invalid=lambda error: BuildError(f"{path}: not valid TOML ({error})"))
        data_file.check(data, AirframeSource, lambda problem: BuildError(f"{path}: {_sentence(problem)}"))
        return cls(**data)


def _source_field(f) -> tuple:
    """An :class:`AirframeInput` field as a key of the TOML source: its name, type and default."""
    hint = typing.get_type_hints(AirframeInput)[f.name]
    if f.default_factory is not MISSING:
        return f.name, hint, msgspec.field(default_factory=f.default_factory)
    return f.name, hint, f.default


#: The TOML source of ``nexus vehicle new --from``: :class:`AirframeInput`'s fields as its keys, with their
#: types (the options and the file are one declaration); a key it does not name is refused.
AirframeSource = msgspec.defstruct("AirframeSource", [_source_field(f) for f in fields(AirframeInput)],
                                   forbid_unknown_fields=True)

#: A value's type, as the fix of a key holding another.
_EXPECTED = {"float": "a number", "int": "a whole number", "str": "a string", "array": "a list",
             "object": "a table", "bool": "true or false"}


def _sentence(problem: Problem) -> str:
    key = problem.parts[0]
    if problem.kind == "unknown":
        return f"unknown key '{key}'; the keys are {', '.join(sorted(problem.allowed))}"
    shown = problem.value if len(problem.parts) == 1 else data_file.MISSING
    what = f"is {shown!r}" if shown is not data_file.MISSING else f"holds {problem.value!r}"
    expected = problem.expected.split(" | ")[0]
    return f"key '{key}' {what}; give {_EXPECTED.get(expected, expected)}"


@dataclass
class Rotor:
    """One rotor as written: its place in FLU [m] relative to the base origin, and its spin."""

    place: RotorPlace
    position: tuple[float, float, float]


@dataclass
class Airframe:
    """Every number of the vehicle file, fixed."""

    name: str
    frame: str
    arm: float
    base_mass: float
    base_inertia: tuple[float, float, float]
    box: tuple[float, float, float]
    rotors: list[Rotor]
    rotor_mass: float
    rotor_inertia: tuple[float, float, float]
    thrust_coefficient: float
    torque_coefficient: float
    diameter: float
    max_speed: float
    min_speed: float
    thrust_model_factor: float
    tau_up: float
    tau_down: float
    kv: float
    voltage: float
    resistance: float
    current_limit: float
    speed_gain: float
    gear_height: float
    sensors: tuple[str, ...]
    px4: dict
    doc: str

    @property
    def mass(self) -> float:
        """The whole vehicle [kg]."""
        return self.base_mass + len(self.rotors) * self.rotor_mass

    @property
    def centre_of_mass_height(self) -> float:
        """Whole vehicle's centre of mass above the base origin [m]."""
        return sum(self.rotor_mass * r.position[2] for r in self.rotors) / self.mass

    def inertia(self) -> tuple[float, float, float]:
        """The whole vehicle's principal moments about its centre of mass [kg m²] (body axes)."""
        return _whole_inertia(self.base_mass, self.base_inertia, self.rotor_mass, self.rotor_inertia,
                              [r.position for r in self.rotors])

    @property
    def hover_speed(self) -> float:
        """Rotor speed at which the rotors carry the weight [rad/s]: √(m g / (n kT))."""
        return math.sqrt(self.mass * GRAVITY / (len(self.rotors) * self.thrust_coefficient))

    @property
    def thrust_to_weight(self) -> float:
        return len(self.rotors) * self.thrust_coefficient * self.max_speed**2 / (self.mass * GRAVITY)

    @property
    def hover_command(self) -> float:
        """The ESC command that holds hover, through the ESC's thrust model t = (1 - f) u + f u²."""
        t = (self.hover_speed / self.max_speed) ** 2
        f = self.thrust_model_factor
        if f == 0.0:
            return t
        return (-(1.0 - f) + math.sqrt((1.0 - f) ** 2 + 4.0 * f * t)) / (2.0 * f)


def _whole_inertia(base_mass, base_inertia, rotor_mass, rotor_inertia, positions):
    mass = base_mass + rotor_mass * len(positions)
    zc = sum(rotor_mass * p[2] for p in positions) / mass
    xx, yy, zz = base_inertia[0] + base_mass * zc**2, base_inertia[1] + base_mass * zc**2, base_inertia[2]
    for x, y, z in positions:
        xx += rotor_inertia[0] + rotor_mass * (y**2 + (z - zc) ** 2)
        yy += rotor_inertia[1] + rotor_mass * (x**2 + (z - zc) ** 2)
        zz += rotor_inertia[2] + rotor_mass * (x**2 + y**2)
    return xx, yy, zz


class _Checker:
    """Range checks whose errors name the option (``--arm``) or the TOML key (``arm``)."""

    def __init__(self, source: str | None):
        self.source = source

    def name(self, key: str) -> str:
        if self.source:
            return f"{self.source}: key '{key}'"
        return "--" + key.replace("_", "-")

    def fail(self, key: str, value, must: str):
        raise BuildError(f"{self.name(key)} is {value!r}; {must}")

    def positive(self, key: str, value, required: bool = False):
        if value is None:
            if required:
                raise BuildError(f"{self.name(key)} is missing; give a positive value")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            self.fail(key, value, "it must be a positive number")
        return float(value)

    def triple(self, key: str, value):
        if value is None:
            return None
        if not isinstance(value, (list, tuple)) or len(value) != 3:
            self.fail(key, value, "give three positive numbers (x, y, z)")
        return tuple(self.positive(key, v) for v in value)


def size(name: str, given: AirframeInput, source: str | None = None) -> Airframe:
    """The whole vehicle from ``given`` and the sizing rules; ``source`` is the TOML file (None: options)."""
    check = _Checker(source)
    if given.frame not in FRAMES:
        check.fail("frame", given.frame, f"choose one of {', '.join(FRAMES)}")
    places = FRAMES[given.frame]
    n = len(places)
    arm = check.positive("arm", given.arm, required=True)
    if given.mass is not None and given.base_mass is not None:
        raise BuildError(f"{check.name('mass')} and {check.name('base_mass')} are both given; give one")
    if given.inertia is not None and given.base_inertia is not None:
        raise BuildError(f"{check.name('inertia')} and {check.name('base_inertia')} are both given; give one")
    mass = check.positive("mass", given.mass)
    base_mass = check.positive("base_mass", given.base_mass)
    if mass is None and base_mass is None:
        raise BuildError(f"{check.name('mass')} is missing; give the vehicle's mass [kg]")
    rotor_mass = check.positive("rotor_mass", given.rotor_mass)
    if rotor_mass is None:
        rotor_mass = ROTOR_MASS_SHARE * (mass if mass is not None else base_mass / (1 - ROTOR_MASS_SHARE)) / n
    if base_mass is None:
        base_mass = mass - n * rotor_mass
        if base_mass <= 0:
            check.fail("rotor_mass", rotor_mass, f"{n} rotors must weigh less than the vehicle's {mass:g} kg")

    rotor_height = given.rotor_height if given.rotor_height is not None else arm / 4
    if not isinstance(rotor_height, (int, float)) or not math.isfinite(rotor_height):
        check.fail("rotor_height", rotor_height, "give a height [m]")
    gap = check.positive("coaxial_gap", given.coaxial_gap) or arm / 5
    rotors = []
    for place in places:
        x, y = place.position(arm)
        rotors.append(Rotor(place, (x, y, rotor_height + place.level * gap)))

    # Propeller: diameter 90 % of the gap between neighbouring rotor axes (coaxial pairs share a disk).
    azimuths = sorted({p.azimuth % 360 for p in places})
    spacing = 2 * arm * math.sin(math.pi / len(azimuths))
    diameter = check.positive("diameter", given.diameter) or 0.9 * spacing
    kt = check.positive("thrust_coefficient", given.thrust_coefficient)
    if kt is None:
        kt = THRUST_COEFFICIENT * AIR_DENSITY * diameter**4 / (4 * math.pi**2)
    if given.torque_coefficient is not None and given.moment_constant is not None:
        raise BuildError(f"{check.name('torque_coefficient')} and {check.name('moment_constant')} are both given; "
                         "give one")
    kq = check.positive("torque_coefficient", given.torque_coefficient)
    if kq is None:
        km = check.positive("moment_constant", given.moment_constant)
        kq = km * kt if km is not None else POWER_COEFFICIENT * AIR_DENSITY * diameter**5 / (8 * math.pi**3)

    kv = check.positive("kv", given.kv)
    voltage = check.positive("voltage", given.voltage)
    max_speed = check.positive("max_speed", given.max_speed)
    total = base_mass + n * rotor_mass
    if max_speed is None:
        if kv is not None and voltage is not None:
            max_speed = LOADED_SPEED_SHARE * kv * voltage * 2 * math.pi / 60
        else:
            max_speed = math.sqrt(HOVER_THRUST_TO_WEIGHT * total * GRAVITY / (n * kt))
    ratio = n * kt * max_speed**2 / (total * GRAVITY)
    if ratio < MIN_THRUST_TO_WEIGHT:
        what = ("max_speed" if given.max_speed is not None else "kv" if given.kv is not None
                else "thrust_coefficient" if given.thrust_coefficient is not None else "mass")
        raise BuildError(
            f"{check.name(what)}: thrust-to-weight ratio {ratio:.2f} (n kT ω_max² / m g = {n} × {kt:.4g} × "
            f"{max_speed:.4g}² / ({total:.4g} × 9.80665)) is under {MIN_THRUST_TO_WEIGHT}; the vehicle could not "
            "climb and steer at once: raise the rotor speed or thrust coefficient, or lower the mass")
    min_speed = given.min_speed
    if not isinstance(min_speed, (int, float)) or not 0 <= min_speed < max_speed:
        check.fail("min_speed", min_speed, f"give a speed in [0, {max_speed:.4g}) rad/s")
    factor = given.thrust_model_factor
    if not isinstance(factor, (int, float)) or not 0 <= factor <= 1:
        check.fail("thrust_model_factor", factor, "give PX4's THR_MDL_FAC, in [0, 1]")
    tau_up = check.positive("tau_up", given.tau_up, required=True)
    tau_down = check.positive("tau_down", given.tau_down, required=True)

    rotor_inertia = check.triple("rotor_inertia", given.rotor_inertia)
    if rotor_inertia is None:
        izz = rotor_mass * diameter**2 / 24
        rotor_inertia = (0.55 * izz, 0.55 * izz, izz)  # in-plane a little over Izz / 2: blades and bell have depth

    box = check.triple("box", given.box) or (arm, arm, arm / 3)
    base_inertia = check.triple("base_inertia", given.base_inertia)
    whole = check.triple("inertia", given.inertia)
    if base_inertia is None and whole is None:
        base_inertia = _box_estimate(base_mass, box, [r.position for r in rotors])
    elif base_inertia is None:
        zc = sum(rotor_mass * r.position[2] for r in rotors) / total
        carried = [0.0, 0.0, 0.0]  # the rotors' share of the whole inertia, about the whole centre of mass
        for x, y, z in (r.position for r in rotors):
            carried[0] += rotor_inertia[0] + rotor_mass * (y**2 + (z - zc) ** 2)
            carried[1] += rotor_inertia[1] + rotor_mass * (x**2 + (z - zc) ** 2)
            carried[2] += rotor_inertia[2] + rotor_mass * (x**2 + y**2)
        shift = base_mass * zc**2
        base_inertia = (whole[0] - carried[0] - shift, whole[1] - carried[1] - shift, whole[2] - carried[2])
        moments = sorted(base_inertia)
        if moments[0] <= 0 or moments[0] + moments[1] < moments[2]:
            check.fail("inertia", list(whole), "it is less than the rotors alone carry, or leaves the airframe an "
                       f"unphysical inertia {tuple(round(v, 9) for v in base_inertia)}; give the measured whole-vehicle "
                       "inertia about its centre of mass")

    # Motor envelope and speed servo.
    drag = kq * max_speed**2
    if kv is None or voltage is None:
        voltage = voltage or 14.8
        kv = 1.25 * max_speed * 60 / (2 * math.pi * voltage)
    torque_constant = 60 / (2 * math.pi * kv)
    if kv * voltage * 2 * math.pi / 60 <= max_speed:
        check.fail("kv", kv, f"its no-load speed kv·V = {kv * voltage * 2 * math.pi / 60:.4g} rad/s must exceed "
                   f"the maximum rotor speed {max_speed:.4g} rad/s")
    torque_limit = drag + rotor_inertia[2] * max_speed / tau_up
    stall = max(7.5 * drag, 1.5 * torque_limit)
    gear_height = given.gear_height if given.gear_height is not None else arm / 2
    gear_height = check.positive("gear_height", gear_height)
    if not isinstance(given.sensors, (list, tuple)) or any(s not in SENSORS for s in given.sensors):
        check.fail("sensors", given.sensors, f"give a list of {', '.join(SENSORS)}")
    if not isinstance(given.px4, dict):
        check.fail("px4", given.px4, "give a table of PX4 parameters, NAME = number")
    for key, value in given.px4.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not key.replace("_", "").isalnum():
            check.fail("px4", {key: value}, "each entry must be a PX4 parameter name with a number")
    return Airframe(
        name=name, frame=given.frame, arm=arm, base_mass=base_mass, base_inertia=tuple(base_inertia), box=tuple(box),
        rotors=rotors, rotor_mass=rotor_mass, rotor_inertia=tuple(rotor_inertia), thrust_coefficient=kt,
        torque_coefficient=kq, diameter=diameter, max_speed=max_speed, min_speed=float(min_speed),
        thrust_model_factor=float(factor), tau_up=tau_up, tau_down=tau_down, kv=kv, voltage=voltage,
        resistance=torque_constant * voltage / stall, current_limit=torque_limit / torque_constant,
        speed_gain=rotor_inertia[2] / SERVO_TIME_CONSTANT, gear_height=gear_height, sensors=tuple(given.sensors),
        px4=dict(given.px4), doc=given.doc)


def _box_estimate(base_mass, box, positions):
    """60 % of the base's mass as a solid box, 40 % as point masses at the rotor positions (arms, motors)."""
    hub = HUB_SHARE * base_mass
    point = (1 - HUB_SHARE) * base_mass / len(positions)
    length, width, height = box
    xx = hub * (width**2 + height**2) / 12
    yy = hub * (length**2 + height**2) / 12
    zz = hub * (length**2 + width**2) / 12
    for x, y, _ in positions:  # the motors sit under the rotors, level with the base's centre of mass
        xx += point * y**2
        yy += point * x**2
        zz += point * (x**2 + y**2)
    return xx, yy, zz
