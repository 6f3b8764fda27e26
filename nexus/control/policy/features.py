"""The observation and action layouts a policy model declares, and the features they name.

A model states, in its ONNX metadata, what its input and output mean:
``nexus:observation`` lists features as ``name:width`` separated by commas,
in input order; ``nexus:action`` lists the signals it writes the same way.
The features are computed from the signals the policy stage reads (the
estimate and the setpoint), in the *heading frame*: NED turned by the
vehicle's heading, so a policy learnt facing north flies facing east too.

The build checks each name against :data:`FEATURES` (and :data:`ACTIONS`),
each width against the feature's, and the sums against the model's input and
output shapes; a mismatch names both sides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Feature name -> (width, signals it reads, what it is).
FEATURES = {
    "position_error_heading": (3, ("estimate", "setpoint"), "setpoint position − estimate position [m], heading frame"),
    "velocity_heading": (3, ("estimate",), "velocity [m/s], heading frame"),
    "tilt_heading": (2, ("estimate",), "x and y of the body's down axis in the heading frame [-] (sin of the tilt)"),
    "rates": (3, ("estimate",), "body rates [rad/s], FRD"),
    "yaw_error": (1, ("estimate", "setpoint"), "setpoint heading − heading, wrapped to (−π, π] [rad]"),
    "setpoint_velocity_heading": (3, ("setpoint",), "the setpoint's change since the last tick per second [m/s], heading frame"),
    "setpoint_acceleration_heading": (3, ("setpoint",), "the change of that velocity per second [m/s²], heading frame"),
    "neighbour_position_heading": (3, ("estimate",), "another vehicle of the world: its position − this vehicle's "
                                   "[m], heading frame (one per other vehicle, in vehicle order)"),
    "neighbour_velocity_heading": (3, ("estimate",), "that vehicle's velocity − this vehicle's [m/s], heading frame"),
}
#: What each neighbour adds, in order (:mod:`nexus.gym.swarm_tasks` writes the same): a fleet policy's layout ends
#: with this pair once for each other vehicle of the world.
NEIGHBOUR_BLOCK = (("neighbour_position_heading", 3), ("neighbour_velocity_heading", 3))
#: Action name -> (width limit, signal written). ``controls``: ESC commands in [0, 1], one per slot;
#: ``thrust_torque``: a collective thrust fraction in [0, 1] and roll, pitch, yaw torques in [-1, 1] (the PID's
#: units), which the vehicle's control allocation mixes into ESC commands (any rotor layout).
#: ``ctbr``: see :class:`CtbrScaling` (the one meaning ``nexus run --controller policy`` and
#: ``--px4-offboard-policy`` both fly).
#: ``velocity``: a velocity in the heading frame and a yaw rate, flown by the vehicle's PID cascade
#: (:mod:`nexus.control.velocity_action`).
ACTIONS = {"controls": (16, "controls"), "thrust_torque": (4, "controls"), "ctbr": (4, "controls"),
           "velocity": (4, "controls")}
#: Actions whose width is exactly their limit.
EXACT_ACTIONS = ("thrust_torque", "ctbr", "velocity")
#: The CTBR action layout (what ``nexus train`` exports) and the actions a PX4 offboard policy may declare.
CTBR_LAYOUT = "ctbr:4"
CTBR_ACTIONS = {"ctbr": ACTIONS["ctbr"]}
#: The metadata that scales a CTBR action: the hover thrust fraction [-] and the roll, pitch, yaw rates [rad/s]
#: at action ±1, written by ``nexus train``'s exporter, so that no consumer assumes them.
CTBR_HOVER_THRUST_KEY, CTBR_MAX_RATES_KEY = "nexus:ctbr_hover_thrust", "nexus:ctbr_max_rates"


@dataclass(frozen=True)
class CtbrScaling:
    """What a ``ctbr:4`` action means: four values in [-1, 1] (clipped), a₀ the collective about hover, a₁..a₃ the
    body rates.

    Collective thrust fraction = clip(hover_thrust · (1 + a₀), 0, 1); roll, pitch, yaw rate [rad/s] =
    aᵢ · max_rates, about the body's FRD axes (the axes of the estimate's ``rates``, which the rate loop compares
    them with in training), so PX4 (FRD too) takes them without a sign change.
    """

    hover_thrust: float
    max_rates: tuple[float, float, float]

    @classmethod
    def from_metadata(cls, meta: dict, where: str) -> CtbrScaling:
        """Read both keys; ValueError naming the missing or malformed one otherwise."""
        for key in (CTBR_HOVER_THRUST_KEY, CTBR_MAX_RATES_KEY):
            if key not in meta:
                raise ValueError(f"{where}: its metadata has no '{key}', which scales its {CTBR_LAYOUT} action; "
                                 "export it again with nexus train, or add "
                                 f"{CTBR_HOVER_THRUST_KEY}=0.57 and {CTBR_MAX_RATES_KEY}=3,3,1.5 (roll, pitch, yaw "
                                 "[rad/s]) to its metadata")
        try:
            hover = float(meta[CTBR_HOVER_THRUST_KEY])
        except ValueError:
            hover = math.nan
        if not 0.0 < hover < 1.0:
            raise ValueError(f"{where}: its metadata {CTBR_HOVER_THRUST_KEY} is {meta[CTBR_HOVER_THRUST_KEY]!r}; it "
                             "must be the hover thrust fraction, between 0 and 1")
        try:
            rates = tuple(float(v) for v in meta[CTBR_MAX_RATES_KEY].split(","))
        except ValueError:
            rates = ()
        if len(rates) != 3 or not all(r > 0.0 and math.isfinite(r) for r in rates):
            raise ValueError(f"{where}: its metadata {CTBR_MAX_RATES_KEY} is {meta[CTBR_MAX_RATES_KEY]!r}; it must be "
                             "three positive rates [rad/s] for roll, pitch, yaw, e.g. 3,3,1.5")
        return cls(hover, rates)

    def metadata(self) -> dict[str, str]:
        """The two keys as text that reads back to the same floats."""
        return {CTBR_HOVER_THRUST_KEY: repr(float(self.hover_thrust)),
                CTBR_MAX_RATES_KEY: ",".join(repr(float(r)) for r in self.max_rates)}

    def setpoint(self, action) -> np.ndarray:
        """(thrust fraction [0, 1], roll, pitch, yaw rate [rad/s, body FRD]) for one action, float64."""
        a = np.clip(np.asarray(action, dtype=np.float64).reshape(4), -1.0, 1.0)
        thrust = min(max(self.hover_thrust * (1.0 + a[0]), 0.0), 1.0)
        return np.array([thrust, *(a[1:] * np.asarray(self.max_rates, dtype=np.float64))])


def parse_layout(text: str, known: dict, key: str, where: str) -> list[tuple[str, int]]:
    """``"a:3,b:1"`` -> [("a", 3), ("b", 1)], each checked against ``known``; ValueError naming ``key`` otherwise."""
    layout = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, width = item.partition(":")
        if name not in known:
            raise ValueError(f"{where}: {key} names '{name}', which Nexus does not know; it knows {', '.join(known)}")
        try:
            width = int(width)
        except ValueError:
            raise ValueError(f"{where}: {key} entry '{item}' must be name:width") from None
        limit = known[name][0]
        if ((name in FEATURES or name in EXACT_ACTIONS) and width != limit) or width > limit or width < 1:
            raise ValueError(f"{where}: {key} gives '{name}' width {width}, but the signal's '{name}' has width {limit}")
        layout.append((name, width))
    if not layout:
        raise ValueError(f"{where}: {key} is empty")
    return layout


def heading(attitude_xyzw) -> float:
    x, y, z, w = (float(v) for v in attitude_xyzw)
    return math.atan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))


def observe(layout: list[tuple[str, int]], estimate, setpoint, setpoint_velocity=None, setpoint_acceleration=None) -> np.ndarray:
    """The observation vector for ``layout`` from one estimate and one setpoint (float32).

    ``setpoint_velocity`` [m/s, NED] is the setpoint's change per second and ``setpoint_acceleration``
    [m/s², NED] that velocity's, which the caller keeps from tick to tick (0 if None).
    """
    q = np.asarray(estimate.attitude, dtype=np.float64)
    psi = heading(q)
    c, s = math.cos(psi), math.sin(psi)

    def to_heading(v):
        return np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]])

    x, y, z, w = q
    body_down = np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])
    values = {
        "position_error_heading": lambda: to_heading(np.asarray(setpoint.position, dtype=np.float64) - np.asarray(estimate.position)),
        "velocity_heading": lambda: to_heading(np.asarray(estimate.velocity, dtype=np.float64)),
        "tilt_heading": lambda: to_heading(body_down)[:2],
        "rates": lambda: np.asarray(estimate.rates, dtype=np.float64),
        "setpoint_velocity_heading": lambda: to_heading(np.zeros(3) if setpoint_velocity is None
                                                        else np.asarray(setpoint_velocity, dtype=np.float64)),
        "setpoint_acceleration_heading": lambda: to_heading(np.zeros(3) if setpoint_acceleration is None
                                                            else np.asarray(setpoint_acceleration, dtype=np.float64)),
        "yaw_error": lambda: np.array([math.atan2(math.sin(float(setpoint.yaw) - psi), math.cos(float(setpoint.yaw) - psi))]),
    }
    return np.concatenate([values[name]() for name, _ in layout]).astype(np.float32)


def split_neighbours(layout: list[tuple[str, int]], key: str, where: str) -> tuple[list[tuple[str, int]], int]:
    """A layout's own features and how many neighbours follow them; ValueError unless the neighbour features come
    last, as whole :data:`NEIGHBOUR_BLOCK` pairs."""
    names = [name for name, _ in NEIGHBOUR_BLOCK]
    first = next((i for i, (name, _) in enumerate(layout) if name in names), len(layout))
    own, tail = layout[:first], layout[first:]
    if len(tail) % len(NEIGHBOUR_BLOCK) or any(tuple(tail[i:i + 2]) != NEIGHBOUR_BLOCK for i in range(0, len(tail), 2)):
        raise ValueError(f"{where}: {key} must end with the neighbour features as pairs "
                         "neighbour_position_heading:3,neighbour_velocity_heading:3, one pair for each other vehicle "
                         "of the world, after every feature of the vehicle's own")
    return own, len(tail) // len(NEIGHBOUR_BLOCK)


def neighbour_features(places, velocities, attitudes, vehicles: int) -> np.ndarray:
    """Each slot's neighbour features (slots, 6 (vehicles − 1)), float32: for every other vehicle of its world, in
    vehicle order, that vehicle's position and velocity less this one's, turned into this one's heading frame.

    ``places`` [m] and ``velocities`` [m/s] are every slot's in its world's common NED frame (slot ``s`` is vehicle
    ``s % vehicles`` of world ``s // vehicles``), ``attitudes`` each slot's quaternion (x, y, z, w; FRD to NED).
    """
    places = np.asarray(places, dtype=np.float64).reshape(-1, vehicles, 3)
    velocities = np.asarray(velocities, dtype=np.float64).reshape(-1, vehicles, 3)
    q = np.asarray(attitudes, dtype=np.float64).reshape(-1, vehicles, 4)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    psi = np.arctan2(2.0 * (x * y + z * w), 1.0 - 2.0 * (y * y + z * z))
    c, s = np.cos(psi)[:, :, None], np.sin(psi)[:, :, None]  # (worlds, self, 1)

    def relative(values):  # (worlds, self, other, 3) in self's heading frame
        d = values[:, None, :, :] - values[:, :, None, :]
        return np.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1], d[..., 2]], axis=-1)

    both = np.concatenate([relative(places), relative(velocities)], axis=-1)  # (worlds, self, other, 6)
    others = ~np.eye(vehicles, dtype=bool)
    rows = np.stack([both[:, k, others[k]] for k in range(vehicles)], axis=1)  # (worlds, self, K - 1, 6)
    return rows.reshape(-1, 6 * (vehicles - 1)).astype(np.float32)
