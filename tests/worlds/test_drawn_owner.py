"""A force defined only in this file takes its own drawn parameter, with no edit under ``nexus/``.

``Lift`` declares ``lift_z`` beside its class (:func:`nexus.vocab.drawn.draws`) and says how it joins the
ring (``from_draws``). The resolver then lists the name with its owner, a variation file may draw it, each
world's value reaches the component, and the flight feels it.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import warp as wp
from click.testing import CliRunner

from nexus.cli import main
from nexus.core import Component, Stage
from nexus.plant.base_force import BaseForce
from nexus.vocab.drawn import Drawn, abs_at_most, draws, withdraw
from nexus.worlds.drawn import take_draws
from tests.worlds.flights import fly
from tests.worlds.test_variation_physics import GRAVITY, TOTAL_MASS, _hover, _thrust_fraction, seed_where

OWNER = "tests.worlds.test_drawn_owner.Lift"


@wp.kernel
def push_up(lift: wp.array(dtype=wp.float32), base: wp.int32, bodies_per_world: wp.int32,
            body_f: wp.array(dtype=wp.spatial_vector)):
    world = wp.tid()
    body = base + world * bodies_per_world
    body_f[body] = body_f[body] + wp.spatial_vector(wp.vec3(0.0, 0.0, lift[world]), wp.vec3(0.0))


#: The test's drawn parameter: an upward force on the base body [N, world ENU].
LIFT_Z = Drawn("lift_z", "N", "an upward force on the base body (a test's)", "|value| <= 20",
               accepts=abs_at_most(20.0))


class Lift(Component):
    """Pushes each world's base body up by its drawn ``lift_z`` every tick (a force stage, beside the propellers)."""

    #: Every Lift the ring built, so a test can see what each was given.
    made: list[Lift] = []

    def __init__(self, plant):
        super().__init__("/test/lift")
        self.plant = plant
        self.received = None
        Lift.made.append(self)

    @classmethod
    def from_draws(cls, ring) -> Lift:
        return cls(ring.plant)

    def stages(self) -> list[Stage]:
        return [Stage("lift", "force", self._run)]

    def prepare(self, ctx) -> None:
        self.received = ctx.varied("lift_z", 0.0)
        self.lift = wp.array(self.received.astype(np.float32), dtype=wp.float32, device=ctx.device)

    def _run(self, io) -> None:
        plant = self.plant
        wp.launch(push_up, plant.worlds, inputs=[self.lift, plant.base, plant.bodies_per_world],
                  outputs=[plant.state.body_f], device=io.device)


@pytest.fixture(autouse=True)
def declared():
    """What a plugin module does at import with ``@draws(LIFT_Z)`` above the class; withdrawn after each test,
    so the other tests see Nexus's own names only."""
    draws(LIFT_Z)(Lift)
    Lift.made.clear()
    yield
    withdraw(Lift)


def test_the_resolver_lists_the_name_with_this_file_s_class_as_its_owner():
    result = CliRunner().invoke(main, ["params", "--reader", "variation", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in map(json.loads, result.output.splitlines())}
    row = rows["lift_z"]
    assert (row["kind"], row["unit"], row["bounds"], row["read_by"], row["owner"]) == (
        "draw", "N", "|value| <= 20", ["variation"], OWNER)
    text = CliRunner().invoke(main, ["params", "--reader", "variation"]).output
    assert f"variation; drawn into {OWNER}" in next(line for line in text.splitlines() if line.startswith("lift_z "))


def test_the_owner_joins_the_ring_only_where_a_world_draws_its_name():
    plant = object()  # the joining parts only keep it
    assert take_draws(plant, (), [{}, {}]) == []
    parts = take_draws(plant, (), [{}, {"lift_z": 2.0, "base_force_x": 1.0}])
    # Nexus's own owners first, then this file's: the base force, then the lift.
    assert [type(p) for p in parts] == [BaseForce, Lift] and parts[1].plant is plant


def test_a_misspelt_name_gets_the_resolver_s_sentence_naming_the_file(tmp_path):
    path = tmp_path / "vary.toml"
    path.write_text("lift_zz = 1.0\n")
    result = CliRunner().invoke(main, ["run", "--device", "cpu", "--quiet", "--out", str(tmp_path / "run"),
                                       "--worlds", "2", "--vary", str(path)])
    assert result.exit_code == 2, result.output
    assert (f"{path}:1: parameter 'lift_zz' is unknown; did you mean 'lift_z'? `nexus params --vehicle "
            "astro_max_base` lists every name and what reads it") in result.output
    assert Lift.made == []  # refused before anything was built


def test_a_force_declared_only_here_gets_each_world_s_draw_and_flies(tmp_path):
    path = tmp_path / "vary.toml"
    path.write_text('lift_z = { dist = "choice", values = [0.0, 10.0] }\n')
    seed = seed_where(path, 2, lambda d: [v["lift_z"] for v in d] == [0.0, 10.0])
    run = fly(tmp_path / "run", "--mission", "short", "--seed", str(seed), "--duration", "6", "--worlds", "2",
              "--vary", str(path))
    assert [v["lift_z"] for v in run.info["world_values"]] == [0.0, 10.0]
    (lift,) = Lift.made
    assert lift.received.tolist() == [0.0, 10.0]
    # 10 N of the weight M g = 5.831 kg x 9.80665 m/s^2 = 57.18 N is carried by the lift: in a steady hover
    # the rotors' thrust falls to (57.18 - 10) / 57.18 = 0.8251 of world 0's.
    free, lifted = (_thrust_fraction(_hover(run, w)[[f"controls[{k}]" for k in range(4)]].to_numpy())
                    .sum(axis=1).mean() for w in (0, 1))
    weight = TOTAL_MASS * GRAVITY
    assert lifted / free == pytest.approx((weight - 10.0) / weight, rel=0.01)


PLUGIN = '''
from nexus.core import Component
from nexus.vocab.drawn import Drawn, draws


@draws(Drawn("gust_x", "N", "a gust along x (a plugin's)", "any", kind="float"))
class Gust(Component):
    pass
'''


def test_a_plugin_module_s_names_are_listed_with_nexus_params_plugin(tmp_path, monkeypatch):
    (tmp_path / "gust_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        result = CliRunner().invoke(main, ["params", "--reader", "variation", "--json", "--plugin", "gust_plugin"])
        assert result.exit_code == 0, result.output
        rows = {row["name"]: row for row in map(json.loads, result.output.splitlines())}
        assert rows["gust_x"]["owner"] == "gust_plugin.Gust"
        assert list(rows)[-2:] == ["lift_z", "gust_x"]  # after Nexus's own, in the order they were declared
    finally:
        import sys

        from nexus.worlds.owners import owner_of

        withdraw(owner_of("gust_x").target)
        sys.modules.pop("gust_plugin", None)
