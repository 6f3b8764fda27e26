"""``nexus sweep`` over the six-rotor hexacopter: two points varying its sixth rotor's thrust coefficient (a rotor past
the quad's four, by its short name ``rotor6.kt``), each an ordinary run of the short mission that holds its weight on
the rotors it was given.

The points fly in this process through the function a Ray worker runs (``fly_point``), from the points the sweep
file expands to: Ray itself is tested in test_sweep.py, and starting workers would cost a minute here."""

import re

import numpy as np
import pandas as pd
import pytest

from nexus.sweep.runner import SweepOptions, prepare
from nexus.sweep.task import fly_point
from tests.sweep.conftest import write_sweep

SWEEP = """
[run]
vehicle = "hexa_f550"
mission = "short"
duration = 2.7
device = "cpu"

[grid]
"rotor6.kt" = [6.3e-6, 5.67e-6]
"""
KT = "/vehicle/propeller_6 nexus:thrustCoefficient"


def test_a_two_point_sweep_over_the_hexacopters_sixth_rotor(tmp_path):
    out = tmp_path / "sweep"
    _, points = prepare(write_sweep(tmp_path, SWEEP), SweepOptions(out=out, progress=False))
    assert sorted(point.values[KT] for point in points) == pytest.approx([5.67e-6, 6.3e-6])
    for point in points:
        folder = out / point.id
        row = fly_point(point.as_dict(), str(folder)) | {KT: point.values[KT]}
        assert row["status"] == "finished" and row["ticks"] == 675  # 2.7 s at 250 Hz
        layer = (folder / "vehicle.usda").read_text()  # the override layer over the hexacopter's file
        written = re.search(r'over "propeller_6"\s*\{\s*float nexus:thrustCoefficient = (\S+)', layer)
        assert written and float(written.group(1)) == pytest.approx(row[KT])
        record = pd.read_parquet(folder / "record.parquet")
        hold = record[(record.time > 2.2) & (record.time < 2.6)]  # the hold at 2 m
        u = hold[[f"controls[{i}]" for i in range(6)]].to_numpy().mean(axis=0)
        fractions = 0.5 * u + 0.5 * u * u  # thrust fraction, ESC thrust model factor 0.5
        scales = np.array([1.0] * 5 + [row[KT] / 6.3e-6])
        # The weight in full thrusts of a 6.3e-6 rotor: 2.0 · 9.80665 / (6.3e-6 · 1116²) = 2.4997.
        assert np.dot(scales, fractions) == pytest.approx(2.4997, rel=0.01)
        if row[KT] < 6.3e-6:  # 10 % weaker: the controller asks more of it than of its opposite, rotor 5
            assert fractions[5] > fractions[4] + 0.02
