"""The rollout carries the air: the vehicle file's drag and ground effect are on its tape.

The Astro Max's drag prim (``vehicles/astro_max_base.usda``) puts a drag stage in the ring, so the rollout runs it
on every tick, and its coefficients are parameters: ``drag.rotor`` (rotor drag) and ``drag.cd.x|y|z`` (body drag
per body axis). Flown sideways (the base starts at 3 m/s east and 2 m/s north, and tracks the figure eight), the
tape's gradients of the loss with respect to them match central differences within 2 %, as the rollout's own
parameters do (``tests/diff/test_gradients.py``), but with steps of 20 % of the coefficient, not 1 %: the body drag
is about 0.3 N against 57 N of thrust, so a 1 % step moves the float32 loss (0.82) by about 1e-4 and its rounding
shows (cd.y: -0.00303 by a 1 % step, -0.00236 by 5 %, -0.00243 by 20 %, -0.00242 on the tape); the loss is
nearly linear in the coefficients, so the larger step's own error is small (cd.x: -0.00762 by 20 %, -0.00764 on
the tape).

Ground effect (``tests/data/astro_max_ground_effect.usda``) starts 0.4 m up, where it adds about 2 % of thrust
(rotors 0.5 m up: 1 / (1 - (0.2667 / 2.0)^2) = 1.018): its stage runs on the tape, the gradient with respect to
the start height (which the ground effect's ratio depends on) and a rotor's kT match central differences, and the
ground effect reads the propellers' kT, so a vehicle whose kT is set to zero has no ground effect left.
"""

from pathlib import Path

import pytest

from nexus.core.errors import BuildError
from nexus.diff import Rollout
from nexus.plant.assets import resolve_asset

DATA = Path(__file__).resolve().parents[1] / "data"
#: 1 s at 250 Hz.
TICKS = 250
TOLERANCE = 0.02
#: Sideways start [m/s, world ENU]: the base's x axis points east, so drag.cd.x and drag.cd.y both act.
SIDEWAYS = {"init.vx": 3.0, "init.vy": 2.0}
DRAG_NAMES = ["drag.rotor", "drag.cd.x", "drag.cd.y"]
#: The ground-effect rollouts start with the base this high [m] (the rotors 0.1 m above it).
LOW = 0.4
GROUND_NAMES = ["init.z", "rotor1.kt"]


def central_difference(rollout: Rollout, name: str, relative_step: float = 0.01) -> float:
    value = rollout.get(name)
    step = relative_step * abs(value)
    rollout.set(name, value + step)
    plus = rollout.forward()
    rollout.set(name, value - step)
    minus = rollout.forward()
    rollout.set(name, value)
    return (plus - minus) / (2.0 * step)


@pytest.fixture(scope="module")
def sideways():
    rollout = Rollout(TICKS, loss="figure8")
    for name, value in SIDEWAYS.items():
        rollout.set(name, value)
    return rollout


def test_the_astro_max_rollout_runs_its_drag_and_names_its_coefficients(sideways):
    assert "drag" in [stage.name for stage in sideways.ring.stages]
    assert set(DRAG_NAMES + ["drag.cd.z"]) <= set(sideways.parameter_names)
    # The vehicle file's values (docs/vehicles.md), read back through the parameters.
    assert sideways.get("drag.rotor") == pytest.approx(0.000561, rel=1e-6)
    assert sideways.get("drag.cd.x") == sideways.get("drag.cd.y") == sideways.get("drag.cd.z") == 1.0
    # Also by the attribute's own name, as nexus params lists it.
    assert sideways.get("/vehicle/body/base/Drag nexus:bodyDragCoefficient[1]") == 1.0


def test_the_drag_changes_the_loss(sideways):
    loss = sideways.forward()
    values = {name: sideways.get(name) for name in DRAG_NAMES}
    try:
        for name in DRAG_NAMES:
            sideways.set(name, 0.0)
        still = sideways.forward()
    finally:
        for name, value in values.items():
            sideways.set(name, value)
    assert abs(loss - still) > 1e-3 * still


@pytest.fixture(scope="module")
def drag_gradients(sideways):
    return sideways.value_and_gradients(DRAG_NAMES)[1]


@pytest.mark.parametrize("name", DRAG_NAMES)
def test_gradients_with_respect_to_the_drag_coefficients_match_central_differences(sideways, drag_gradients, name):
    grads = drag_gradients
    reference = central_difference(sideways, name, relative_step=0.2)
    assert abs(reference) > 1e-6, name  # the coefficient matters to this flight
    assert grads[name] == pytest.approx(reference, rel=TOLERANCE)


@pytest.fixture(scope="module")
def grounded():
    return Rollout(TICKS, vehicle=str(DATA / "astro_max_ground_effect.usda"), start_height=LOW)


@pytest.fixture(scope="module")
def clear():
    return Rollout(TICKS, start_height=LOW)


def test_the_ground_effect_runs_on_the_tape_and_changes_the_loss(grounded, clear):
    assert "ground_effect" in [stage.name for stage in grounded.ring.stages]
    assert "ground_effect" not in [stage.name for stage in clear.ring.stages]
    assert grounded.forward() != clear.forward()


@pytest.fixture(scope="module")
def ground_gradients(grounded):
    return grounded.value_and_gradients(GROUND_NAMES)[1]


@pytest.mark.parametrize("name", GROUND_NAMES)
def test_gradients_through_the_ground_effect_match_central_differences(grounded, ground_gradients, name):
    grads = ground_gradients
    assert grads[name] == pytest.approx(central_difference(grounded, name), rel=TOLERANCE)


def test_the_ground_effect_thrust_follows_the_propellers_kt(grounded, clear):
    # With every kT zero the propellers push nothing, and the ground effect, (ratio - 1) kT omega^2, nothing
    # either: the two vehicles fall alike, bit for bit. A ground effect with a kT of its own would still push.
    kts = [grounded.get(f"rotor{i}.kt") for i in range(1, 5)]
    try:
        for rollout in (grounded, clear):
            for i in range(1, 5):
                rollout.set(f"rotor{i}.kt", 0.0)
        assert grounded.forward() == clear.forward()
    finally:
        for rollout in (grounded, clear):
            for i, kt in enumerate(kts, 1):
                rollout.set(f"rotor{i}.kt", kt)


def test_a_ground_effect_on_some_propellers_only_is_refused_in_one_line(tmp_path):
    vehicle = tmp_path / "one_ground_effect.usda"
    vehicle.write_text(f"""#usda 1.0
(
    defaultPrim = "vehicle"
    kilogramsPerUnit = 1
    metersPerUnit = 1
    subLayers = [@{resolve_asset("vehicle", "astro_max_base")}@]
    upAxis = "Z"
)

over "vehicle"
{{
    over "propeller_2" (prepend apiSchemas = ["NexusGroundEffectAPI"])
    {{
        float nexus:rotorRadius = 0.2667
    }}
}}
""")
    with pytest.raises(BuildError) as refused:
        Rollout(2, vehicle=str(vehicle))
    message = str(refused.value)
    assert "\n" not in message and str(vehicle) in message and "/vehicle/propeller_2" in message
    assert "NexusGroundEffectAPI on every propeller prim" in message
