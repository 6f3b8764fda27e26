"""A sweep whose points draw the air per world: two pack capacities (a vehicle attribute) x a variation file that
draws the wind, turbulence and a gust, two worlds a point.

Checked by hand from each point's record: every world's pack gives 3600 Q (C) of the point's capacity Q before it
runs out (the sum of current x 4 ms), so the 0.002 Ah point's worlds run out before the 0.004 Ah point's; both
points draw the same air (the draws depend only on the run's seed, the name and the world), and each world's wind
is its drawn mean wind at the base's height (power law, alpha 0.143, reference 10 m) plus its drawn 1 - cos gust,
A/2 (1 - cos(2 pi (t - 0.2) / 0.4)), each toward the side opposite where it blows from.

The points fly in this process through the function a Ray worker runs (``fly_point``), from the points the sweep
file expands to: Ray itself is tested in test_sweep.py, and starting workers would cost a minute here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nexus.sweep.runner import SweepOptions, prepare
from nexus.sweep.task import fly_point
from tests.sweep.conftest import write_sweep

VEHICLE = Path(__file__).resolve().parents[1] / "data" / "astro_max_air_power.usda"
CAPACITY = "/vehicle/battery nexus:battery:capacity"
AIR = """
wind_speed = {dist = "uniform", low = 2.0, high = 6.0}
wind_direction = {dist = "uniform", low = 0.0, high = 360.0}
turbulence_level = "none"
gust_start_time = 0.2
gust_duration = 0.4
gust_amplitude = {dist = "uniform", low = 2.0, high = 6.0}
gust_direction = {dist = "choice", values = [0.0, 90.0, 180.0, 270.0]}
"""


def toward(direction_from: float) -> np.ndarray:
    """(east, north) a wind from ``direction_from`` [deg clockwise from north] blows toward."""
    angle = np.radians(direction_from)
    return np.array([-np.sin(angle), -np.cos(angle)])


def test_a_sweep_over_the_pack_flies_the_drawn_air_in_every_point(tmp_path):
    (tmp_path / "air.toml").write_text(AIR)
    path = write_sweep(tmp_path, f'[run]\nvehicle = "{VEHICLE}"\nduration = 1.5\ndevice = "cpu"\nworlds = 2\n'
                                 f'vary = "air.toml"\n[grid]\n"{CAPACITY}" = [0.002, 0.004]\n')
    _, points = prepare(path, SweepOptions(out=tmp_path / "sweep", progress=False))
    assert len(points) == 2
    ends, air = {}, []
    for point in points:
        folder = tmp_path / "sweep" / point.id
        row = fly_point(point.as_dict(), str(folder))
        capacity = point.values[CAPACITY]
        assert row["status"] == "finished" and row["exit_reason"] == "battery-empty"
        summary = pd.read_parquet(folder / "summary.parquet")
        assert (summary.exit_reason == "battery-empty").all()
        air.append(summary[[c for c in summary if c.startswith("vary.")]])
        record = pd.read_parquet(folder / "record.parquet")
        for world in (0, 1):
            rows = record[record.world == world]
            given = float(rows["battery.current"].astype(np.float64).sum()) * 0.004  # [C]
            assert given == pytest.approx(3600.0 * capacity, abs=0.1)  # one tick's charge (about 0.08 C) over at most
            ends.setdefault(capacity, []).append(float(rows.time.iloc[-1]))
            drawn = summary.iloc[world]
            t, z = rows.time.to_numpy(), rows["body/base.pose[2]"].to_numpy().astype(np.float64)
            height = np.concatenate([[z[0]], z[:-1]])  # the base at the start of each tick
            x = (t - 0.2) / 0.4
            gust = np.where((x >= 0) & (x <= 1), 0.5 * drawn["vary.gust_amplitude"] * (1 - np.cos(2 * np.pi * x)), 0)
            hand = (drawn["vary.wind_speed"] * (height / 10.0) ** 0.143)[:, None] * toward(drawn["vary.wind_direction"])
            hand += gust[:, None] * toward(drawn["vary.gust_direction"])
            assert np.abs(rows[["wind[0]", "wind[1]"]].to_numpy() - hand).max() < 1e-5
    assert max(ends[0.002]) < min(ends[0.004])
    pd.testing.assert_frame_equal(air[0], air[1])
    assert set(air[0].columns) >= {"vary.gust_amplitude", "vary.gust_direction", "vary.wind_speed"}
