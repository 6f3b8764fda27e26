"""The taped executor: a built ring's device stages with one copy per tick, gradients through declared and own state.

The toy ring (one world): a plant keeps its position ``x`` in an array of its own (as Newton keeps its
state) and steps ``x <- x + 0.1 u`` with the command ``u`` the controller wrote on the tick before; it
publishes ``position`` = x; the controller integrates ``s <- s + position`` (declared state) and writes
``u = -g position - h s``. From x = 1, s = 0, u = 0, three ticks give positions

    p1 = 1,  p2 = 1 - 0.1 g - 0.1 h,  p3 = p2 (1 - 0.1 g - 0.1 h) - 0.1 h

and with g = 2, h = 1: p2 = 0.7, p3 = 0.39, the loss p1 + p2 + p3 = 2.09, and by hand
dL/dg = -0.1 + (-0.1 * 0.7 - 0.1 * 0.7) = -0.24, dL/dh = -0.1 + (-0.1 * 0.7 - 0.1 * 0.7 - 0.1) = -0.34.
"""

import numpy as np
import pytest
import warp as wp

from nexus.core import Component, Loop, Read, Stage, Write
from nexus.core.errors import BuildError
from nexus.core.spec import Spec, StateVar
from nexus.core.taped import ExternalCopies, TickCopies
from tests.core.toy_parts import NoiseSensor, Part, Recorder, row, source

wp.init()


@wp.kernel
def step_x(x_in: wp.array(dtype=wp.float32), command: wp.array2d(dtype=wp.float32), x_out: wp.array(dtype=wp.float32)):
    x_out[0] = x_in[0] + 0.1 * command[0, 0]


@wp.kernel
def publish_x(x: wp.array(dtype=wp.float32), position: wp.array2d(dtype=wp.float32)):
    position[0, 0] = x[0]


@wp.kernel
def control(position: wp.array2d(dtype=wp.float32), gains: wp.array(dtype=wp.float32),
            s_in: wp.array2d(dtype=wp.float32), s_out: wp.array2d(dtype=wp.float32),
            command: wp.array2d(dtype=wp.float32)):
    p = position[0, 0]
    s = s_in[0, 0] + p
    s_out[0, 0] = s
    command[0, 0] = -gains[0] * p - gains[1] * s


@wp.kernel
def add_to(value: wp.array2d(dtype=wp.float32), loss: wp.array(dtype=wp.float32)):
    wp.atomic_add(loss, 0, value[0, 0])


class PlantCopies(ExternalCopies):
    def __init__(self, plant):
        self.plant = plant

    def boundary(self):
        return wp.zeros(1, dtype=wp.float32, requires_grad=True)

    def bind(self, before, after, scratch, tape):
        self.plant.x_in, self.plant.x_out = before, after

    def start(self, boundary, tape):
        wp.copy(boundary, self.plant.x)

    def carried(self, boundary):
        return {"x": boundary}

    def checkpointed(self, boundary):
        return {"x": boundary}

    def release(self):
        self.plant.x_in = self.plant.x_out = self.plant.x


class ToyPlant(Component):
    """Steps its own ``x`` in place in a flight; one array per tick on a tape (through :class:`PlantCopies`)."""

    def __init__(self, name="/plant"):
        super().__init__(name)
        self.x = wp.array([1.0], dtype=wp.float32, requires_grad=True)
        self.x_in = self.x_out = self.x

    def stages(self):
        return [Stage("step", "step", self._step, reads=(Read("command", wp.float32, (1, 1)),)),
                Stage("state", "state", self._publish, writes=(Write("position", wp.float32, (1, 1)),))]

    def tick_copies(self):
        return PlantCopies(self)

    def _step(self, io):
        wp.launch(step_x, 1, inputs=[self.x_in, io["command"]], outputs=[self.x_out], device=io.device)

    def _publish(self, io):
        wp.launch(publish_x, 1, inputs=[self.x_out], outputs=[io["position"]], device=io.device)


class ToyController(Component):
    spec = Spec(name="ToyController", doc="u = -g p - h s", state=(StateVar("s", wp.float32, (1,)),))

    def __init__(self, name="/controller", gains=(2.0, 1.0)):
        super().__init__(name)
        self.gains = wp.array(gains, dtype=wp.float32, requires_grad=True)

    def stages(self):
        return [Stage("pid", "control", self.run, reads=(Read("position", wp.float32, (1, 1)),),
                      writes=(Write("command", wp.float32, (1, 1)),))]

    def run(self, io):
        wp.launch(control, 1, inputs=[io["position"], self.gains, io.state_in["s"]],
                  outputs=[io.state_out["s"], io["command"]], device=io.device)


def toy_ring(*extra):
    plant, controller = ToyPlant(), ToyController()
    loop = Loop([plant, controller, *extra], mode="eager")
    loop.build()
    return loop, plant, controller


def taped_loss(copies: TickCopies, ticks: int) -> tuple[wp.array, wp.Tape]:
    loss = wp.zeros(1, dtype=wp.float32, requires_grad=True)
    tape = wp.Tape()
    with tape:
        copies.start(tape)
        for k in range(ticks):
            copies.tick(k, tape=tape)
            wp.launch(add_to, 1, inputs=[copies.signal("position", k + 1)], outputs=[loss])
    return loss, tape


def test_the_gradient_reaches_a_parameter_through_declared_state_and_a_components_own_state():
    loop, plant, controller = toy_ring()
    copies = TickCopies(loop, 3)
    loss, tape = taped_loss(copies, 3)
    tape.backward(loss=loss)
    assert loss.numpy()[0] == pytest.approx(2.09, rel=1e-6)
    assert [copies.signal("position", k).numpy()[0, 0] for k in (1, 2, 3)] == pytest.approx([1.0, 0.7, 0.39], rel=1e-6)
    assert controller.gains.grad.numpy() == pytest.approx([-0.24, -0.34], rel=1e-5)
    # The gradient reaches the start of the plant's own state too: every position is linear in x0 (p1 = x0,
    # p2 = 0.7 x0, s2 = 1.7 x0, p3 = 0.7 x0 - 0.1 (2 * 0.7 + 1.7) x0 = 0.39 x0), so dL/dx0 = 2.09.
    assert plant.x.grad.numpy()[0] == pytest.approx(2.09, rel=1e-5)
    copies.release()
    assert plant.x_in is plant.x and plant.x_out is plant.x


def test_a_taped_run_writes_the_bits_a_flight_writes_tick_by_tick():
    loop, _, controller = toy_ring()
    copies = TickCopies(loop, 5)
    copies.start()
    for k in range(5):
        copies.tick(k)
    taped = [copies.signal("position", k + 1).numpy().tobytes() for k in range(5)]
    states = [copies.state(controller, "s", k + 1).numpy().tobytes() for k in range(5)]
    copies.release()
    flown, flown_states = [], []
    for _ in range(5):
        loop.tick()
        flown.append(loop.output("position").numpy().tobytes())
        flown_states.append(loop.states.of(controller)["s"].numpy().tobytes())
    assert taped == flown and states == flown_states


def test_stages_nothing_needs_are_left_out_and_the_clock_is_given_as_tables():
    noise, recorder = NoiseSensor(), Recorder(4)
    unread = source("/vehicle/unread", "spare", 3.0)
    loop, _, _ = toy_ring(noise, recorder, unread)
    copies = TickCopies(loop, 4)
    # The recorder is a record stage; the noise is read only by it; nothing reads "spare".
    assert [s.name for s in copies.stages] == ["step", "state", "pid"]
    wanted = TickCopies(loop, 4, wanted=["spare"])
    assert [s.name for s in wanted.stages] == ["step", "state", "unread", "pid"]
    # An output that no running stage reads and the caller does not want keeps the ring's one buffer.
    both = Part("/both", Stage("both", "sensor", lambda io: None, writes=(row("a", 1), row("b", 1))))
    two = Loop([both], mode="eager")
    two.build()
    copies = TickCopies(two, 2, wanted=["a"])
    assert copies.signal("b", 1) is copies.signal("b", 2) is two.output("b")
    assert copies.signal("a", 1) is not copies.signal("a", 2) and copies.signal("a", 1) is not two.output("a")
    tables = loop.clock.tables(3, 2, "cpu")
    assert tables["tick"].numpy().tolist() == [[1, 1], [2, 2], [3, 3]]
    assert tables["time_ns"].numpy()[:, 0].tolist() == [4_000_000, 8_000_000, 12_000_000]
    assert tables["time"].numpy()[:, 1].tolist() == [0.004, 0.008, 0.012]
    assert tables["running"].numpy().tolist() == [[1, 1]] * 3


def test_a_stage_whose_outputs_are_given_only_in_part_is_refused():
    both = Part("/both", Stage("both", "sensor", lambda io: None, writes=(row("a", 1), row("b", 1))))
    loop = Loop([both], mode="eager")
    loop.build()
    with pytest.raises(BuildError, match=r"stage 'both' \(sensor\) of '/both' writes \['a'\], which are given as "
                                         r"tables, and also \['b'\]; give all of its outputs or none"):
        TickCopies(loop, 2, given={"a": wp.zeros((2, 1, 1), dtype=wp.float32)})


def test_checkpointed_names_what_a_tick_reads_before_writing():
    loop, plant, controller = toy_ring()
    copies = TickCopies(loop, 3)
    # The command (read by the plant's step before the controller writes it), the integrator, the plant's x.
    carried = [name for name, _ in copies.carried(1)]
    assert carried == ["signal:/controller:command", "state:/controller:s", "external:/plant:x"]
    kept = copies.checkpointed(2)
    assert [a.ptr for a in kept] == [copies.signal("command", 2).ptr, copies.state(controller, "s", 2).ptr,
                                     copies.external(plant, boundary=2).ptr]


def test_a_component_with_declared_state_and_two_running_stages_is_refused_in_one_line():
    class TwoStages(ToyController):
        def stages(self):
            return [*super().stages(), Stage("again", "record", lambda io: None),
                    Stage("check", "control", lambda io: None, writes=(Write("spare", wp.float32, (1, 1)),))]

    loop = Loop([ToyPlant(), TwoStages()], mode="eager")
    loop.build()
    with pytest.raises(BuildError, match=r"^component '/controller' declares state and runs 2 stages \(pid, check\); "
                                         r"a taped run gives a component's state one copy per tick, so keep its "
                                         r"state in one stage$"):
        TickCopies(loop, 2, wanted=["spare"])
    # Nothing reads "spare": the second stage is left out, and the ring runs on a tape.
    assert [s.name for s in TickCopies(loop, 2).stages] == ["step", "state", "pid"]
