"""The figures of docs/battery.md and docs/ground_effect.md: the hovers the tests fly, printed.

    PYTHONPATH=. .venv/bin/python tools/power_ground_figures.py

Flies (CPU, captured, 250 Hz) the Astro Max with ground effect to a hover 0.3 m and 5 m above its start
and the one with the small test pack to a 1 m hover until the pack is empty, with the helper the tests use
(tests/plant/hover.py), and prints the measured figures beside the hand calculations.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.plant.hover import DATA, hover  # noqa: E402

RADIUS = 0.2667  # [m]
HOVER_POWER = 676.13  # [W], tests/plant/test_battery_flight.py


def ratio(z: float) -> float:
    return 1.0 / (1.0 - (RADIUS / (4.0 * z)) ** 2)


def main() -> None:
    low, high = (hover(DATA / "astro_max_ground_effect.usda", a, settle_s=4.0, sample_s=3.0) for a in (0.3, 5.0))
    plain = hover("astro_max_base", 5.0, settle_s=4.0, sample_s=3.0)
    zl, zh = low.heights.mean(), high.heights.mean()
    measured = math.sqrt(high.mean_square_speed / low.mean_square_speed)
    print(f"ground effect: rotor heights {zl:.4f} m and {zh:.4f} m; rms rotor speed {math.sqrt(low.mean_square_speed):.3f}"
          f" and {math.sqrt(high.mean_square_speed):.3f} rad/s (no ground effect at 5 m: "
          f"{math.sqrt(plain.mean_square_speed):.3f}; hand 251.506)")
    print(f"  speed ratio 5 m / 0.3 m: measured {measured:.7f}; Cheeseman-Bennett at the flown heights "
          f"{math.sqrt(ratio(zl) / ratio(zh)):.7f}, at 0.7 m and 5.4 m {math.sqrt(ratio(0.7) / ratio(5.4)):.7f}")
    print(f"  mean hover command {low.controls.mean():.5f} and {high.controls.mean():.5f}")
    flown = hover(DATA / "astro_max_battery.usda", 1.0, settle_s=3.0, sample_s=20.0)
    battery = flown.battery
    s0 = float(battery["state_of_charge"][0])
    energy = 1728.0 * (3.5 * s0 + 0.3 * s0 * s0)
    lasted = flown.time[-1] - flown.time[0]
    power = float((battery["voltage"] * battery["current"]).mean())
    print(f"battery: hover from state of charge {s0:.5f} ({energy:.1f} J left) lasted {lasted:.3f} s; "
          f"energy / {HOVER_POWER} W = {energy / HOVER_POWER:.3f} s ({(lasted * HOVER_POWER / energy - 1) * 100:+.2f} %); "
          f"mean terminal power {power:.2f} W; voltage {battery['voltage'][0]:.3f} V to {battery['voltage'][-1]:.3f} V")


if __name__ == "__main__":
    main()
