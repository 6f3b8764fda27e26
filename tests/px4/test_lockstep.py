"""PX4's lockstep link against a scripted PX4 over a real TCP socket."""

import json
import math
import threading
import time
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.core.errors import BuildError
from nexus.runtime.flight import build_flight
from nexus.runtime.config import RunConfig
from nexus.px4.link import LinkError
from nexus.runtime.replay import replay
from nexus.runtime.run import run_flight
from nexus.px4.scripted_peer import ScriptedPx4

TICK_US = 4000
HOVER = 0.5722  # the Astro Max's hover command
CLIMB = 0.70


def px4_flight(**link):
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0, **link}
    flight = build_flight(RunConfig(controller="px4", controller_options=options), "cpu")
    return flight, flight.vehicle.controller


def boots_then(row, silent=10):
    """Like PX4: no answer to the first ``silent`` sensor messages, then ``row`` every time."""
    return lambda n: None if n <= silent else [*row, *[0.0] * (16 - len(row))]


def fly_with(peer_factory, tmp_path, seconds=1.0, **link):
    flight, px4 = px4_flight(**link)
    peer = peer_factory(px4.link.port)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), tmp_path, progress=False,
                             flight=flight)
    return summary, px4, peer


@pytest.fixture(scope="module")
def climb(tmp_path_factory):
    out = tmp_path_factory.mktemp("px4")
    summary, px4, peer = fly_with(lambda port: ScriptedPx4(port, boots_then([CLIMB] * 4)), out)
    return out, summary, px4, peer


def test_plan_has_truth_and_exchange_between_graphs():
    flight, px4 = px4_flight()
    try:
        text = flight.loop.plan.text()
    finally:
        flight.loop.close()
    assert text.endswith("-> imu -> mag -> baro -> gps -> px4_row) host(exchange) graph(record)"), text
    assert text.startswith("stage plan: graph(clock -> clear -> esc")
    assert "estimate" not in text and "mission" not in text


def test_time_advances_exactly_one_tick_per_exchange(climb):
    _, summary, px4, peer = climb
    stamps = [m.time_usec for m in peer.of_type("HIL_SENSOR")]
    assert summary.ticks == 250 and len(stamps) == 250
    assert stamps[0] == TICK_US and np.all(np.diff(stamps) == TICK_US)
    # PX4's clock must only ever move forward, and starts above zero.
    assert all(s > 0 for s in stamps)


def test_boot_ticks_wait_for_the_answer_then_lockstep(climb):
    _, summary, px4, peer = climb
    assert px4.lockstep and px4.exchanges == 250
    # 10 messages went unanswered while "PX4 booted"; each boot tick waited for its answer (the
    # peer's process cannot be seen, so for the boot patience) before the clock moved on. So the
    # first answer, to message 11, lands on tick 11 in every run, and every tick from then on
    # used the answer to its own message: none stale.
    assert first_climb_tick(climb[0]) == 11
    assert px4.answers == 240 and px4.stale_answers == 0
    assert px4.stats()["boot_ticks"] == 11 and px4.stats()["first_answer_tick"] == 11


def test_fields_bits_follow_each_sensors_own_rate(climb):
    out, _, _, peer = climb
    sensors = peer.of_type("HIL_SENSOR")
    record = pq.read_table(out / "record.parquet")
    for bits, column in ((0x1C0, "mag.time"), (0x1A00, "baro.time")):
        flagged = np.array([(m.fields_updated & bits) == bits for m in sensors])
        times = record.column(column).to_numpy()
        # The start-up sample (t = 0) has not reached PX4 yet: the first message carries it as new.
        new = np.r_[True, np.diff(times) > 0.0]
        np.testing.assert_array_equal(flagged, new)
    assert all(m.fields_updated & 0x3F == 0x3F for m in sensors)  # accel and gyro every tick (IMU at 250 Hz)
    assert all(m.fields_updated & 0x400 == 0 for m in sensors)  # no airspeed sensor
    # Mag at 100 Hz and baro at 50 Hz over 1 s, plus the start-up sample of each.
    assert sum((m.fields_updated & 0x1C0) == 0x1C0 for m in sensors) == 101
    assert sum((m.fields_updated & 0x1A00) == 0x1A00 for m in sensors) == 51


def test_units_are_px4s(climb):
    _, _, _, peer = climb
    first = peer.of_type("HIL_SENSOR")[0]
    # At rest: specific force (0, 0, -g) in m/s²; the field near Zurich ≈ 0.48 gauss.
    assert first.zacc == pytest.approx(-9.81, abs=0.1) and abs(first.xacc) < 0.1
    assert math.sqrt(first.xmag**2 + first.ymag**2 + first.zmag**2) == pytest.approx(0.482, abs=0.01)
    # ISA at 488 m: T = 288.15 - 0.0065·488 = 284.978 K = 11.83 °C;
    # p = 101325·(284.978/288.15)^5.25588 = 95,598 Pa = 955.98 hPa (noise σ 3 Pa = 0.03 hPa).
    assert first.abs_pressure == pytest.approx(955.98, abs=0.15)
    assert first.temperature == pytest.approx(11.83, abs=0.05)
    assert first.pressure_alt == pytest.approx(488.0, abs=1.0)


def test_gps_goes_out_only_at_its_rate(climb):
    _, _, _, peer = climb
    gps = peer.of_type("HIL_GPS")
    # 10 Hz: the start-up fix goes out with the first exchange, then new fixes at 0.1, 0.2, ... 1.0 s.
    assert [m.time_usec for m in gps] == [TICK_US] + [100_000 * k for k in range(1, 11)]
    # Within 4σ of the GPS error (white 0.02 m and drift 0.3 m: ≈ 1.2 m ≈ 110 degE7 of latitude).
    assert gps[0].lat == pytest.approx(473977420, abs=110) and gps[0].lon == pytest.approx(85455940, abs=160)
    assert gps[0].alt == pytest.approx(488_000, abs=1500) and gps[0].fix_type == 3 and gps[0].satellites_visible >= 6


def test_ground_truth_quaternion_is_frd_to_ned_wxyz(climb):
    _, _, _, peer = climb
    truth = peer.of_type("HIL_STATE_QUATERNION")
    # The peer asked for ground truth every 5000 µs, as PX4 does: every other 4 ms tick.
    stamps = np.array([m.time_usec for m in truth])
    assert len(truth) == 125 and np.all(np.diff(stamps) >= 5000)
    # The vehicle's nose points along Newton's +x (east): heading 90°, level:
    # q = (cos 45°, 0, 0, sin 45°) as (w, x, y, z).
    np.testing.assert_allclose(truth[0].attitude_quaternion, [math.sqrt(0.5), 0, 0, math.sqrt(0.5)], atol=1e-3)
    assert truth[0].lat == pytest.approx(473977420, abs=2)
    assert truth[0].zacc == pytest.approx(-1000, abs=20)  # -1 g in mG, FRD


def first_climb_tick(out) -> int:
    """The first tick (1-based) whose recorded controls are the peer's climb row."""
    controls = pq.read_table(out / "record.parquet").column("controls[0]").to_numpy()
    return int(np.flatnonzero(controls == np.float32(CLIMB))[0]) + 1


def test_the_vehicle_climbs_on_the_peers_rows(climb):
    out, _, _, _ = climb
    record = pq.read_table(out / "record.parquet")
    z = record.column("body/base.pose[2]").to_numpy()
    controls = record.column("controls[0]").to_numpy()
    # Silent for 10 messages; the 11th answer lands on tick 11, and from then on every tick is
    # in lockstep and flies its own answer.
    first = first_climb_tick(out)
    assert first == 11, first
    assert np.all(controls[: first - 1] == 0.0) and np.all(controls[first - 1:] == np.float32(CLIMB))
    # 0.70 is above the hover command: thrust beats weight and the vehicle leaves the ground.
    assert z[-1] > z[0] + 0.05


def test_replaying_the_actuator_stream_reproduces_the_flight(climb):
    out, _, _, _ = climb
    result = replay(out)
    assert result.identical, result.first_difference
    assert "body/base.pose[2]" in result.compared and "imu.accel[2]" in result.compared


def test_no_tick_advances_before_the_peers_first_answer(tmp_path):
    # The peer holds back its answer to the very first sensor message. Each boot tick waits up
    # to the boot patience (here 20 s) for its answer: the clock stands at tick 1 meanwhile.
    script = lambda n: "hold" if n == 1 else [HOVER] * 16  # noqa: E731
    flight, px4 = px4_flight(boot_patience=20.0)
    peer = ScriptedPx4(px4.link.port, script)
    peer.start()
    runner = threading.Thread(target=run_flight, args=(replace(flight.options, device="cpu", duration=0.2), tmp_path),
                              kwargs={"progress": False, "flight": flight}, daemon=True)
    runner.start()
    assert peer.holding.wait(10.0)
    time.sleep(0.5)
    sent, ticks = len(peer.of_type("HIL_SENSOR")), flight.loop.ticks
    peer.release()
    runner.join(10.0)
    peer.stop.set()
    assert sent == 1 and ticks == 0
    assert px4.stats()["first_answer_tick"] == 1 and px4.stats()["boot_ticks"] == 1
    assert flight.loop.ticks == 50 and px4.answers == 50 and px4.stale_answers == 0


def test_the_sim_does_not_advance_while_px4_withholds_its_answer(tmp_path):
    # The answer to message 100 is held back: by then the run is in lockstep (the boot ends
    # at the first answer, to message 3, a few ticks at most after it was sent).
    script = boots_then([HOVER] * 4, silent=2)
    held = lambda n: "hold" if n == 100 else script(n)  # noqa: E731
    flight, px4 = px4_flight()
    peer = ScriptedPx4(px4.link.port, held)
    peer.start()
    runner = threading.Thread(target=run_flight, args=(replace(flight.options, device="cpu", duration=0.5), tmp_path),
                              kwargs={"progress": False, "flight": flight}, daemon=True)
    runner.start()
    assert peer.holding.wait(10.0)
    time.sleep(0.4)
    stalled = len(peer.of_type("HIL_SENSOR"))
    ticks = flight.loop.ticks
    peer.release()
    runner.join(10.0)
    peer.stop.set()
    assert px4.lockstep
    assert stalled == 100 and ticks == 99  # tick 100 waits for its answer
    assert flight.loop.ticks == 125


def test_connect_timeout_is_a_clear_error_with_a_flushed_record(tmp_path):
    flight, px4 = px4_flight(connect_timeout=0.3)
    with pytest.raises(LinkError, match="did not connect"):
        run_flight(replace(flight.options, device="cpu", duration=1.0), tmp_path, progress=False, flight=flight)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "px4-no-connection" and info["ticks"] == 0
    assert "did not connect" in info["error"] and "within 0.3 s" in info["error"]
    assert pq.read_table(tmp_path / "record.parquet").num_rows == 0  # the columns, no tick


def test_answer_timeout_ends_the_run_with_a_flushed_record(tmp_path):
    silent_after = lambda n: None if n <= 3 or n > 30 else [HOVER] * 16  # noqa: E731
    with pytest.raises(LinkError, match="no HIL_ACTUATOR_CONTROLS within 0.3 s"):
        fly_with(lambda port: ScriptedPx4(port, silent_after), tmp_path, answer_timeout=0.3)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "px4-timeout"
    assert "lockstep stalled" in info["error"] and "still running" in info["error"]
    assert pq.read_table(tmp_path / "record.parquet").num_rows == info["ticks"] == 30


def test_a_dropped_connection_ends_the_run_with_a_flushed_record(tmp_path):
    with pytest.raises(LinkError, match="closed the link"):
        fly_with(lambda port: ScriptedPx4(port, boots_then([HOVER] * 4, silent=2), disconnect_after=40), tmp_path)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["exit_reason"] == "px4-disconnected" and "closed the link" in info["error"]
    assert pq.read_table(tmp_path / "record.parquet").num_rows == info["ticks"] == 39


def test_a_malformed_message_is_reported_not_fatal(tmp_path, caplog):
    summary, px4, peer = fly_with(
        lambda port: ScriptedPx4(port, boots_then([HOVER] * 4, silent=2), garbage_at=15), tmp_path, seconds=0.2
    )
    assert summary.exit_reason == "duration" and summary.ticks == 50
    assert px4.link.bad_messages >= 1 and px4.heartbeats >= 2
    assert "malformed" in caplog.text


def test_a_guidance_on_a_px4_run_fails_the_build():
    from nexus.core import Loop
    from nexus.guidance import MissionGuidance
    from nexus.runtime.roles import FLIGHT_RULES

    flight, px4 = px4_flight()
    flight.loop.close()
    components = [c for c in flight.loop.components if c.name != "clock"]
    with pytest.raises(BuildError, match="writes the setpoint, but no stage reads it"):
        Loop([*components, MissionGuidance("/scene/mission")], device="cpu", rules=FLIGHT_RULES).build()


def test_the_wait_for_px4_to_connect_is_reported_apart_from_the_flight(tmp_path):
    # PX4 connects 1.2 s (wall) after the run starts waiting for it (however long the run's
    # start-up took on a busy machine); the run's wall time holds that wait, which says how PX4
    # was launched, not how fast the flight was: run.json gives the wait
    # (controller_stats.waiting_s) and the real-time factor without it.
    flight, px4 = px4_flight()
    waiting_began = threading.Event()
    accept = px4.link.accept
    px4.link.accept = lambda timeout: (waiting_began.set(), accept(timeout))  # noqa: E731
    peer = ScriptedPx4(px4.link.port, boots_then([HOVER] * 4))
    threading.Thread(target=lambda: (waiting_began.wait(30.0), time.sleep(1.2), peer.start()), daemon=True).start()
    try:
        run_flight(replace(flight.options, device="cpu", duration=0.4), tmp_path, progress=False, flight=flight)
    finally:
        peer.stop.set()
    info = json.loads((tmp_path / "run.json").read_text())
    waiting = info["controller_stats"]["waiting_s"]
    assert 1.0 <= waiting < info["wall_time_s"]
    flying = info["sim_time_s"] / (info["wall_time_s"] - waiting)
    assert info["real_time_factor_flying"] == pytest.approx(flying)
    assert info["real_time_factor_flying"] > info["real_time_factor"]
