"""Many worlds at their limits: a world that goes non-finite, record modes, the policy, and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import warp as wp
from click.testing import CliRunner

from nexus.cli import main, worlds_failed_status
from nexus.core import Component, Read, Stage
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from tests.worlds.flights import bits_differ, fly

SHORT = ("--mission", "short", "--seed", "5")


@wp.kernel
def poison(tick: wp.array(dtype=wp.int64), at: wp.int64, world: wp.int32, base: wp.int32, bodies: wp.int32,
           body_f: wp.array(dtype=wp.spatial_vector)):
    w = wp.tid()
    if w == world and tick[w] == at:
        body_f[base + w * bodies] = wp.spatial_vector(wp.vec3(wp.nan), wp.vec3(0.0))


class Poison(Component):
    """A force stage that puts NaN into one world's base wrench at one tick: its next step is not finite."""

    def __init__(self, world: int, tick: int):
        super().__init__("/test/poison")
        self.world, self.tick = world, tick

    def stages(self):
        return [Stage("poison", "force", self._run, reads=(Read("tick", wp.int64, (1,)),))]

    def prepare(self, ctx):
        self.plant = next(c.plant for c in ctx.components if type(c).__name__ == "Physics")
        self.worlds = ctx.worlds

    def _run(self, io):
        wp.launch(poison, self.worlds, inputs=[io["tick"], self.tick, self.world, self.plant.base,
                                               self.plant.bodies_per_world],
                  outputs=[self.plant.state.body_f], device=io.device)


def test_a_world_that_goes_non_finite_fails_alone(tmp_path):
    import pandas as pd

    options = RunConfig(mission="short", seed=5, worlds=3, device="cpu", duration=4.0)
    summary = run_flight(options, tmp_path / "run", progress=False, extra_components=[Poison(1, 300)])
    assert (summary.worlds, summary.worlds_failed) == (3, 1)
    table = pd.read_parquet(tmp_path / "run" / "summary.parquet")
    assert list(table.exit_reason) == ["duration", "failed", "duration"]
    assert list(table.failed_tick) == [-1, 300, -1]
    record = pd.read_parquet(tmp_path / "run" / "record.parquet")
    failed = record[record.world == 1]
    assert len(failed) == 300  # its rows stop at the tick it failed
    assert np.isfinite(failed["body/base.pose[2]"].to_numpy()).all()  # put back to its last finite state
    # The others fly on untouched: world 2 is world 2 of a run without the poison.
    clean = run_flight(options, tmp_path / "clean", progress=False)
    assert clean.worlds_failed == 0
    other = pd.read_parquet(tmp_path / "clean" / "record.parquet")
    pick = lambda rows: rows[rows.world == 2].drop(columns="world").reset_index(drop=True)  # noqa: E731
    assert bits_differ(pick(record), pick(other)) == []


def test_the_exit_status_counts_the_failed_worlds():
    assert [worlds_failed_status(n) for n in (0, 1, 5, 63, 200)] == [0, 65, 69, 127, 127]


def test_record_every_k_keeps_every_kth_tick_of_the_full_record(tmp_path):
    full = fly(tmp_path / "full", *SHORT, "--duration", "2", "--worlds", "2")
    every = fly(tmp_path / "every", *SHORT, "--duration", "2", "--worlds", "2", "--record-every", "10")
    assert len(every.record) == 2 * 50  # 500 ticks, every 10th, two worlds
    ticks = np.rint(every.record.time.to_numpy() * 250).astype(int)
    assert set(ticks % 10) == {0} and ticks.min() == 10 and ticks.max() == 500
    kept = full.record[np.isin(np.rint(full.record.time.to_numpy() * 250).astype(int), ticks)].reset_index(drop=True)
    assert bits_differ(kept, every.record) == []
    assert every.info["record_every"] == 10 and every.info["record_rows"] == 100


def test_record_summary_keeps_only_the_summary(tmp_path):
    run = fly(tmp_path / "run", *SHORT, "--duration", "2", "--worlds", "4", "--record", "summary")
    assert run.record is None and not (tmp_path / "run" / "record.parquet").exists()
    assert len(run.summary) == 4 and list(run.summary.world) == [0, 1, 2, 3]
    assert run.info["record_mode"] == "summary" and run.info["record_rows"] == 0


def test_the_policy_serves_every_world_in_one_host_stage(tmp_path):
    run = fly(tmp_path / "run", *SHORT, "--duration", "3", "--controller", "policy", "--worlds", "3")
    assert run.info["stage_plan"].count("host(policy)") == 1 and run.info["stage_plan"].endswith("3 worlds")
    assert run.info["controller_stats"]["inferences"] == 750  # one batched inference per tick, not three
    heights = run.record.groupby("world")["body/base.pose[2]"].max()
    assert (heights > 1.5).all()  # every world took off on the policy
    alone = fly(tmp_path / "alone", *SHORT, "--duration", "3", "--controller", "policy")
    assert bits_differ(run.world(0), alone.world(0)) == []  # the batched inference gives each row's own bits


@pytest.mark.parametrize("args, message", [
    (("--worlds", "0"), "--worlds 0: a run flies at least one world"),
    (("--worlds", "-3"), "--worlds -3: a run flies at least one world"),
    (("--worlds", "1000000000"), "at most"),
    (("--record-every", "0"), "--record-every 0: give a whole number of ticks"),
    (("--controller", "px4", "--worlds", "2"), "one PX4 SITL instance flies one vehicle"),
    (("--controller", "mpc", "--worlds", "2"), "the MPC solves one vehicle's problem"),
    (("--scene", "waypoints", "--worlds", "2"), "serves one world, but this ring flies 2"),
])
def test_bad_world_settings_are_one_line_before_any_stage_runs(tmp_path, args, message):
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output


def test_a_variation_naming_an_unknown_parameter_or_rotor_is_refused(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("mass = 5.0\nthrust_scal = 1.0\n")
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "a"),
                                       "--worlds", "2", "--vary", str(bad)])
    assert result.exit_code == 2 and f"{bad}:2: " in result.output and "thrust_scale" in result.output
    rotor = tmp_path / "rotor.toml"
    rotor.write_text("rotor_fail_time = 1.0\nrotor_fail_index = 7\n")
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "b"),
                                       "--worlds", "2", "--vary", str(rotor)])
    assert result.exit_code == 2 and f"{rotor}:2: " in result.output and "4 rotors" in result.output
    missing = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "c"),
                                        "--vary", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "none.toml" in missing.output


def test_world_of_names_a_run_and_a_world_it_flew(tmp_path):
    run = fly(tmp_path / "run", *SHORT, "--duration", "0.1", "--worlds", "2")
    for text, message in ((f"{run.out}:2", "flew worlds 0..1"), (f"{tmp_path}/nothing:0", "does not exist"),
                          (f"{run.out}", "as RUN:I")):
        result = CliRunner().invoke(main, ["run", "--quiet", "--out", str(tmp_path / "x"), "--world-of", text])
        assert result.exit_code == 2 and message in result.output, result.output
    result = CliRunner().invoke(main, ["run", "--quiet", "--out", str(tmp_path / "y"), "--world-of", f"{run.out}:1",
                                       "--seed", "3"])
    assert result.exit_code == 2 and "drop --seed" in result.output
