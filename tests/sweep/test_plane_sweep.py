"""``nexus sweep`` over a plane: the Aerosonde's pitch stiffness swept (``"/vehicle/body/base/Aero
nexus:C_m_alpha"``), each point two worlds drawn from a variation file of mass.

The hand figure: in the last 4 s of leg 2 (level at 100 m), each world's elevator is the book's trim elevator at
its drawn mass, at the airspeed it flies and with the point's Cmα (``tests/fixed_wing/book_model.py``'s root solve,
no Nexus code): a stiffer airframe needs more nose-up elevator for the same lift. Measured 2026-12-06:
docs/fixed_wing.md, "Planes in worlds, variation and scenarios".
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from nexus.cli import main
from tests.fixed_wing.book_model import Aerosonde, trim

G = 9.80665  # the scene's gravity [m/s²]
SWEEP = """\
[run]
vehicle = "aerosonde"
device = "cpu"
duration = 50.0
worlds = 2
vary = "mass.toml"

[grid]
"/vehicle/body/base/Aero nexus:C_m_alpha" = [-2.74, -3.2]
"""


def test_a_sweep_of_the_pitch_stiffness_flies_each_point_s_trim_in_each_drawn_world(tmp_path: Path, ray_cpus):
    (tmp_path / "mass.toml").write_text('mass = {dist = "uniform", low = 10.0, high = 12.0}\n')
    (tmp_path / "sweep.toml").write_text(SWEEP)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["sweep", str(tmp_path / "sweep.toml"), "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(out / "sweep.parquet")
    assert sorted(table["/vehicle/body/base/Aero nexus:C_m_alpha"].tolist()) == [-3.2, -2.74]
    assert set(table.status) == {"finished"}
    elevators = {}
    for _, point in table.iterrows():
        folder = out / point.folder
        info = json.loads((folder / "run.json").read_text())
        record = pd.read_parquet(folder / "record.parquet")
        c_m_alpha = float(point["/vehicle/body/base/Aero nexus:C_m_alpha"])
        for world, drawn in enumerate(info["world_values"]):
            rows = record[record.world == world]
            t, leg = rows.time.to_numpy(), rows.plane_leg.to_numpy()
            end = t[leg == 2][-1]
            on = (t > end - 4.0) & (t <= end)
            velocity = np.stack([rows[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1).astype(float)
            airspeed = float(np.mean(np.linalg.norm(velocity[on], axis=1)))  # still air
            elevator = math.degrees(float(np.mean(rows["surface/elevator"].to_numpy()[on])))
            book = math.degrees(trim(airspeed, p=Aerosonde(g=G, mass=drawn["mass"], C_m_alpha=c_m_alpha)).elevator)
            assert abs(elevator - book) < 0.1, (c_m_alpha, world, drawn, elevator, book)
            elevators[(c_m_alpha, world)] = elevator
    # The same seed draws the same masses at both points; the stiffer airframe's elevator is well apart.
    assert min(abs(elevators[(-3.2, w)] - elevators[(-2.74, w)]) for w in (0, 1)) > 0.5
    # The plane's row figures, the worst world's, against the record: the slowest airborne airspeed (still air:
    # |v|, plane_phase below the roll-out, 7), and the smallest stall margin, that speed over the level stall speed
    # at the world's drawn mass, 10.387 m/s at 11 kg scaling as sqrt(m) (docs/fixed_wing.md).
    for _, point in table.iterrows():
        folder = out / point.folder
        info = json.loads((folder / "run.json").read_text())
        record = pd.read_parquet(folder / "record.parquet")
        slowest, margins = [], []
        for world, drawn in enumerate(info["world_values"]):
            rows = record[(record.world == world) & (record.plane_phase < 7)]
            velocity = np.stack([rows[f"body/base.velocity[{i}]"].to_numpy() for i in range(3)], 1).astype(float)
            speed = float(np.linalg.norm(velocity, axis=1).min())
            slowest.append(speed)
            margins.append(speed / (10.387 * math.sqrt(drawn["mass"] / 11.0)))
        assert point.min_airspeed == pytest.approx(min(slowest), rel=1e-9)
        assert point.min_stall_margin == pytest.approx(min(margins), rel=2e-3)
