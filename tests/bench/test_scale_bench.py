"""The ``scale`` bench suite (nexus/bench/scale.py): the flight it times is ``nexus run --worlds N --record summary``'s,
world 0 of it is the one-world default flight, and a tiny run returns every field it promises. No timing is asserted.
"""

from __future__ import annotations

import numpy as np
import pytest

from nexus.bench import scale
from nexus.runtime.flight import fly
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

#: 0.8 s of sim at 250 Hz: through the takeoff (about 0.5 s) into the climb.
TICKS = 200


def _flown(config: RunConfig, record) -> dict[str, np.ndarray]:
    """The plant's state and the loop's estimate after ``TICKS`` ticks, one row per world."""
    with FlightSession(config, record) as session:
        fly(session.flight, session.writer, TICKS)
        state = session.vehicle.plant.state
        worlds = config.worlds
        out = {name: getattr(state, name).numpy().reshape(worlds, -1)
               for name in ("body_q", "body_qd", "joint_q", "joint_qd")}
        estimate = session.loop.output("estimate").numpy()
        out["estimate"] = np.ascontiguousarray(estimate).view(np.uint8).reshape(worlds, -1)
        out["ticks"] = np.array([session.loop.ticks])
    return out


@pytest.mark.parametrize("solver", ["mujoco", "freeflyer"])
def test_world_0_of_the_scale_flight_is_the_one_world_default_run_bit_for_bit(solver, tmp_path):
    many = _flown(scale.scale_config(solver, 4, "truth", "cpu"), None)
    one = _flown(RunConfig(device="cpu", solver=solver, estimator="truth"), tmp_path / "record.parquet")
    assert many["ticks"][0] == one["ticks"][0] == TICKS
    for name in ("body_q", "body_qd", "joint_q", "joint_qd", "estimate"):
        assert many[name][0].tobytes() == one[name][0].tobytes(), name
    # In the air by then, and every world flies the same flight (no variation drawn).
    assert one["body_q"][0][2] > 0.1
    assert (many["body_q"] == many["body_q"][0]).all()


def test_the_scale_config_is_nexus_runs_worlds_summary_flight():
    config = scale.scale_config("freeflyer", 64, "ekf", "cpu")
    assert (config.worlds, config.record_mode, config.solver, config.estimator) == (64, "summary", "freeflyer", "ekf")


def test_a_tiny_suite_run_returns_every_field_it_promises():
    result = scale.run("cpu", worlds=(2,), rounds=1, ticks=16, airborne_s=0.1, shards=2)
    assert (result["suite"], result["device"], result["clock"]) == ("scale", "cpu", "process CPU time")
    assert [(r["solver"], r["worlds"], r["estimator"]) for r in result["rows"]] == [
        ("mujoco", 2, "truth"), ("mujoco", 2, "ekf"), ("freeflyer", 2, "truth"), ("freeflyer", 2, "ekf")]
    fields = {"loop_tick_us", "bare_step_us", "drone_ticks_per_s", "bare_drone_ticks_per_s",
              "stages_us_per_world_tick", "step_us_per_world_tick", "loop_vs_bare", "kernels_per_tick",
              "round_ticks", "rounds", "min_height_m", "build_s", "wall_s"}
    for row in result["rows"]:
        assert fields <= set(row), fields - set(row)
        assert (row["round_ticks"], row["rounds"]) == (16, 1)
        assert row["drone_ticks_per_s"] > 0 and row["bare_step_us"] > 0
        assert row["stages_us_per_world_tick"] == pytest.approx(
            (row["loop_tick_us"] - row["bare_step_us"]) / 2)
    assert result["skipped"] == []
    assert result["targets"] == {"freeflyer_drone_ticks_per_s_1024": 1.2e6, "freeflyer_drone_ticks_per_s_4096": 3.0e6,
                                 "stages_us_per_world_tick": 0.8, "freeflyer_step_us_per_world_tick": 0.4}
    assert result["targets_met"] == {}  # no 1,024- or 4,096-world row: no target judged
    lines = dict(scale.table(result))
    assert "freeflyer, N=2, ekf: drone-ticks per second" in lines
    assert result["sharded"] == []  # 2 worlds: too few to shard over 2 processes (each shard at least 2 worlds)
    assert lines["both cores (issue 46, point 3)"] == "not measured (NEXUS_BENCH_SCALE_SHARDS < 2)"
    assert set(result["load_average"]) == {"before", "after"}


def test_mujoco_is_skipped_where_its_predicted_time_is_over_the_limit():
    rows = [{"solver": "mujoco", "estimator": "truth", "worlds": 1024, "wall_s": 40.0},
            {"solver": "freeflyer", "estimator": "truth", "worlds": 1024, "wall_s": 8.0}]
    assert scale._predicted_s(rows, "mujoco", 4096) == 160.0
    assert scale._predicted_s(rows, "freeflyer", 4096) == 32.0
    assert scale._predicted_s([], "mujoco", 16) is None
    assert scale.skip_reason(rows, "mujoco", 4096) == "predicted 160 s (over 120 s) from the largest MuJoCo row measured"
    assert scale.skip_reason(rows, "freeflyer", 4096) is None  # only MuJoCo is ever skipped
    assert scale.skip_reason(rows, "mujoco", 1024) is None  # and never at 1,024 worlds or fewer:
    at64 = [{"solver": "mujoco", "estimator": "truth", "worlds": 64, "wall_s": 13.75}]
    assert scale._predicted_s(at64, "mujoco", 1024) == 220.0  # over the limit, and still measured
    assert scale.skip_reason(at64, "mujoco", 1024) is None
    small = [{"solver": "mujoco", "estimator": "truth", "worlds": 1024, "wall_s": 25.0}]
    assert scale.skip_reason(small, "mujoco", 4096) is None  # 100 s predicted: measured


def test_the_targets_are_judged_on_the_1024_and_4096_world_rows():
    def row(solver, worlds, rate, stages, step):
        return {"solver": solver, "worlds": worlds, "estimator": "truth", "drone_ticks_per_s": rate,
                "stages_us_per_world_tick": stages, "step_us_per_world_tick": step}

    rows = [row("freeflyer", 1024, 1.3e6, 0.9, 0.5), row("freeflyer", 4096, 2.9e6, 0.7, 0.3),
            row("mujoco", 1024, 6.0e4, 2.5, 15.0), row("freeflyer", 64, 9e9, 0.0, 0.0)]
    assert scale.targets_met(rows) == {"freeflyer_drone_ticks_per_s_1024": True,
                                       "freeflyer_drone_ticks_per_s_4096": False,
                                       "mujoco_stages_us_per_world_tick_1024": False,
                                       "freeflyer_stages_us_per_world_tick_1024": False,
                                       "freeflyer_step_us_per_world_tick_1024": False}


def test_the_both_cores_targets_are_judged_on_the_1024_and_4096_world_rows():
    def row(solver, worlds, one, sharded):
        return {"solver": solver, "worlds": worlds, "one_process_drone_ticks_per_s": one,
                "sharded_drone_ticks_per_s": sharded, "efficiency": sharded / (2 * one)}

    rows = [row("freeflyer", 1024, 7.0e5, 1.3e6), row("freeflyer", 4096, 1.6e6, 2.9e6),
            row("mujoco", 1024, 1.0e5, 1.7e5), row("freeflyer", 64, 1.0, 9e9)]
    # 1.3 M / (2 x 0.7 M) = 0.929; 1.7e5 / 1e5 = 1.7 < 1.8, efficiency 0.85 (not below)
    assert scale.sharded_targets_met(rows) == {"freeflyer_sharded_drone_ticks_per_s_1024": True,
                                               "freeflyer_sharded_efficiency_1024": True,
                                               "freeflyer_sharded_drone_ticks_per_s_4096": False,
                                               "mujoco_sharded_efficiency_1024": True,
                                               "mujoco_sharded_over_one_process_1024": False}
