"""Many worlds of the six-rotor F550 (vehicles/hexa_f550.usda) with per-rotor draws: each world draws a thrust scale
for each of its six rotors, flies the short mission with the PID, carries its weight on the thrust its scaled rotors
give, and world i of the batch is, bit for bit, world i flown alone (``--world-of RUN:I``).

The hexacopter: 2.0 kg, kT 6.3e-6 N/(rad/s)² at 1116 rad/s (7.846 N a rotor), ESC thrust model factor 0.5.
"""

import numpy as np
import pytest

from tests.worlds.flights import bits_differ, fly

WORLDS = 8
VARIATION = 'thrust_scale = { dist = "uniform", low = 0.9, high = 1.1, per_rotor = true }\n'
#: Σ scale_i · t_i that carries the weight: m g / (kT ω_max²) = 2.0 · 9.80665 / (6.3e-6 · 1116²) = 2.4997.
WEIGHT_IN_FULL_THRUSTS = 2.4997


@pytest.fixture(scope="module")
def flights(tmp_path_factory):
    root = tmp_path_factory.mktemp("hexa_worlds")
    vary = root / "vary.toml"
    vary.write_text(VARIATION)
    batch = fly(root / "batch", "--vehicle", "hexa_f550", "--mission", "short", "--seed", "3", "--worlds", str(WORLDS),
                "--vary", str(vary), "--duration", "12",
                # Hover thrust to 1 % and landing to 5 cm measure the plant and controller, not the estimator:
                # fly on the true state.
                "--estimator", "truth")
    alone = fly(root / "alone", "--world-of", f"{batch.out}:5")
    return batch, alone


def test_every_world_draws_a_thrust_scale_for_each_of_its_six_rotors(flights):
    batch, _ = flights
    scales = np.array([values["thrust_scale"] for values in batch.info["world_values"]])
    assert scales.shape == (WORLDS, 6)
    assert ((0.9 <= scales) & (scales <= 1.1)).all()
    assert len(np.unique(scales)) == WORLDS * 6  # every rotor of every world its own draw
    assert np.allclose(batch.summary["vary.thrust_scale[5]"], scales[:, 5])


def test_each_world_hovers_on_the_thrust_its_scaled_rotors_give_and_lands(flights):
    batch, _ = flights
    scales = [values["thrust_scale"] for values in batch.info["world_values"]]
    for world in range(WORLDS):
        rows = batch.world(world)
        hold = rows[(rows.time > 2.2) & (rows.time < 2.6)]  # the hold at 2 m
        u = hold[[f"controls[{i}]" for i in range(6)]].to_numpy().mean(axis=0)
        fractions = 0.5 * u + 0.5 * u * u  # the ESC's thrust fraction t = (1 − f) u + f u², f = 0.5
        assert np.dot(scales[world], fractions) == pytest.approx(WEIGHT_IN_FULL_THRUSTS, rel=0.01), world
        # The stronger a rotor, the less the controller asks of it: the unequal rotors are flown, not averaged.
        assert np.ptp(fractions) > 0.01, world
    assert (batch.summary.exit_reason == "done").all()
    assert (batch.summary.landing_error < 0.05).all(), batch.summary.landing_error.tolist()


def test_world_five_of_the_batch_is_world_five_flown_alone(flights):
    batch, alone = flights
    assert alone.info["first_world"] == 5 and alone.info["world_values"] == batch.info["world_values"][5:6]
    assert bits_differ(batch.world(5), alone.world(0)) == []
