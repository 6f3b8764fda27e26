"""A force stage defined only here joins the rollout's gradients: no edit under ``nexus/diff``.

``LinearDrag`` is a device stage of kind ``force`` that adds F = -c v to the base body's wrench,
as the propellers add theirs (into the plant's ``state.body_f``, reading the plant's
``state.body_qd``). Added to the vehicle's components, the rollout runs it on every tick of its
tape because the ring does: the loss and the gradients change, the gradient with respect to the
drag coefficient itself is no longer absent, and both match central differences as the
rollout's own parameters do (``tests/diff/test_gradients.py``: 2 %; steps of 2 % here, see RELATIVE_STEP).
"""

import pytest
import warp as wp

import nexus.diff.rollout as rollout_module
from nexus.runtime.assembly import assemble
from nexus.core import Component, Stage
from nexus.diff import Rollout

#: 1 s at 250 Hz: hover 0.4 s, then the first 0.6 s of the 1 m climb.
TICKS = 250
#: Drag coefficient [N/(m/s)]: about 0.3 N at the climb's 0.6 m/s, against 1.2 kg of vehicle.
DRAG = 0.5
TOLERANCE = 0.02
#: Central differences of the gains and the mass step by 2 % of the value. The Astro Max carries its own drag now
#: (vehicles/astro_max_base.usda), and pid.kp_z's gradient here is small (-1.88e-4 on a loss of 0.002): steps of
#: 0.5, 1, 2 and 4 % gave -1.942e-4, -1.921e-4, -1.889e-4 and -1.874e-4 against the tape's -1.881e-4, float32
#: rounding at the smaller steps. kd_z and the mass agree at every one of those steps (0.1 % and 0.9 % at 2 %).
RELATIVE_STEP = 0.02
#: Gains detuned so the loss is far from its optimum (as tests/diff/test_gradients.py does).
DETUNED = {"pid.kp_z": 0.5, "pid.kd_z": 2.0, "pid.ki_z": 0.5}
NAMES = ["pid.kp_z", "pid.kd_z", "mass"]


@wp.kernel
def add_linear_drag(body_qd: wp.array(dtype=wp.spatial_vector), body0: wp.int32, bodies_per_world: wp.int32,
                    coefficient: wp.array(dtype=wp.float32), body_f: wp.array(dtype=wp.spatial_vector)):
    world = wp.tid()
    body = body0 + world * bodies_per_world
    velocity = wp.spatial_top(body_qd[body])
    body_f[body] = body_f[body] + wp.spatial_vector(-coefficient[0] * velocity, wp.vec3(0.0))


class LinearDrag(Component):
    """F = -c v on the base body, world frame, at its centre of mass."""

    def __init__(self, name, plant, coefficient):
        super().__init__(name)
        self.plant = plant
        self.coefficient = wp.array([coefficient], dtype=wp.float32, device=plant.device, requires_grad=True)

    def stages(self):
        return [Stage("drag", "force", self._run)]

    def _run(self, io):
        plant = self.plant
        wp.launch(add_linear_drag, plant.worlds,
                  inputs=[plant.state.body_qd, plant.base, plant.bodies_per_world, self.coefficient],
                  outputs=[plant.state.body_f], device=io.device)


def detuned(rollout: Rollout) -> Rollout:
    for name, value in DETUNED.items():
        rollout.set(name, value)
    return rollout


@pytest.fixture(scope="module")
def plain():
    return detuned(Rollout(TICKS, loss="altitude"))


@pytest.fixture(scope="module")
def dragged():
    """The same rollout with the drag among the vehicle's components (added where the rollout assembles it)."""
    patch = pytest.MonkeyPatch()
    made = []

    def with_drag(*args, **kwargs):
        vehicle = assemble(*args, **kwargs)
        drag = LinearDrag("/vehicle/drag", vehicle.plant, DRAG)
        vehicle.components.append(drag)
        made.append(drag)
        return vehicle

    patch.setattr(rollout_module, "assemble", with_drag)
    try:
        rollout = detuned(Rollout(TICKS, loss="altitude"))
    finally:
        patch.undo()
    return rollout, made[0]


def central_difference(rollout, set_value, value, step):
    set_value(value + step)
    plus = rollout.forward()
    set_value(value - step)
    minus = rollout.forward()
    set_value(value)
    return (plus - minus) / (2.0 * step)


def test_the_drag_runs_on_the_tape_and_changes_the_loss_and_the_gradients(plain, dragged):
    rollout, drag = dragged
    assert "drag" in [stage.name for stage in rollout.ring.stages]
    loss, grads = rollout.value_and_gradients(NAMES)
    plain_loss, plain_grads = plain.value_and_gradients(NAMES)
    assert loss != plain_loss
    for name in NAMES:
        assert abs(grads[name] - plain_grads[name]) > 0.01 * abs(plain_grads[name]), name
    assert drag.coefficient.grad is not None and drag.coefficient.grad.numpy()[0] != 0.0


@pytest.mark.parametrize("name", NAMES)
def test_gradients_with_the_drag_match_central_differences(dragged, name):
    rollout, _ = dragged
    _, grads = rollout.value_and_gradients(NAMES)
    value = rollout.get(name)
    reference = central_difference(rollout, lambda v: rollout.set(name, v), value, RELATIVE_STEP * abs(value))
    assert grads[name] == pytest.approx(reference, rel=TOLERANCE)


def test_the_gradient_reaches_the_drag_coefficient(dragged):
    rollout, drag = dragged
    drag.coefficient.grad.zero_()  # the rollout zeroes its own parameters' gradients, not a test's array
    rollout.value_and_gradients(NAMES)
    gradient = float(drag.coefficient.grad.numpy()[0])

    def set_drag(value):
        drag.coefficient.assign([value])

    reference = central_difference(rollout, set_drag, DRAG, 0.01 * DRAG)
    assert reference > 1e-4  # the drag slows the climb: more drag, more tracking error (3.5e-4 by this difference)
    assert gradient == pytest.approx(reference, rel=TOLERANCE)
