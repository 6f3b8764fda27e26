"""A crash under PX4 ends as a crash, not as a packing error (issue 43): the impact's specific force, far beyond
HIL_STATE_QUATERNION's int16 milli-g, goes out saturated on the crash's tick, and the run ends ``crashed``.

The x500 is lifted 2 m after start-up and the scripted PX4 answers every motor 0: it falls freely and the crash is
found on tick 161 at 9.80665 · 0.004 · 160 = 6.2763 m/s (worked out in tests/plant/test_crash.py). On that tick
the contact stops a 6.3 m/s fall within a few milliseconds: hundreds of m/s², over 32.767 g.
"""

import json
from dataclasses import replace

import pytest

from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.runtime.run import run_flight
from tests.plant.test_crash import lifted
from tests.px4.test_lockstep import boots_then


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    out = tmp_path_factory.mktemp("px4_crash")
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    flight = build_flight(RunConfig(vehicle="x500", controller="px4", controller_options=options), "cpu")
    peer = ScriptedPx4(flight.vehicle.controller.link.port, boots_then([0.0] * 4))
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=2.0), out, progress=False, flight=flight,
                             watch=lifted([2.0]))
    return summary, json.loads((out / "run.json").read_text()), peer


def test_a_crash_under_px4_ends_crashed_with_its_tick_and_speed(crashed):
    summary, info, _ = crashed
    assert (summary.exit_reason, info["status"], info["error"]) == ("crashed", "finished", None)
    assert info["crash"]["crashed"] == {"tick": 161, "time_s": pytest.approx(0.644),
                                        "speed_m_s": pytest.approx(6.2763, abs=1e-3)}


def test_the_impact_went_to_px4_saturated_on_the_crash_tick(crashed):
    _, info, peer = crashed
    stats = info["controller_stats"]
    assert stats["exchanges"] == 161  # the crash's tick was exchanged too
    assert stats["saturated_fields"].get("HIL_STATE_QUATERNION.zacc", 0) >= 1
    assert set(stats["saturated_fields"]) <= {"HIL_STATE_QUATERNION.xacc", "HIL_STATE_QUATERNION.yacc",
                                              "HIL_STATE_QUATERNION.zacc"}
    assert any("HIL_STATE_QUATERNION.zacc = " in w and "sent saturated as" in w for w in info["warnings"])
