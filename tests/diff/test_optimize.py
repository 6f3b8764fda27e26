"""``nexus optimize``: from altitude gains detuned to a third, Adam halves the loss within 30 steps, and the tuned
gains fly the normal captured MuJoCo short mission to "done" with a smaller altitude error than the detuned ones."""

import json
import os
import signal

import pytest
from click.testing import CliRunner

from nexus.cli import main
from nexus.diff import Rollout

STEPS = 6


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    out = tmp_path_factory.mktemp("optimize") / "opt"
    result = CliRunner().invoke(main, ["optimize", "--params", "pid.kp_z,pid.kd_z", "--loss", "altitude",
                                       "--detune", "0.3333", "--steps", str(STEPS), "--lr", "0.3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out, json.loads((out / "tuned.json").read_text()), result.output


def test_adam_halves_the_altitude_loss_from_gains_detuned_to_a_third(tuned):
    _, result, output = tuned
    assert result["start"]["pid.kp_z"] == pytest.approx(0.3333, rel=1e-5)  # the vehicle's 1.0, detuned
    assert result["start"]["pid.kd_z"] == pytest.approx(4.0 * 0.3333, rel=1e-5)
    assert result["loss_tuned"] <= 0.5 * result["loss_start"]
    assert output.count(" loss ") >= STEPS + 1  # one line per step, with its loss


def test_the_tuned_gains_fly_the_mission_to_done_with_less_altitude_error(tuned):
    _, result, _ = tuned
    start, tuned_flight = result["flight_start"], result["flight_tuned"]
    assert tuned_flight["exit_reason"] == "done"
    assert tuned_flight["altitude_rms_m"] < start["altitude_rms_m"]


def test_the_tuned_values_are_a_layer_over_the_vehicle_and_a_curve(tuned):
    out, result, _ = tuned
    layer = (out / "tuned" / "vehicle.usda").read_text()
    assert "astro_max_base.usda" in layer and "nexus:positionP" in layer and "nexus:velocityP" in layer
    assert (out / "loss.png").stat().st_size > 0
    rows = (out / "loss.csv").read_text().splitlines()
    assert rows[0] == "step,loss,grad_norm,pid.kp_z,pid.kd_z"
    assert len(rows) == STEPS + 2


def test_a_parameter_no_vehicle_file_holds_is_refused_in_one_line(tmp_path):
    result = CliRunner().invoke(main, ["optimize", "--params", "init.z", "--steps", "1", "--out", str(tmp_path / "x")])
    assert result.exit_code != 0
    assert "--params init.z: optimize tunes what a vehicle file holds" in result.output


def test_sigterm_during_the_descent_keeps_the_best_values_so_far_and_ends_143(tmp_path, monkeypatch):
    """A real SIGTERM at the fourth measurement: the three rows measured are the curve, the best of them the tuned
    layer, tuned.json says why it stopped, and no mission is flown."""
    measured = Rollout.value_and_gradients
    calls = []

    def stopped_at_the_fourth(self, names):
        calls.append(names)
        if len(calls) == 4:
            # Only with nexus's handler in place: the default one would end this test process.
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, None), "SIGTERM is not handled here"
            os.kill(os.getpid(), signal.SIGTERM)
        return measured(self, names)

    monkeypatch.setattr(Rollout, "value_and_gradients", stopped_at_the_fourth)
    out = tmp_path / "opt"
    result = CliRunner().invoke(main, ["optimize", "--params", "pid.kp_z", "--detune", "0.5", "--steps", "30",
                                       "--duration", "0.5", "--out", str(out)])
    assert result.exit_code == 143, result.output
    assert "terminated after step 2 of 30: the best values so far are the tuned layer" in result.output
    rows = (out / "loss.csv").read_text().splitlines()
    assert rows[0] == "step,loss,grad_norm,pid.kp_z" and len(rows) == 4  # steps 0, 1 and 2
    losses = [float(row.split(",")[1]) for row in rows[1:]]
    best = rows[1 + losses.index(min(losses))].split(",")
    saved = json.loads((out / "tuned.json").read_text())
    assert saved["stopped"] == "terminated" and saved["steps_done"] == 2
    assert saved["tuned"]["pid.kp_z"] == pytest.approx(float(best[3]), rel=1e-6)  # the rollout holds float32
    assert "nexus:positionP" in (out / "tuned" / "vehicle.usda").read_text()
    assert not (out / "flight_start").exists() and not (out / "flight_tuned").exists()
