"""A variation file draws the air and the power per world: wind, turbulence, a gust, the pack, the ground effect.

One 16-world flight of the Astro Max with the test pack, ground effect and drag (tests/data/astro_max_air_power.usda)
under ``AIR`` below, seed 0; every world ends battery-empty within 2 s. Checked from the record by hand:

* the wind of a world without turbulence is its drawn mean wind at the base's height (power law, alpha 0.143,
  reference 10 m) plus its drawn 1 - cos gust, A/2 (1 - cos(2 pi (t - t0) / d)) toward the side opposite where it
  blows from; the height is the base's at the start of the tick (the row before), the time the row's own;
* a world's pack holds its drawn capacity and starts at its drawn charge s0: the charge it gave, the sum of
  current x 4 ms, is 3600 Q s0 (C) when it runs out, so a world drawn 0.004 Ah runs out before any world drawn
  0.008 Ah (0.004 x 1.0 < 0.008 x 0.7);
* the first tick that draws current sags the pack by the drawn R0 alone: V = 12 (3.5 + 0.6 s) - R0 I (the RC pair
  is still at rest, s the charge before that tick);
* world i of 16 flown alone (``--world-of``) is the same world, bit for bit.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import warp as wp

from nexus.core import BuildError
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from tests.worlds.flights import bits_differ, fly

DATA = Path(__file__).resolve().parents[1] / "data"
VEHICLE = DATA / "astro_max_air_power.usda"
DT = 0.004  # [s] 250 Hz
AIR = """
wind_speed = {dist = "uniform", low = 0.0, high = 6.0}
wind_direction = {dist = "uniform", low = 0.0, high = 360.0}
turbulence_level = {dist = "choice", values = ["none", "light"]}
gust_start_time = {dist = "uniform", low = 0.5, high = 1.5}
gust_duration = 1.0
gust_amplitude = {dist = "uniform", low = 2.0, high = 6.0}
gust_direction = {dist = "choice", values = [0.0, 90.0, 180.0, 270.0]}
gust_probability = 0.5
battery_capacity = {dist = "choice", values = [0.004, 0.008]}
battery_resistance = {dist = "uniform", low = 0.01, high = 0.03}
battery_initial_charge = {dist = "uniform", low = 0.7, high = 1.0}
ground_effect_scale = {dist = "uniform", low = 0.5, high = 1.5, per_rotor = true}
"""


def toward(direction_from: float) -> np.ndarray:
    """(east, north) a wind from ``direction_from`` [deg clockwise from north] blows toward."""
    angle = math.radians(direction_from)
    return np.array([-math.sin(angle), -math.cos(angle)])


@pytest.fixture(scope="module")
def flown(tmp_path_factory):
    root = tmp_path_factory.mktemp("air_draws")
    vary = root / "air.toml"
    vary.write_text(AIR)
    batch = fly(root / "n16", "--vehicle", str(VEHICLE), "--duration", "3", "--worlds", "16", "--vary", str(vary))
    summary = batch.summary
    # A world with a gust and no turbulence, and one without a gust (its gust_start_time inf, null in run.json),
    # each flown alone.
    gust = np.isfinite(summary["vary.gust_start_time"])
    calm = summary["vary.turbulence_level"] == "none"
    worlds = (int(summary[calm & gust & (summary["vary.battery_capacity"] == 0.008)].world.iloc[0]),
              int(summary[~gust].world.iloc[0]))
    alone = {w: fly(root / f"alone{w}", "--world-of", f"{batch.out}:{w}") for w in worlds}
    return batch, worlds, alone


def test_every_world_flies_its_draws_and_runs_out(flown):
    batch, _, _ = flown
    summary = batch.summary
    assert len(summary) == 16 and (summary.exit_reason == "battery-empty").all()
    for name in ("wind_speed", "wind_direction", "gust_start_time", "gust_duration", "gust_amplitude", "gust_direction",
                 "battery_capacity", "battery_resistance", "battery_initial_charge", "ground_effect_scale[3]"):
        assert f"vary.{name}" in summary
    gusts = np.isfinite(summary["vary.gust_start_time"])
    assert 0 < gusts.sum() < 16  # gust_probability 0.5: some worlds get the gust, some do not
    assert set(summary["vary.turbulence_level"]) == {"none", "light"}


def test_a_calm_worlds_wind_is_its_drawn_mean_wind_and_gust(flown):
    batch, _, _ = flown
    checked = 0
    for _, v in batch.summary[batch.summary["vary.turbulence_level"] == "none"].iterrows():
        rows = batch.world(int(v.world))
        t, z = rows.time.to_numpy(), rows["body/base.pose[2]"].to_numpy().astype(np.float64)
        height = np.concatenate([[z[0]], z[:-1]])  # the base at the start of each tick
        mean = v["vary.wind_speed"] * (height / 10.0) ** 0.143
        gust = np.zeros_like(t)
        if np.isfinite(v["vary.gust_start_time"]):
            x = (t - v["vary.gust_start_time"]) / v["vary.gust_duration"]
            inside = (x >= 0) & (x <= 1)
            gust[inside] = 0.5 * v["vary.gust_amplitude"] * (1 - np.cos(2 * np.pi * x[inside]))
            checked += gust.max() > 1.0  # the gust blew in this world's record
        hand = mean[:, None] * toward(v["vary.wind_direction"]) + gust[:, None] * toward(v["vary.gust_direction"])
        wind = rows[["wind[0]", "wind[1]", "wind[2]"]].to_numpy().astype(np.float64)
        assert np.abs(wind[:, :2] - hand).max() < 1e-5, v.world
        assert np.all(wind[:, 2] == 0.0)
    assert checked >= 1


def test_each_pack_holds_its_drawn_capacity(flown):
    batch, _, _ = flown
    ends = {}
    for _, v in batch.summary.iterrows():
        rows = batch.world(int(v.world))
        given = float(rows["battery.current"].astype(np.float64).sum()) * DT  # [C]
        # Empty on the tick the charge crosses 0: at most one tick's charge (about 20 A x 4 ms = 0.08 C) over.
        start = v["vary.battery_initial_charge"]
        assert given == pytest.approx(3600.0 * v["vary.battery_capacity"] * start, abs=0.1), v.world
        assert rows["battery.state_of_charge"].iloc[0] == pytest.approx(start, abs=1e-4)  # one idle tick drawn
        ends.setdefault(v["vary.battery_capacity"], []).append(rows.time.iloc[-1])
    assert max(ends[0.004]) < min(ends[0.008])


def test_the_first_load_sags_the_pack_by_its_drawn_resistance(flown):
    batch, _, _ = flown
    for _, v in batch.summary.iterrows():
        rows = batch.world(int(v.world))
        current = rows["battery.current"].to_numpy().astype(np.float64)
        k = int(np.flatnonzero(current > 1.0)[0])  # the first tick of a real load (the idle draws ~0 A)
        before = v["vary.battery_initial_charge"] if k == 0 else float(rows["battery.state_of_charge"].iloc[k - 1])
        head = 12 * (3.5 + 0.6 * before)  # [V] the linear test curve, RC pair at rest
        voltage = float(rows["battery.voltage"].iloc[k])
        assert (head - voltage) / current[k] == pytest.approx(v["vary.battery_resistance"], rel=1e-3), v.world


def test_a_world_of_sixteen_is_the_world_flown_alone(flown):
    batch, worlds, alone = flown
    for world in worlds:
        assert alone[world].info["exit_reason"] == "battery-empty"
        assert bits_differ(batch.world(world), alone[world].world(0)) == [], world


# -- the ground effect's drawn scale, on crafted states ----------------------------------------------------------

def test_the_drawn_scale_multiplies_the_extra_thrust_in_ground_effect():
    from nexus.plant.ground_effect import add_ground_effect, effect_scales
    from nexus.plant.propeller import rotor_variation

    # Two worlds, one rotor at z = R (ratio 16/15) spinning at 300 rad/s with kT = 2e-4: the propeller's thrust is
    # 2e-4 * 300² = 18 N, the extra (16/15 - 1) * 18 = 1.2 N. World 0 draws scale 0.5 (0.6 N), world 1 none (1.2 N).
    values = [{"ground_effect_scale": [0.5]}, {}]
    ctx = SimpleNamespace(worlds=2, device="cpu", values_of=lambda w: values[w],
                          varied=lambda name, default: np.array([values[w].get(name, default) for w in range(2)]))
    body_q = wp.array([wp.transform((0.0, 0.0, 0.25), wp.quat_identity())] * 2, dtype=wp.transform, device="cpu")
    joint_qd = wp.array([300.0, 300.0], dtype=wp.float32, device="cpu")
    body_f = wp.zeros(2, dtype=wp.spatial_vector, device="cpu")
    time_ns = wp.zeros(2, dtype=wp.int64, device="cpu")
    wp.launch(add_ground_effect, 2, inputs=[0, 0, 0, 2.0e-4, 0.25, 1, 1, rotor_variation(ctx, 1),
                                            effect_scales(ctx, 2, 1), joint_qd, body_q, time_ns],
              outputs=[body_f], device="cpu")
    force = body_f.numpy()
    assert force[:, 2] == pytest.approx([0.6, 1.2], abs=1e-5)
    assert np.all(force[:, [0, 1, 3, 4, 5]] == 0.0)


# -- bad input: one line, before any stage --------------------------------------------------------------------

def _build(tmp_path, text: str, vehicle: str | None = None, duration: float = 2.0):
    path = tmp_path / "vary.toml"
    path.write_text(text)
    options = dict(worlds=2, vary=str(path), device="cpu", duration=duration)
    return build_flight(RunConfig(**options, **({"vehicle": vehicle} if vehicle else {})))


def test_a_drawn_gust_needs_its_direction(tmp_path):
    from nexus.worlds.variation import load_variation

    path = tmp_path / "vary.toml"
    path.write_text("gust_start_time = 1.0\ngust_amplitude = 4.0\n")
    with pytest.raises(BuildError, match=r"vary.toml:1: parameter 'gust_start_time' needs 'gust_direction' \(where it "
                                         r"blows from \[deg clockwise from north\]\); add it"):
        load_variation(path, rotors=4, sensors=[])
    path.write_text("gust_amplitude = 4.0\ngust_direction = 90\ngust_duration = 1.0\n")
    with pytest.raises(BuildError, match=r"vary.toml:3: parameter 'gust_duration' needs 'gust_start_time'"):
        load_variation(path, rotors=4, sensors=[])


def test_a_drawn_gust_longer_than_the_run_is_refused(tmp_path):
    # refused when the file is read, distribution by distribution (not in the worlds that happen to draw one)
    with pytest.raises(BuildError, match=r"vary.toml:2: parameter 'gust_duration' = 3, but it must be > 0 and no "
                                         r"longer than the run \(2 s\) \[s\]; change it$"):
        _build(tmp_path, "gust_start_time = 0.0\ngust_duration = 3.0\ngust_amplitude = 4.0\ngust_direction = 90\n")


def test_a_vehicle_without_a_battery_refuses_a_drawn_capacity(tmp_path):
    with pytest.raises(BuildError, match=r"draws battery_capacity, but the vehicle has no battery; apply "
                                         r"NexusBatteryAPI"):
        _build(tmp_path, "battery_capacity = 0.01\n")


# -- how battery-empty worlds are summed up and drawn ---------------------------------------------------------

def test_a_world_its_battery_ended_has_no_landing_error(flown):
    # The pack stopped each world on its way (none landed): no landing error, and the printed distribution says so.
    batch, _, _ = flown
    assert batch.summary.landing_error.isna().all()
    assert "landing_error        (no world has it)" in batch.output
    assert np.isfinite(batch.summary[["final_x", "final_y", "final_z"]].to_numpy()).all()  # where each stopped


def test_battery_empty_worlds_are_purple_in_the_report_and_the_viewer(flown):
    from matplotlib.colors import to_rgba

    from nexus.viz.worlds import load_worlds
    from nexus.viz.worlds_figures import distributions, outcome_title, paths
    from nexus.viz.worlds_view import marker_colours

    batch, _, _ = flown
    run = load_worlds(batch.out)
    assert outcome_title(run, 0).startswith("16 worlds: 16 battery-empty;")
    bars = [p for ax in distributions(run, 0).axes for p in ax.patches]
    assert bars and {p.get_facecolor() for p in bars} == {to_rgba("tab:purple")}
    top = paths(run, 0).axes[0]
    emptied = next(line for line in top.get_lines() if line.get_label() == "battery empty (16)")
    assert len(emptied.get_xdata()) == 16 and emptied.get_color() == "tab:purple"
    assert np.allclose(marker_colours(run.exit_reasons()), [0.58, 0.40, 0.74])


def test_the_air_example_draws_every_world_within_its_checks():
    from nexus.core.rng import RngTree
    from nexus.worlds.variation import load_variation, world_values_problem

    path = Path(__file__).resolve().parents[2] / "examples" / "monte_carlo_air.toml"
    worlds = load_variation(path, rotors=4, sensors=[]).draw(RngTree(0), 64)
    assert all(world_values_problem(values, 4) is None for values in worlds)
    gusts = [v for v in worlds if math.isfinite(v["gust_start_time"])]
    assert 16 < len(gusts) < 48  # gust_probability 0.5 of 64
    assert all(2.0 <= v["gust_start_time"] <= 6.0 and v["gust_start_time"] + v["gust_duration"] <= 8.0 for v in gusts)
    assert all(0.035 <= v["battery_capacity"] <= 0.045 for v in worlds)
