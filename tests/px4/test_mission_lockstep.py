"""The built-in mission flown from inside the lockstep loop, against the scripted PX4 and its API stream.

Each command is due at a time of PX4's clock and goes out before the
HIL_SENSOR of its due tick; the clock holds until PX4 has it. The scripted
peer notes the clock each command arrived at: always the tick before, so
no HIL_SENSOR went out between the command and PX4 taking it.
"""

import json
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.px4 import api_link
from nexus.px4.errors import CommandRefusedError, CommandUnacknowledgedError
from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from tests.px4.test_lockstep import HOVER, boots_then, px4_flight

TICK_US = 4000
#: A short mission: arm at 0.5 s (the toy reports home at 0.2 s), takeoff 0.2 s later to 1 m, the first yaw
#: 1.3 s after the takeoff (the toy climbs at 1 m/s), the others and the landing 0.3 s apart, the end 1.5 s after.
PLAN = {"altitude": 1.0, "hold_s": 0.3, "yaw_hold_s": 0.3, "arm_at_s": 0.5, "takeoff_delay_s": 0.2, "climb_s": 1.0,
        "land_s": 1.5}
ARM, TAKEOFF, REPOSITION, LAND = 400, 22, 192, 21
#: What the toy says in the module's flight: a failsafe at 1.004 s, when its 25 Hz telemetry (first sent at
#: 0.004 s, then every 0.04 s) stamps PX4's stream with 1004 ms just before the text.
SAID = {1.004: "Failsafe activated: Autoland"}


def fly_mission(out, seconds=8.0, api=None, answer_timeout=5.0, silent=3):
    mission = {"url": "udpin:127.0.0.1:0", **PLAN}
    flight, px4 = px4_flight(mission=mission, answer_timeout=answer_timeout, boot_patience=0.5)
    toy = ScriptedApi(px4.commander.link.port, **(api or {}))
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=silent), api=toy)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), out, progress=False,
                             flight=flight)
    return summary, px4, toy


def run_info(out):
    return json.loads((out / "run.json").read_text())


@pytest.fixture(scope="module")
def mission(tmp_path_factory):
    out = tmp_path_factory.mktemp("mission")
    return (out, *fly_mission(out, api={"say": SAID}))


def test_the_mission_flies_to_the_end_and_ends_the_run(mission):
    out, summary, px4, toy = mission
    assert summary.exit_reason == "done"
    report = run_info(out)["controller_stats"]["mission"]
    assert report["landed_disarmed"] and [c["result"] for c in report["commands"]] == [0] * 6
    # Every command went on its due tick (none waited for a late condition) and PX4 took each at the tick before.
    assert report["late_commands"] == 0 and report["clock_mismatches"] == 0
    assert [c for c, _, _ in toy.commands] == [ARM, TAKEOFF, REPOSITION, REPOSITION, REPOSITION, LAND]


def test_each_command_goes_on_its_due_tick_while_px4s_clock_stands_still(mission):
    out, _, px4, toy = mission
    commands = run_info(out)["controller_stats"]["mission"]["commands"]
    # The arm is due at 0.5 s = tick 125 (tick k sends time_usec 4000·k; the toy reported home at
    # 0.2 s), the takeoff 0.2 s later at 0.7 s = tick 175, the first yaw 1.3 s after that, at tick 500.
    assert [c["tick"] for c in commands[:3]] == [125, 175, 500]
    for command, (_, clock_us, _) in zip(commands, toy.commands):
        # The command left before its tick's HIL_SENSOR and PX4 had it before that message:
        # its clock still stood at the tick before.
        assert clock_us == (command["tick"] - 1) * TICK_US
        assert command["sent_s"] * 1e6 == pytest.approx(command["tick"] * TICK_US)
        assert command["sent_s"] >= command["due_s"] > command["sent_s"] - TICK_US * 1e-6
    # The yaws follow each other by yaw_hold_s (0.3 s = 75 ticks), and the landing the last yaw.
    ticks = [c["tick"] for c in commands[2:]]
    assert np.diff(ticks).tolist() == [75, 75, 75]


def test_a_peer_that_answers_late_still_gets_each_command_on_the_same_tick(mission, tmp_path):
    out, _, _, toy = mission
    summary, _, late = fly_mission(tmp_path, api={"late_s": 0.15})
    assert summary.exit_reason == "done"
    assert [(c, t) for c, t, _ in late.commands] == [(c, t) for c, t, _ in toy.commands]
    assert run_info(tmp_path)["controller_stats"]["mission"]["holds"] >= 6


def test_two_mission_flights_are_identical_bit_for_bit(mission, tmp_path):
    out, summary, _, _ = mission
    again, _, _ = fly_mission(tmp_path)
    a, b = pq.read_table(out / "record.parquet"), pq.read_table(tmp_path / "record.parquet")
    assert again.ticks == summary.ticks and a.num_rows == b.num_rows == summary.ticks
    assert a.column_names == b.column_names
    for name in a.column_names:
        assert a.column(name).to_numpy().tobytes() == b.column(name).to_numpy().tobytes(), name
    first = [(c["name"], c["tick"]) for c in run_info(out)["controller_stats"]["mission"]["commands"]]
    second = [(c["name"], c["tick"]) for c in run_info(tmp_path)["controller_stats"]["mission"]["commands"]]
    assert first == second


def test_a_command_px4_never_acknowledges_ends_the_run_naming_it(tmp_path):
    with pytest.raises(CommandUnacknowledgedError, match=r"never acknowledged MAV_CMD_NAV_TAKEOFF \(takeoff\), sent on tick 175"):
        fly_mission(tmp_path, api={"never_ack": (TAKEOFF,)}, answer_timeout=0.5)
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-command-unacknowledged"
    # The takeoff went on tick 175; its acknowledgement was due 1 s (250 ticks) later, where the clock held.
    assert info["ticks"] == 175 + 250 - 1
    assert pq.read_table(tmp_path / "record.parquet").num_rows == info["ticks"]


def test_a_refused_arm_ends_the_run_with_px4s_result_and_reason(tmp_path):
    refuse = {ARM: (1, "Preflight Fail: heading estimate not stable")}
    with pytest.raises(CommandRefusedError, match=r"refused MAV_CMD_COMPONENT_ARM_DISARM \(arm\), sent on tick 125"
                       r".*MAV_RESULT_TEMPORARILY_REJECTED \(1\).*heading estimate not stable"):
        fly_mission(tmp_path, api={"refuse": refuse})
    info = run_info(tmp_path)
    assert info["exit_reason"] == "px4-command-refused" and "heading estimate not stable" in info["error"]
    assert pq.read_table(tmp_path / "record.parquet").num_rows == info["ticks"]


def test_a_flood_of_udp_traffic_does_not_lose_an_acknowledgement(tmp_path):
    # 3000 datagrams in one burst before every acknowledgement, while the sim waits on TCP for
    # the tick's answer (nothing drains the UDP socket then): ~2.3 MB of kernel buffer.
    summary, px4, toy = fly_mission(tmp_path, api={"flood": 3000})
    stats = run_info(tmp_path)["controller_stats"]["mission"]
    assert summary.exit_reason == "done" and [c["result"] for c in stats["commands"]] == [0] * 6
    assert stats["api_link"]["kernel_drops"] == 0
    assert stats["api_link"]["datagrams"] > 6 * 3000


def test_a_gate_still_shut_at_the_due_tick_makes_the_command_wait_and_is_counted(tmp_path, caplog):
    # The toy reports home only at 0.8 s, after the arm's due time (0.5 s): the arm waits for it and
    # goes on the first tick after the message arrived, warned about as not reproducible.
    summary, _, toy = fly_mission(tmp_path, api={"home_at_s": 0.8})
    report = run_info(tmp_path)["controller_stats"]["mission"]
    assert summary.exit_reason == "done" and report["late_commands"] == 1
    assert report["commands"][0]["tick"] > 200 and "may differ between runs" in caplog.text


def test_a_small_receive_buffer_drops_the_flood_and_says_so(tmp_path, monkeypatch):
    # The same flood into a 64 KiB buffer: the kernel drops most of it, the acknowledgement
    # (sent last) with it; the drops are counted and the lost ack is named.
    monkeypatch.setattr(api_link, "RECEIVE_BUFFER", 64 * 1024)
    with pytest.raises(CommandUnacknowledgedError, match=r"never acknowledged MAV_CMD_COMPONENT_ARM_DISARM \(arm\)"):
        fly_mission(tmp_path, api={"flood": 3000}, answer_timeout=0.5)
    stats = run_info(tmp_path)["controller_stats"]["mission"]["api_link"]
    assert stats["kernel_drops"] > 1000


def test_nexus_px4_mission_flies_the_same_plan_as_an_ordinary_client(tmp_path):
    # `nexus px4 mission` beside a sim without --px4-mission: the same plan, each command sent when
    # PX4's stream shows its time has come, without holding the clock (so no fixed ticks).
    import socket
    import threading

    from nexus.px4.mission import Px4Mission

    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    mission = Px4Mission(f"udpin:127.0.0.1:{port}", say=lambda text: None, timeout_s=60.0, **PLAN)
    done = threading.Event()
    runner = threading.Thread(target=lambda: (mission.run(), done.set()), daemon=True)
    runner.start()
    flight, px4 = px4_flight(finish_when=done, boot_patience=0.5)
    toy = ScriptedApi(port)
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4, silent=3), api=toy)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=8.0), tmp_path, progress=False,
                             flight=flight)
    runner.join(10.0)
    assert summary.exit_reason == "done" and mission.report.landed_disarmed
    assert [c for c, _, _ in toy.commands] == [ARM, TAKEOFF, REPOSITION, REPOSITION, REPOSITION, LAND]
    assert [c["result"] for c in mission.report.commands] == [0] * 6


def test_a_scenario_check_fails_on_px4s_failsafe_statustext_at_its_time(mission):
    """run.json keeps PX4's STATUSTEXTs; px4_failsafe finds the failsafe at 1.004 s (tick 251), not before."""
    import pyarrow as pa

    from nexus.scenario.checks import evaluate_run
    from nexus.scenario.px4_messages import px4_messages
    from nexus.scenario.spec import Check

    out = mission[0]
    info = run_info(out)
    assert [1.004, "Failsafe activated: Autoland"] in info["controller_stats"]["mission"]["statustexts"]
    info["px4_messages"] = px4_messages(out, info)
    table = pa.table({"time": [0.004], **{f"body/base.pose[{i}]": [0.0] for i in range(7)},
                      **{f"body/base.velocity[{i}]": [0.0] for i in range(3)}})
    whole, before = evaluate_run([Check("fs", "px4_failsafe", 0.0, "max", (0.0, 8.0)),
                                  Check("early", "px4_failsafe", 0.0, "max", (0.0, 1.0))], table, info)
    assert (whole.passed, whole.first_time, whole.first_tick, whole.worst) == (False, pytest.approx(1.004), 251, 1.0)
    assert whole.message().endswith("PX4 said 'Failsafe activated: Autoland'")
    assert before.passed and before.worst == 0.0
