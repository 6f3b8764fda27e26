"""The figures of docs/air.md: Dryden turbulence against its closed form, the windy hover's tilt, the stages' cost.

    python tools/air_checks.py dryden   # sigma and Welch PSD / closed form in 10 bands, 128 worlds x 120 s
    python tools/air_checks.py hover    # tilt of the drag test vehicle in 5 m/s, every 5 s, against the hand value
    python tools/air_checks.py cost     # wind and drag stages' cost [µs] beside the rest, 1 and 16 worlds

Run from the repository root (it uses the test helpers and data of tests/air/).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from nexus.runtime.flight import build_flight, fly  # noqa: E402
from nexus.runtime.config import RunConfig
from nexus.runtime.startup import start  # noqa: E402

DATA = ROOT / "tests" / "data"


def dryden() -> None:
    import tests.air.test_dryden as t  # noqa: PLC0415

    wind = t.wind_series(t.moderate(), 30_001, worlds=128, seed=3, position=(0.0, 0.0, 10.0))[1:]
    wind[..., 0] -= t.AIRSPEED
    got = wind.reshape(-1, 3).std(axis=0)
    print("sigma u v w [m/s]:", np.round(got, 4), "closed form:", t.SIGMA, "ratio:", np.round(got / t.SIGMA, 4))
    edges = np.geomspace(0.25, 25.0, 11)
    print("bands [Hz]:", np.round(edges, 2))
    for axis in range(3):
        f, psd = t.welch(wind[..., axis], t.TICK_HZ, 8192)
        ratios = [psd[(f >= lo) & (f < hi)].mean() / t.closed_form(f[(f >= lo) & (f < hi)], axis).mean()
                  for lo, hi in zip(edges[:-1], edges[1:])]
        print(f"PSD / closed form, {'uvw'[axis]}:", np.round(ratios, 3), f"worst {max(abs(r - 1) for r in ratios):.1%}")


def hover() -> None:
    config = RunConfig(vehicle=str(DATA / "astro_max_drag.usda"), scene=str(DATA / "windy_hover.usda"),
                       duration=60.0, device="cpu")
    flight = build_flight(config)
    plant = flight.vehicle.plant
    start(flight.loop, plant)
    for seconds in range(5, 35, 5):
        fly(flight, None, 5 * 250)
        x, y, _, _ = plant.state.body_q.numpy()[plant.base][3:]
        tilt = math.degrees(math.acos(1 - 2 * (x * x + y * y)))
        print(f"t = {seconds:2d} s: tilt {tilt:.4f} deg (by hand 5.5518 deg)")


def cost() -> None:
    sys.path.insert(0, str(ROOT / "tools"))
    from stage_costs import stage_costs  # noqa: PLC0415

    for worlds in (1, 16):
        config = RunConfig(vehicle=str(DATA / "astro_max_drag.usda"), wind="8@270", turbulence="moderate",
                           device="cpu", worlds=worlds)
        flight = build_flight(config, "cpu")
        start(flight.loop, flight.vehicle.plant)
        fly(flight, None, 2 * 250)
        rows = stage_costs(flight)
        total = sum(micros for _, _, micros in rows)
        air = sum(micros for name, _, micros in rows if name in ("wind", "drag"))
        print(f"{worlds} worlds: " + ", ".join(f"{n} {m:.2f}" for n, _, m in rows if n in ("wind", "drag"))
              + f" µs of {total:.1f} µs summed over the stages ({air / total:.1%})")
        flight.loop.close()


if __name__ == "__main__":
    {"dryden": dryden, "hover": hover, "cost": cost}[sys.argv[1] if len(sys.argv) > 1 else "dryden"]()
