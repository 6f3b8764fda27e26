"""The spec machinery on a toy component: parameters and bounds, ports, and engine-owned state."""

import numpy as np
import pytest
import warp as wp

from nexus.core import Component, Loop, RunError
from nexus.core.spec import Input, Output, Param, Spec, StateVar
from tests.core.toy_parts import host_stage


@wp.kernel
def accumulate(
    step: wp.float32,
    total_in: wp.array2d(dtype=wp.float32),
    total_out: wp.array2d(dtype=wp.float32),
    out: wp.array2d(dtype=wp.float32),
):
    world = wp.tid()
    total = total_in[world, 0] + step
    total_out[world, 0] = total
    out[world, 0] = total


COUNTER = Spec(
    name="Counter",
    doc="Adds its step to a running total each tick.",
    params=(Param("step", "toy:step", "float", 0.5, "m", "Added each tick", low=0.0, open_low=True),),
    outputs=(Output("total", wp.float32, (1, 1), recorded=True),),
    state=(StateVar("total", wp.float32, (1,), reset=lambda counter, ctx: counter.start),),
    stage="count",
    kind="sensor",
)


class Counter(Component):
    spec = COUNTER

    def __init__(self, name: str, step: float = 0.5, start: float = 10.0):
        super().__init__(name)
        self.step, self.start = float(step), float(start)

    def run(self, io) -> None:
        wp.launch(accumulate, 1, inputs=[self.step, io.state_in["total"], io.state_out["total"]],
                  outputs=[io["total"]], device=io.device)


def total(loop) -> float:
    return float(loop.output("total").numpy()[0, 0])


def test_the_default_stage_comes_from_the_spec_and_outputs_keep_their_recorded_flag():
    (stage,) = Counter("/toy/counter").stages()
    assert (stage.name, stage.kind, stage.host) == ("count", "sensor", False)
    assert [(w.signal, w.shape, w.recorded) for w in stage.writes] == [("total", (1, 1), True)]


def test_state_is_allocated_per_world_reset_from_the_component_and_advanced_in_place():
    loop = Loop([Counter("/toy/counter", step=0.25, start=10.0)], device="cpu").build()
    (array,) = loop.states.arrays().values()
    assert array.shape == (1, 1)  # (worlds, *shape)
    assert float(array.numpy()[0, 0]) == 10.0  # the callable reset
    loop.run(4)
    assert total(loop) == 11.0  # 10 + 4 x 0.25, exact in float32
    loop.reset_state()
    loop.run(1)
    assert total(loop) == 10.25


def test_a_snapshot_restores_state_signals_and_the_tick_count():
    loop = Loop([Counter("/toy/counter", step=1.0, start=0.0)], device="cpu").build()
    loop.run(3)
    snapshot = loop.snapshot()
    loop.run(5)
    assert (loop.ticks, total(loop)) == (8, 8.0)
    loop.restore(snapshot)
    assert (loop.ticks, total(loop)) == (3, 3.0)
    loop.run(5)
    assert (loop.ticks, total(loop)) == (8, 8.0)


def test_a_ring_with_a_host_stage_refuses_a_snapshot_naming_it():
    loop = Loop([Counter("/toy/counter"), host_stage("planner", kind="guide")], device="cpu").build()
    with pytest.raises(RunError, match="host stages: host stage 'planner'"):
        loop.snapshot()


def test_a_separate_state_out_leaves_the_input_state_untouched():
    # What a differentiable caller does: one state array per step.
    counter = Counter("/toy/counter", step=2.0)
    state_in = wp.array(np.array([[5.0]], dtype=np.float32), dtype=wp.float32)
    state_out = wp.zeros((1, 1), dtype=wp.float32)
    out = wp.zeros((1, 1), dtype=wp.float32)
    wp.launch(accumulate, 1, inputs=[counter.step, state_in, state_out], outputs=[out], device="cpu")
    assert (float(state_in.numpy()[0, 0]), float(state_out.numpy()[0, 0])) == (5.0, 7.0)


@pytest.mark.parametrize("value, why", [
    (0.0, "must be > 0"),
    (-1.0, "must be > 0"),
    (float("nan"), "must be finite"),
    (float("inf"), "must be finite"),
])
def test_a_parameter_names_its_bound(value, why):
    assert why in COUNTER.param("step").problem(value)


def test_a_derived_spec_overrides_a_base_parameter_in_place_and_inherits_the_rest():
    base = Spec("Base", "b", params=(Param("rate", "toy:rate", "float", 0.0, "Hz", "r", low=0.0),
                                     Param("noise", "toy:noise", "bool", True)),
                inputs=(Input("time", wp.float64),), state=(StateVar("schedule", wp.int64, (3,)),))
    derived = Spec("Derived", "d", bases=(base,), params=(Param("rate", "toy:rate", "float", 50.0, "Hz", "r", low=0.0),
                                                           Param("range", "toy:range", "float", 14.0, "m")))
    assert [(p.attr, p.default) for p in derived.all_params] == [("toy:rate", 50.0), ("toy:noise", True), ("toy:range", 14.0)]
    assert [i.signal for i in derived.all_inputs] == ["time"]
    assert [s.name for s in derived.all_state] == ["schedule"]
    assert derived.check() == []


def test_a_derived_spec_takes_kind_sampler_and_noun_from_its_base_unless_it_sets_them():
    base = Spec("Base", "b", kind="sensor", sampler=True, noun="sensor", abstract=True)
    plain = Spec("Plain", "p", bases=(base,), stage="range")
    assert (plain.kind, plain.sampler, plain.noun) == ("sensor", True, "sensor")
    own = Spec("Own", "o", bases=(base,), stage="truth", kind="estimate", sampler=False, noun="estimator")
    assert (own.kind, own.sampler, own.noun) == ("estimate", False, "estimator")
    alone = Spec("Alone", "a")
    assert (alone.kind, alone.sampler, alone.noun) == (None, False, "component")


def test_a_declaration_with_a_default_out_of_bounds_or_a_parameter_twice_is_reported():
    bad = Spec("Bad", "b", params=(Param("gain", "toy:gain", "float", -1.0, low=0.0),
                                   Param("gain2", "toy:gain", "float", 1.0),
                                   Param("offset", "toy:offset", "float", -2.0, low=0.0)))
    problems = bad.check()
    assert any("toy:gain is declared twice" in p for p in problems)
    assert any("the default of toy:offset (-2.0) must be >= 0" in p for p in problems)


#: A toy parameter bounded on both sides, both ends allowed: [0, 1]. A vector checks every component.
DAMPED = Spec("Damped", "Keeps a share of its step.", noun="toy", params=(
    Param("share", "toy:share", "float", 0.5, "-", "Share of the step kept", low=0.0, high=1.0),
    Param("weights", "toy:weights", "float3", (0.5, 0.5, 0.5), "-", "Per-axis weights", low=0.0, high=1.0),
))


def _read_damped(attr: str, value) -> dict:
    """``read_prim`` of a /toy/damped prim in toy.usda authoring ``attr`` = ``value`` (the rest at their defaults)."""
    from pxr import Gf, Sdf, Usd

    from nexus.schemas.reader import read_prim

    stage = Usd.Stage.CreateInMemory()  # kept alive while the prim is read
    prim = stage.DefinePrim("/toy/damped", "Scope")
    if isinstance(value, tuple):
        prim.CreateAttribute(attr, Sdf.ValueTypeNames.Float3).Set(Gf.Vec3f(*value))
    else:
        prim.CreateAttribute(attr, Sdf.ValueTypeNames.Float).Set(value)
    return read_prim(prim, DAMPED, "toy.usda")


@pytest.mark.parametrize("attr, value, message", [
    ("toy:share", 1.25, "toy.usda: toy prim /toy/damped: toy:share is 1.25; it must be in [0, 1] (Share of the step kept)"),
    ("toy:weights", (0.5, 1.5, 0.0),
     "toy.usda: toy prim /toy/damped: toy:weights is (0.5, 1.5, 0); it must be in [0, 1] (Per-axis weights)"),
])
def test_a_value_above_a_parameters_maximum_is_refused_naming_the_attribute_and_the_bound(attr, value, message):
    from nexus.core.errors import BuildError

    with pytest.raises(BuildError) as caught:
        _read_damped(attr, value)
    assert str(caught.value) == message


def test_a_value_exactly_at_a_parameters_maximum_is_accepted_and_the_maximum_is_inclusive():
    assert _read_damped("toy:share", 1.0)["share"] == 1.0
    assert _read_damped("toy:weights", (1.0, 1.0, 1.0))["weights"] == (1.0, 1.0, 1.0)
    share = DAMPED.param("share")
    assert share.problem(1.0) is None
    assert share.problem(1.0 + 2.0**-52) == "must be in [0, 1]"  # the next double above 1
