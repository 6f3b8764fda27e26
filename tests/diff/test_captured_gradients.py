"""The taped forward and the backward pass replayed as captured graphs give the eager tape's loss and gradients.

A rollout captures its taped forward on the second call and its backward pass on the second
backward call, and replays both from the third on. Each call below changes two parameters
first, so a replay that kept a stale value (or a gradient left from the call before) shows.
"""

import pytest

from nexus.diff import Rollout

NAMES = ["pid.kp_z", "pid.kd_z", "pid.rate_p.x", "mass", "rotor1.kt", "esc.tau_up", "init.vz"]
#: (factor on pid.kp_z, factor on rotor1.kt) for each call.
CALLS = [(1.0, 1.0), (1.3, 0.97), (0.8, 1.02), (1.1, 1.0)]


def calls(rollout: Rollout) -> list[tuple[float, dict[str, float]]]:
    kp, kt = rollout.get("pid.kp_z"), rollout.get("rotor1.kt")
    out = []
    for kp_factor, kt_factor in CALLS:
        rollout.set("pid.kp_z", kp * kp_factor)
        rollout.set("rotor1.kt", kt * kt_factor)
        out.append(rollout.value_and_gradients(NAMES))
    rollout.set("pid.kp_z", kp)
    rollout.set("rotor1.kt", kt)
    return out


@pytest.mark.parametrize("loss, options", [
    ("altitude", {}),
    ("figure8", {"window": 12}),
    ("altitude", {"checkpoint": 12}),
], ids=["altitude", "figure8-windowed", "checkpointed"])
def test_replayed_graphs_give_the_eager_tapes_loss_and_gradients_bit_for_bit(loss, options):
    eager = Rollout(32, loss=loss, capture=False, **options)
    captured = Rollout(32, loss=loss, **options)
    expected, got = calls(eager), calls(captured)
    assert captured.captured == {"tape", "backward"}  # the last two calls replayed both graphs
    for (value, grads), (value_c, grads_c) in zip(expected, got):
        assert value_c == value
        assert grads_c == grads
    # The gradients moved with the parameters (a replay that ignored the new values would repeat one).
    assert len({grads["pid.kd_z"] for _, grads in got}) == len(CALLS)
    assert all(grads[name] != 0.0 for _, grads in got for name in ("pid.kp_z", "mass", "rotor1.kt"))
    # A plain forward (its own graph) between taped calls changes nothing the taped graphs replay.
    for rollout in (eager, captured):
        rollout.forward()
        rollout.forward()
    assert captured.value_and_gradients(NAMES) == eager.value_and_gradients(NAMES)
