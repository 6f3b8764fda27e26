"""The command that makes a vehicle's rotors carry its weight, from the ESC and propeller models."""

from __future__ import annotations

import math

from nexus.plant.plant import Plant


def hover_speed(plant: Plant) -> float:
    """Rotor speed [rad/s] at which the rotors' thrust equals the weight (equal rotors)."""
    weight = plant.mass * plant.gravity
    total_kt = sum(rotor.thrust_coefficient for rotor in plant.rotors)
    return math.sqrt(weight / total_kt)


def command_for_speed(plant: Plant, speed: float) -> float:
    """The ESC command u in [0, 1] whose steady speed is ``speed`` [rad/s].

    Inverts ``ω = ω_max·√((1 - f)·u + f·u²)`` for the first rotor's ESC.
    """
    esc = plant.rotors[0].esc
    thrust = (speed / esc["max_speed"]) ** 2
    f = esc["thrust_model_factor"]
    if f == 0.0:
        return thrust
    # f·u² + (1 - f)·u - thrust = 0, positive root.
    return (-(1.0 - f) + math.sqrt((1.0 - f) ** 2 + 4.0 * f * thrust)) / (2.0 * f)


def hover_command(plant: Plant) -> float:
    return command_for_speed(plant, hover_speed(plant))
