"""Rotor layouts of the frames ``nexus vehicle new`` knows, in PX4's motor order and spin directions.

Each rotor is an azimuth [deg] clockwise from the nose seen from above (FRD: 90 is the right side), a
level (0 for flat frames; +1 upper, -1 lower rotor of a coaxial pair) and a spin, +1 counter-clockwise
seen from above (``nexus:spin``). The orders are PX4's: the quadrotor X and + airframes, and the
geometries of ``src/lib/mixer/MultirotorMixer/geometries`` (``hex_x``, ``hex_plus``, ``octa_x``,
``octa_cox``), so rotor k is PX4's motor output k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

CCW, CW = 1, -1


@dataclass(frozen=True)
class RotorPlace:
    """Where one rotor sits on its arm, and which way it turns."""

    azimuth: float  # [deg], clockwise from the nose seen from above
    spin: int  # +1 counter-clockwise seen from above
    level: int = 0  # coaxial pairs: +1 upper, -1 lower

    def position(self, arm: float) -> tuple[float, float]:
        """(x forward, y left) [m] in the body's FLU frame for an arm of ``arm`` [m]."""
        angle = math.radians(self.azimuth)
        return arm * math.cos(angle), -arm * math.sin(angle)

    def side(self) -> str:
        """'front right', 'rear', ... for docs in the written file."""
        x, y = self.position(1.0)
        fore = "front" if x > 0.38 else "rear" if x < -0.38 else ""
        lateral = "right" if y < -0.38 else "left" if y > 0.38 else ""
        where = " ".join(w for w in (fore, lateral) if w) or "centre"
        return where + {1: ", upper", -1: ", lower", 0: ""}[self.level]


FRAMES: dict[str, tuple[RotorPlace, ...]] = {
    "quad-x": (RotorPlace(45, CCW), RotorPlace(225, CCW), RotorPlace(315, CW), RotorPlace(135, CW)),
    "quad-plus": (RotorPlace(90, CCW), RotorPlace(270, CCW), RotorPlace(0, CW), RotorPlace(180, CW)),
    "hexa-x": (RotorPlace(90, CW), RotorPlace(270, CCW), RotorPlace(330, CW), RotorPlace(150, CCW),
               RotorPlace(30, CCW), RotorPlace(210, CW)),
    "hexa-plus": (RotorPlace(0, CW), RotorPlace(180, CCW), RotorPlace(240, CW), RotorPlace(60, CCW),
                  RotorPlace(300, CCW), RotorPlace(120, CW)),
    "octo-x": (RotorPlace(22.5, CW), RotorPlace(202.5, CW), RotorPlace(67.5, CCW), RotorPlace(157.5, CCW),
               RotorPlace(337.5, CCW), RotorPlace(247.5, CCW), RotorPlace(292.5, CW), RotorPlace(112.5, CW)),
    "x8": (RotorPlace(45, CCW, 1), RotorPlace(315, CW, 1), RotorPlace(225, CCW, 1), RotorPlace(135, CW, 1),
           RotorPlace(315, CCW, -1), RotorPlace(45, CW, -1), RotorPlace(135, CCW, -1), RotorPlace(225, CW, -1)),
}


def frame_names() -> tuple[str, ...]:
    return tuple(FRAMES)
