"""A CTBR policy flying the scripted PX4 in offboard mode: SET_ATTITUDE_TARGET on fixed ticks, then switch and arm.

The policy is a hand-built ONNX Gemm over ``position_error_heading:3,rates:3``:
thrust = 0.62 + 0.05·(setpoint z − estimate z), roll rate 0.1, pitch rate
−0.2, yaw rate 0.3 + 0.5·(yaw rate) [rad/s], so every value it sends is a hand
number of the recorded estimate and setpoint. The scripted PX4 notes each
setpoint with the clock it arrived at, refuses offboard until setpoints have
come for 0.3 s of its clock, and, armed in offboard, answers with every motor at
the last setpoint's thrust.
"""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest

from nexus.core.errors import BuildError
from nexus.px4.controller import Px4Controller
from nexus.px4.errors import CommandRefusedError
from nexus.px4.offboard import CtbrPolicy, OffboardPilot
from nexus.px4.scripted_api import ScriptedApi
from nexus.px4.scripted_peer import ScriptedPx4
from nexus.runtime.run import run_flight
from tests.px4.test_lockstep import px4_flight

TICK_US = 4000
LAYOUT = "position_error_heading:3,rates:3"
#: Stream from 0.6 − 0.4 = 0.2 s (tick 50), switch at 0.6 s (tick 150), arm 0.2 s later (tick 200), at 50 Hz.
TIMING = {"offboard_at_s": 0.6, "offboard_lead_s": 0.4, "offboard_arm_delay_s": 0.2, "offboard_rate": 50.0}
SET_MODE, ARM = 176, 400


def _model(path, inputs: int = 6, outputs: int = 4, action: str = "ctbr:4", observation: str = LAYOUT) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = np.zeros((inputs, outputs), np.float32)
    bias = np.zeros(outputs, np.float32)
    if (inputs, outputs) == (6, 4):
        weights[2, 0], weights[5, 3] = 0.05, 0.5  # thrust from the height error, yaw rate from the yaw rate
        bias[:] = (0.62, 0.1, -0.2, 0.3)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "ctbr",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, outputs])],
        [numpy_helper.from_array(weights, "weights"), numpy_helper.from_array(bias, "bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"nexus:observation": observation, "nexus:action": action})
    onnx.save(model, str(path))
    return str(path)


def fly_offboard(out, seconds: float = 1.5, toys: list | None = None, **timing):
    flight, px4 = px4_flight(offboard_policy=_model(out / "ctbr.onnx"), offboard_url="udpin:127.0.0.1:0",
                             boot_patience=0.5, **{**TIMING, **timing})
    toy = ScriptedApi(px4.offboard.commander.link.port, offboard_lead_s=0.3)
    if toys is not None:
        toys.append(toy)
    peer = ScriptedPx4(px4.link.port, lambda n: None if n <= 3 else toy.offboard_row(), api=toy)
    with peer.running():
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), out / "run", progress=False,
                             flight=flight)
    return summary, toy


@pytest.fixture(scope="module")
def offboard(tmp_path_factory):
    out = tmp_path_factory.mktemp("offboard")
    summary, toy = fly_offboard(out)
    record = pq.read_table(out / "run" / "record.parquet").to_pandas()
    record.index = np.rint(record["time"].to_numpy() * 250).astype(int)  # row of tick k at k · 4 ms
    info = json.loads((out / "run" / "run.json").read_text())
    return summary, toy, record, info


def test_setpoints_go_every_fifth_tick_from_the_stream_start_before_their_ticks_sensor_message(offboard):
    summary, toy, _, info = offboard
    assert summary.ticks == 375
    # 250 Hz / 50 Hz = 5 ticks; from tick 50 (0.2 s) to tick 375: (375 − 50) / 5 + 1 = 66 setpoints.
    ticks = list(range(50, 376, 5))
    assert len(toy.setpoints) == 66
    # Each arrived while PX4's clock stood at the tick before its own: before that tick's HIL_SENSOR.
    assert [clock for clock, *_ in toy.setpoints] == [(k - 1) * TICK_US for k in ticks]
    # type_mask 128: attitude ignored, body rates and thrust used.
    assert {mask for _, _, mask, _, _ in toy.setpoints} == {128}
    stats = info["controller_stats"]["offboard"]
    assert (stats["decimation"], stats["first_setpoint_tick"], stats["setpoints"]) == (5, 50, 66)
    assert stats["clock_mismatches"] == 0 and stats["late_stream_ticks"] == 0


def test_each_setpoint_carries_the_policys_outputs_for_that_ticks_estimate(offboard):
    _, toy, record, _ = offboard
    for (clock, _, _, rates, thrust) in toy.setpoints:
        row = record.loc[clock // TICK_US + 1]
        height_error = float(row["setpoint.position[2]"]) - float(row["estimate.position[2]"])
        assert thrust == pytest.approx(0.62 + 0.05 * height_error, abs=1e-6)
        assert rates[0] == pytest.approx(0.1, abs=1e-7) and rates[1] == pytest.approx(-0.2, abs=1e-7)
        assert rates[2] == pytest.approx(0.3 + 0.5 * float(row["estimate.rates[2]"]), abs=1e-6)
        # The record's ctbr row is what went on the wire, bit for bit (MAVLink carries float32).
        sent = np.array([thrust, *rates], np.float32)
        assert np.array_equal(row[["ctbr[0]", "ctbr[1]", "ctbr[2]", "ctbr[3]"]].to_numpy(np.float32), sent)


def test_px4_is_switched_to_offboard_after_the_stream_started_then_armed(offboard):
    _, toy, _, info = offboard
    # DO_SET_MODE at 0.6 s (tick 150: PX4's clock at tick 149), base mode custom (1), PX4 main mode 6 (offboard);
    # the arm 0.2 s later (tick 200); the first setpoint had come at tick 50, 0.4 s before the switch.
    assert [(c, clock) for c, clock, _ in toy.commands] == [(SET_MODE, 149 * TICK_US), (ARM, 199 * TICK_US)]
    assert toy.mode_requests == [(1.0, 6.0, 149 * TICK_US)]
    commands = info["controller_stats"]["offboard"]["commands"]
    assert [(c["name"], c["tick"], c["result"]) for c in commands] == [
        ("MAV_CMD_DO_SET_MODE (offboard)", 150, 0), ("MAV_CMD_COMPONENT_ARM_DISARM (arm)", 200, 0)]


def test_the_vehicle_flies_what_the_peer_makes_of_the_setpoints(offboard):
    _, _, record, _ = offboard
    controls = record[[f"controls[{i}]" for i in range(4)]].to_numpy()
    # Disarmed until tick 200: zeros. From the arm on, the toy gives each motor the last setpoint's thrust.
    assert not controls[record.index < 200].any()
    armed = record.index >= 200
    assert np.array_equal(controls[armed], np.repeat(record["ctbr[0]"].to_numpy()[armed, None], 4, axis=1))
    # About 0.62 against the Astro Max's hover command 0.5722: it leaves the ground (NED z falls).
    z = record["estimate.position[2]"]
    assert z.loc[375] < z.loc[200] - 0.01


def test_a_switch_before_px4_has_had_setpoints_long_enough_is_refused_with_px4s_reason(tmp_path):
    # Setpoints from 0.5 s, the switch at 0.6 s: PX4 (here the toy, 0.3 s) has not had them long enough.
    toys = []
    with pytest.raises(CommandRefusedError, match=r"refused MAV_CMD_DO_SET_MODE \(offboard\), sent on tick 150.*"
                       r"MAV_RESULT_TEMPORARILY_REJECTED \(1\).*Switching to Offboard is currently not available"):
        fly_offboard(tmp_path, toys=toys, offboard_lead_s=0.1)
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["exit_reason"] == "px4-command-refused"
    # The arm waits for PX4 to accept the switch: it never went out.
    assert [c for c, _, _ in toys[0].commands] == [SET_MODE]


def test_two_offboard_flights_are_identical_bit_for_bit(offboard, tmp_path):
    summary, toy, record, _ = offboard
    again, toy_again = fly_offboard(tmp_path)
    second = pq.read_table(tmp_path / "run" / "record.parquet").to_pandas()
    assert again.ticks == summary.ticks and list(second.columns) == list(record.columns)
    for name in record.columns:
        assert record[name].to_numpy().tobytes() == second[name].to_numpy().tobytes(), name
    assert toy_again.setpoints == toy.setpoints and toy_again.commands == toy.commands


# -- bad input: refused when the flight is built, before any stage runs, in one line ----------------------------


@pytest.mark.parametrize("shape, needle", [
    ((5, 4, "ctbr:4"), r"nexus:observation \(position_error_heading:3,rates:3\) makes 6 values, but the model's "
                       r"input 'observation' takes 5"),
    ((6, 3, "ctbr:4"), r"nexus:action \(ctbr:4\) names 4 values, but the model's output 'action' gives 3"),
    ((6, 4, "controls:4"), r"nexus:action names 'controls', which Nexus does not know; it knows ctbr"),
    ((6, 4, "ctbr:3"), r"nexus:action is 'ctbr:3'; a PX4 offboard policy gives ctbr:4 \(thrust \[0, 1\], roll, pitch, "
                       r"yaw rates \[rad/s\]\)"),
])
def test_a_policy_whose_sizes_do_not_fit_is_refused_naming_the_file_and_both_sizes(tmp_path, shape, needle):
    inputs, outputs, action = shape
    path = _model(tmp_path / "bad.onnx", inputs, outputs, action)
    with pytest.raises(BuildError, match=rf"^--px4-offboard-policy {path}: .*{needle}") as error:
        CtbrPolicy(path)
    assert "\n" not in str(error.value)


def test_a_missing_policy_file_is_refused_naming_it(tmp_path):
    with pytest.raises(BuildError, match=r"nope.onnx: no such file; give an ONNX model whose metadata declares "
                       r"nexus:action=ctbr:4"):
        CtbrPolicy(tmp_path / "nope.onnx")


def test_a_rate_that_is_not_a_whole_number_of_ticks_is_refused(tmp_path):
    pilot = OffboardPilot(_model(tmp_path / "ctbr.onnx"), rate_hz=60.0, url="udpin:127.0.0.1:0")
    # 250 Hz / 60 Hz = 4.167 ticks; 250 / 4 = 62.5 Hz would do.
    with pytest.raises(BuildError, match=r"--px4-offboard-rate 60: .* whole number of ticks \(250 Hz / 60 Hz = "
                       r"4.167\); give a rate that divides 250 Hz, such as 62.5"):
        pilot.prepare(4_000_000)


def test_a_malformed_or_busy_offboard_url_is_refused_naming_the_option(tmp_path):
    with pytest.raises(BuildError, match=r"^--px4-offboard-url 'udp:14540' is not udpin:HOST:PORT"):
        OffboardPilot(_model(tmp_path / "ctbr.onnx"), url="udp:14540")
    from nexus.px4.api_link import ApiLink

    holder = ApiLink("udpin:127.0.0.1:0")
    try:
        pilot = OffboardPilot(_model(tmp_path / "ctbr.onnx"), url=f"udpin:127.0.0.1:{holder.port}")
        with pytest.raises(BuildError, match=rf"^--px4-offboard-url udpin:127.0.0.1:{holder.port}: cannot listen .*"
                           r"pass another --px4-offboard-url"):
            pilot.prepare(4_000_000)
    finally:
        holder.close()


def test_an_offboard_policy_and_the_built_in_mission_together_are_refused(tmp_path):
    with pytest.raises(BuildError, match=r"--px4-offboard-policy and --px4-mission both command PX4"):
        Px4Controller("/vehicle/controller", None, mission={"url": "udpin:127.0.0.1:0"},
                      offboard_policy=_model(tmp_path / "ctbr.onnx"))


def test_px4_instance_and_another_offboard_url_are_refused_before_anything_is_written(tmp_path):
    from click.testing import CliRunner

    from nexus.cli import main

    out = tmp_path / "no"
    clash = CliRunner().invoke(main, ["run", "--controller", "px4", "--px4-instance", "2", "--px4-offboard-policy",
                                      _model(tmp_path / "ctbr.onnx"), "--px4-offboard-url", "udpin:127.0.0.1:14540",
                                      "--out", str(out)])
    # Instance 2 sends its API stream to 14542.
    assert clash.exit_code == 2 and "--px4-offboard-url udpin:127.0.0.1:14540 and --px4-instance 2 " \
        "(udpin:127.0.0.1:14542) disagree" in clash.output and not out.exists()
