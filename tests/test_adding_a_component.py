"""Adding a component, as ``docs/architecture.md`` walks through it, with a force defined only in this file.

``Tether`` is a load hung from the base body: it pulls the base down by its spec parameter ``pull`` [N]
(``nexus:tetherPull`` on its prim), times each world's drawn ``tether_pull_scale``. Its one file says
everything the rest of Nexus needs, and no file under ``nexus/`` names it:

* the spec: the parameter, the force stage, a recorded output (the pull this tick) and the device array
  ``pull`` with ``gradient=True`` and the rollout's name ``tether.pull``;
* ``@draws``: the drawn parameters it reads (``tether_pull_scale``, and the cut's time and remainder);
* ``@declare_faults``: the scenario fault ``tether_cut`` (keys ``at`` or ``when``, and ``remains``), which
  sets the cut's drawn values;
* ``@register``: a vehicle prim that lists ``ExampleTetherAPI`` in its ``apiSchemas`` becomes one (the
  module of a component of one's own, imported with ``nexus run --plugin MODULE``; a file in Nexus's own
  component packages is found by ``nexus schema --write`` instead).

The declarations are made in a fixture and withdrawn after it (as importing a plugin module would make them),
so the other tests see Nexus's own only. The flights are short: 1 s of a scenario, a 1 s rollout.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import warp as wp

from nexus.core import Component, Read, Stage
from nexus.core.arrays import ArrayDecl, NamedArrays
from nexus.core.clock import at_ns
from nexus.core.errors import BuildError
from nexus.core.spec import Output, Spec, positive
from nexus.diff import Rollout
from nexus.plant.usd_files import open_stage
from nexus.runtime.config import RunConfig
from nexus.runtime.params import parameters
from nexus.runtime.run import run_flight
from nexus.runtime.run_folder import RunFolder
from nexus.scenario.spec import ScenarioError, load
from nexus.schemas import catalog
from nexus.schemas.generate import render
from nexus.schemas.reader import read_prim
from nexus.vocab import drawn, faults
from nexus.vocab.drawn import Drawn, draws
from nexus.vocab.faults import Fault, FaultKey, declare_faults

ROOT = Path(__file__).resolve().parents[1]
#: The pull the test's vehicle file gives its tether [N], and what a cut leaves of it.
PULL = 2.5
REMAINS = 0.25
CUT_S = 0.5
TICK_S = 0.004  # 250 Hz, the default tick

# -- the one file: what a new component declares -------------------------------------------------------------

TETHER_SPEC = Spec(
    name="Tether",
    schema="ExampleTetherAPI",
    noun="tether",
    doc="A load hung from the base body: pulls it straight down (world -z) by nexus:tetherPull times the world's "
        "drawn tether_pull_scale, and by the fraction tether_cut_remains of that once the tether is cut.",
    params=(positive("pull", "nexus:tetherPull", 1.0, "N", "The load's pull on the base body"),),
    outputs=(Output("tether_pull", wp.float32, recorded=True, doc="The pull this tick [N]"),),
    stage="tether",
    kind="force",
    arrays=(ArrayDecl("pull", "float32, one element", "N", "The pull the kernel reads", gradient=True,
                      rollout="tether.pull", param="pull"),),
)
#: What it reads of each world's draws.
TETHER_DRAWS = (
    Drawn("tether_pull_scale", "-", "multiplies the tether's pull", "> 0", accepts=drawn.positive),
    Drawn("tether_cut_time", "s", "sim time the tether is cut (inf: never)", ">= 0", allow_inf=True,
          accepts=drawn.non_negative),
    Drawn("tether_cut_remains", "-", "the fraction of the pull left once cut; default 0", "in [0, 1]",
          accepts=drawn.unit_interval),
)
#: ``[[fault]] kind = "tether_cut"``: from ``at`` on, the pull is ``remains`` times what it was.
TETHER_CUT = Fault("tether_cut", "the tether is cut; what is left of its pull stays", time="tether_cut_time",
                   keys=(FaultKey("remains", "tether_cut_remains", "-", "the fraction of the pull left", 0.0,
                                  allowed=drawn.unit_interval),))


@wp.kernel
def pull_down(time_ns: wp.array(dtype=wp.int64), pull: wp.array(dtype=wp.float32),
              scale: wp.array(dtype=wp.float32), cut_ns: wp.array(dtype=wp.int64),
              remains: wp.array(dtype=wp.float32), base: wp.int32, bodies_per_world: wp.int32,
              body_f: wp.array(dtype=wp.spatial_vector), applied: wp.array(dtype=wp.float32)):
    world = wp.tid()
    force = pull[0] * scale[world]
    if time_ns[world] >= cut_ns[world]:
        force = force * remains[world]
    body = base + world * bodies_per_world
    body_f[body] = body_f[body] + wp.spatial_vector(wp.vec3(0.0, 0.0, -force), wp.vec3(0.0))
    applied[world] = force


@wp.kernel
def copy_pull(applied: wp.array(dtype=wp.float32), pulled: wp.array(dtype=wp.float32)):
    world = wp.tid()
    pulled[world] = applied[world]


class Tether(Component):
    """The load's pull on the base body, one kernel a tick over the worlds (see the spec's doc)."""

    spec = TETHER_SPEC

    def __init__(self, name: str, plant, pull: float):
        super().__init__(name)
        self.plant, self.pull = plant, float(pull)

    @classmethod
    def from_prim(cls, prim, values, ctx) -> Tether:
        return cls(str(prim.GetPath()), ctx.plant, values["pull"])

    def stages(self) -> list[Stage]:
        # The force reads the clock, for the cut's time; a second stage records the pull it applied (a force
        # stage with no output: a taped rollout keeps it whether or not anything reads what it writes).
        return [Stage(self.spec.stage, self.spec.kind, self.run, reads=(Read("time_ns", wp.int64, (1,)),)),
                Stage("tether_gauge", "sensor", self.record, writes=self.writes())]

    def prepare(self, ctx) -> None:
        device = ctx.device
        self.arrays = NamedArrays(f"tether {self.name}", TETHER_SPEC.arrays,
                                  pull=wp.array([self.pull], dtype=wp.float32, device=device))
        self.scale = wp.array(ctx.varied("tether_pull_scale", 1.0).astype(np.float32), dtype=wp.float32,
                              device=device)
        self.cut_ns = wp.array([at_ns(t) for t in ctx.varied("tether_cut_time", math.inf)], dtype=wp.int64,
                               device=device)
        self.remains = wp.array(ctx.varied("tether_cut_remains", 0.0).astype(np.float32), dtype=wp.float32,
                                device=device)
        self.applied = wp.zeros(ctx.worlds, dtype=wp.float32, device=device)

    def fault_clocks(self) -> dict:
        """The cut's time per world [ns], for a ``when`` fault (the trigger writes its firing time here)."""
        return {"tether_cut": [self.cut_ns]}

    def run(self, io) -> None:
        plant = self.plant
        wp.launch(pull_down, plant.worlds,
                  inputs=[io["time_ns"], self.arrays.pull, self.scale, self.cut_ns, self.remains, plant.base,
                          plant.bodies_per_world],
                  outputs=[plant.state.body_f, self.applied], device=io.device)

    def record(self, io) -> None:
        wp.launch(copy_pull, self.plant.worlds, inputs=[self.applied], outputs=[io["tether_pull"]], device=io.device)


# -- the test's vehicle: the Astro Max with a tether prim ----------------------------------------------------

VEHICLE = """#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [
        @BASE@
    ]
    upAxis = "Z"
)

over "vehicle"
{
    over "body"
    {
        over "base"
        {
            def Scope "Tether" (
                prepend apiSchemas = ["ExampleTetherAPI"]
            )
            {
                float nexus:tetherPull = PULL
            }
        }
    }
}
"""
PRIM = "/vehicle/body/base/Tether"


def vehicle_file(folder: Path, pull: str = str(PULL), name: str = "tethered") -> Path:
    path = folder / f"{name}.usda"
    path.write_text(VEHICLE.replace("BASE", str(ROOT / "vehicles" / "astro_max_base.usda")).replace("PULL", pull))
    return path


@pytest.fixture(scope="module", autouse=True)
def declared():
    """What importing the component's module does (the decorators above its class), undone after the module."""
    draws(*TETHER_DRAWS)(Tether)
    declare_faults(TETHER_CUT)(Tether)
    catalog.register(Tether)
    yield
    catalog.withdraw(Tether)
    faults.withdraw(Tether)
    drawn.withdraw(Tether)


@pytest.fixture(scope="module")
def vehicle(tmp_path_factory) -> Path:
    return vehicle_file(tmp_path_factory.mktemp("vehicle"))


# -- the schema --------------------------------------------------------------------------------------------

def test_the_generator_writes_the_spec_s_schema(tmp_path):
    assert TETHER_SPEC.check() == []
    for name, text in render([catalog.Entry(TETHER_SPEC, "tests.test_adding_a_component:Tether")]).items():
        (tmp_path / name).write_text(text)
    usda = (tmp_path / "generatedSchema.usda").read_text()
    assert 'class "ExampleTetherAPI" (' in usda
    assert "float nexus:tetherPull = 1 (" in usda
    assert 'doc = "The load\'s pull on the base body [N]. Allowed: > 0."' in usda
    index = json.loads((tmp_path / "components.json").read_text())["schemas"]
    assert index == {"ExampleTetherAPI": {"target": "tests.test_adding_a_component:Tether", "abstract": False}}


def test_the_reader_and_the_file_checks_know_its_attribute(tmp_path, vehicle):
    stage = open_stage(vehicle)  # the stage checks take the registered spec's attribute
    assert read_prim(stage.GetPrimAtPath(PRIM), TETHER_SPEC, vehicle) == {"pull": PULL}
    bad = vehicle_file(tmp_path, "-1", "bad")
    with pytest.raises(BuildError) as refused:
        bad_stage = open_stage(bad)  # held: a prim of a stage no one holds has expired
        read_prim(bad_stage.GetPrimAtPath(PRIM), TETHER_SPEC, bad)
    assert str(refused.value) == (f"{bad}: tether prim {PRIM}: nexus:tetherPull is -1 N; it must be > 0 (The load's "
                                  "pull on the base body)")
    misspelt = tmp_path / "misspelt.usda"
    misspelt.write_text(vehicle.read_text().replace("nexus:tetherPull", "nexus:tetherPul"))
    with pytest.raises(BuildError, match="has unknown attribute 'nexus:tetherPul' \\(its schemas "
                                         "\\['ExampleTetherAPI'\\] declare: nexus:tetherPull\\)"):
        open_stage(misspelt)


# -- nexus params ------------------------------------------------------------------------------------------

def test_nexus_params_lists_its_parameter_gradient_and_draws(vehicle):
    table = parameters(vehicle)
    entry = table.resolve(f"{PRIM} nexus:tetherPull")
    assert (entry.unit, entry.bounds, entry.readers, entry.aliases) == ("N", "> 0", ("sweep", "gradient"),
                                                                       ("tether.pull",))
    assert table.resolve("tether.pull", "gradient") is entry
    for name in ("tether_pull_scale", "tether_cut_time", "tether_cut_remains"):
        row = table.resolve(name, "variation")
        assert row.owner == "tests.test_adding_a_component.Tether", name


# -- the gradient ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def rollout(vehicle):
    """1 s from a hover at 1 m, climbing by the altitude reference, with the PID's altitude gains detuned."""
    rollout = Rollout(250, loss="altitude", vehicle=str(vehicle))
    for name, value in {"pid.kp_z": 0.5, "pid.kd_z": 2.0, "pid.ki_z": 0.5}.items():
        rollout.set(name, value)
    return rollout


def test_the_rollout_lists_and_differentiates_its_parameter(rollout):
    assert "tether.pull" in rollout.parameter_names
    assert rollout.get("tether.pull") == PULL
    _, grads = rollout.value_and_gradients(["tether.pull"])
    step = 0.02 * PULL
    rollout.set("tether.pull", PULL + step)
    plus = rollout.forward()
    rollout.set("tether.pull", PULL - step)
    minus = rollout.forward()
    rollout.set("tether.pull", PULL)
    reference = (plus - minus) / (2.0 * step)
    assert abs(reference) > 1e-5  # the pull sags the climb: more pull, more altitude error
    assert grads["tether.pull"] == pytest.approx(reference, rel=0.02)


# -- the scenario fault ------------------------------------------------------------------------------------

SCENARIO = """
name = "tether_cut"
duration = 1.0
vehicle = "VEHICLE"

[[fault]]
kind = "tether_cut"
at = CUT
remains = REMAINS

[[step]]
do = "takeoff"
height = 0.5

[[check]]
measure = "tilt"
max = 30.0
"""


def scenario_file(folder: Path, vehicle: Path, text: str = SCENARIO) -> Path:
    path = folder / "tether_cut.toml"
    path.write_text(text.replace("VEHICLE", str(vehicle)).replace("CUT", str(CUT_S)).replace("REMAINS", str(REMAINS)))
    return path


def test_a_scenario_takes_the_declared_fault_and_checks_its_keys(tmp_path, vehicle):
    scenario = load(scenario_file(tmp_path, vehicle))
    assert scenario.values == {"tether_cut_time": CUT_S, "tether_cut_remains": REMAINS}
    path = scenario_file(tmp_path, vehicle, SCENARIO.replace("remains = REMAINS", "remains = 1.5"))
    with pytest.raises(ScenarioError, match=r"fault\[0\]\.remains: 1\.5 is out of bounds; give at most 1$"):
        load(path)
    path = scenario_file(tmp_path, vehicle, SCENARIO.replace("remains = REMAINS", "left = 0.5"))
    with pytest.raises(ScenarioError, match=r"fault\[0\]\.left: unknown key; fault\[0\] takes kind, at, when, remains$"):
        load(path)
    path = scenario_file(tmp_path, vehicle, SCENARIO.replace('"tether_cut"', '"tether_snap"'))
    with pytest.raises(ScenarioError, match=r"'tether_snap': unknown fault; choose one of imu_bias, rotor, sensor, gps_denied, "
                                            r"tether_cut, link_loss \(PX4\)$"):
        load(path)


def test_the_scenario_flies_and_the_pull_drops_at_the_fault_s_time(tmp_path, vehicle):
    scenario = load(scenario_file(tmp_path, vehicle))
    out = tmp_path / "run"
    run_flight(RunConfig(**scenario.run, scenario=scenario.ring), out, progress=False)
    table = RunFolder(out).record()
    column = next(name for name in table.column_names if name.endswith("tether_pull"))
    pulled = table.column(column).to_numpy().reshape(-1)
    time = table.column("time").to_numpy()
    # Before the cut the file's pull, 2.5 N (no world draws a scale: 1); from the cut on 2.5 x 0.25 = 0.625 N.
    assert set(pulled.tolist()) == {2.5, 0.625}
    first = int(np.argmax(pulled == 0.625))
    assert (pulled[:first] == 2.5).all() and (pulled[first:] == 0.625).all()
    assert time[first] == pytest.approx(CUT_S, abs=TICK_S + 1e-9)


WHEN = SCENARIO.replace("at = CUT", "when = {step = 1}").replace("""[[step]]
do = "takeoff"
""", """[[step]]
do = "hold"
time = 0.3

[[step]]
do = "takeoff"
""")


def test_a_declared_fault_fires_on_a_condition_through_the_part_s_fault_clocks(tmp_path, vehicle):
    scenario = load(scenario_file(tmp_path, vehicle, WHEN))
    assert scenario.ring["triggers"] == [{"fault": 0, "kind": "tether_cut", "target": "tether_cut",
                                          "when": {"step": 1}}]
    out = tmp_path / "run"
    run_flight(RunConfig(**scenario.run, scenario=scenario.ring), out, progress=False)
    table = RunFolder(out).record()
    pulled = table.column(next(n for n in table.column_names if n.endswith("tether_pull"))).to_numpy().reshape(-1)
    fired = table.column("fault_tick/0").to_numpy().reshape(-1)
    # The pull is the file's until the tick the trigger fired the cut (the tick after step 1 began), then a quarter.
    assert ((fired >= 0) == (pulled == 0.625)).all() and ((fired < 0) == (pulled == 2.5)).all()
    assert 0 < int(np.argmax(fired >= 0)) < len(fired) - 1
