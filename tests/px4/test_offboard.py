"""A CTBR policy flying the scripted PX4 in offboard mode: SET_ATTITUDE_TARGET on fixed ticks, then switch and arm.

The policy is a hand-built ONNX Gemm over ``position_error_heading:3,rates:3``
whose ``ctbr:4`` action (each in [-1, 1]) is a₀ = 0.24 + 0.1·(setpoint z −
estimate z), a₁ = 0.05, a₂ = −0.05, a₃ = 0.3 + 0.5·(yaw rate), declared with
hover thrust 0.5 and max rates (2, 4, 1) rad/s: so PX4 gets thrust
0.5·(1 + a₀) = 0.62 + 0.05·height error, roll rate 0.1, pitch rate −0.2 and yaw
rate 0.3 + 0.5·yaw rate [rad/s], hand numbers of the recorded estimate and
setpoint. The scripted PX4 notes each setpoint with the clock it arrived at,
refuses offboard until setpoints have come for 0.3 s of its clock, and, armed
in offboard, answers with every motor at the last setpoint's thrust. A second
flight flies an untrained network exported by ``nexus train``'s exporter.
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
SCALING = {"nexus:ctbr_hover_thrust": "0.5", "nexus:ctbr_max_rates": "2,4,1"}


def _model(path, inputs: int = 6, outputs: int = 4, action: str = "ctbr:4", observation: str = LAYOUT,
           extra: dict | None = None, drop: str | None = None) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = np.zeros((inputs, outputs), np.float32)
    bias = np.zeros(outputs, np.float32)
    if (inputs, outputs) == (6, 4):
        weights[2, 0], weights[5, 3] = 0.1, 0.5  # collective from the height error, yaw rate from the yaw rate
        bias[:] = (0.24, 0.05, -0.05, 0.3)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "ctbr",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, inputs])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, outputs])],
        [numpy_helper.from_array(weights, "weights"), numpy_helper.from_array(bias, "bias")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    props = {"nexus:observation": observation, "nexus:action": action, **SCALING, **(extra or {})}
    props.pop(drop, None)
    helper.set_model_props(model, props)
    onnx.save(model, str(path))
    return str(path)


def fly_offboard(out, seconds: float = 1.5, toys: list | None = None, model: str | None = None, **timing):
    model = model or _model(out / "ctbr.onnx")
    flight, px4 = px4_flight(offboard_policy=model, offboard_url="udpin:127.0.0.1:0",
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
        # The record's ctbr row is the policy's action in [-1, 1] ...
        a = row[["ctbr[0]", "ctbr[1]", "ctbr[2]", "ctbr[3]"]].to_numpy(np.float64)
        assert a[0] == pytest.approx(0.24 + 0.1 * height_error, abs=1e-6)
        assert a[1] == pytest.approx(0.05, abs=1e-7) and a[2] == pytest.approx(-0.05, abs=1e-7)
        assert a[3] == pytest.approx(0.3 + 0.5 * float(row["estimate.rates[2]"]), abs=1e-6)
        # ... and PX4 got hover 0.5 · (1 + a0) and a · (2, 4, 1) rad/s, body FRD, as float32 on the wire.
        assert thrust == np.float32(0.5 * (1.0 + a[0]))
        assert list(rates) == [np.float32(2.0 * a[1]), np.float32(4.0 * a[2]), np.float32(1.0 * a[3])]
        assert thrust == pytest.approx(0.62 + 0.05 * height_error, abs=1e-6)
        assert rates[0] == pytest.approx(0.1, abs=1e-7) and rates[1] == pytest.approx(-0.2, abs=1e-7)
        assert rates[2] == pytest.approx(0.3 + 0.5 * float(row["estimate.rates[2]"]), abs=1e-6)


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
    thrust = np.float32(0.5 * (1.0 + record["ctbr[0]"].to_numpy(np.float64)))
    assert np.array_equal(controls[armed], np.repeat(thrust[armed, None], 4, axis=1))
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
    ((6, 4, "ctbr:3"), r"nexus:action gives 'ctbr' width 3, but the signal's 'ctbr' has width 4"),
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


# -- the one CTBR meaning: scaled by the model's own metadata, converted for PX4 ----------------------------------


def test_the_conversion_clips_then_scales_each_axis_by_its_own_rate():
    from nexus.control.policy.features import CtbrScaling

    scaling = CtbrScaling(0.6, (2.0, 3.0, 1.0))
    # a0 = −0.5: 0.6 · 0.5 = 0.3; rates 0.5 · 2, −0.25 · 3, 1 · 1 [rad/s], FRD as given (no sign changes).
    assert scaling.setpoint([-0.5, 0.5, -0.25, 1.0]).tolist() == [0.3, 1.0, -0.75, 1.0]
    # Out of [-1, 1]: clipped first (a0 1.5 -> 1: 0.6 · 2 = 1.2, clipped to thrust 1; roll −2 -> −1: −2 rad/s).
    assert scaling.setpoint([1.5, -2.0, 0.0, 0.0]).tolist() == [1.0, -2.0, 0.0, 0.0]
    assert scaling.setpoint([-3.0, 0.0, 2.0, -2.0]).tolist() == [0.0, 0.0, 3.0, -1.0]


@pytest.mark.parametrize("drop", ["nexus:ctbr_hover_thrust", "nexus:ctbr_max_rates"])
def test_a_ctbr_policy_without_its_scaling_is_refused_naming_the_key(tmp_path, drop):
    path = _model(tmp_path / "unscaled.onnx", drop=drop)
    with pytest.raises(BuildError, match=rf"^--px4-offboard-policy {path}: its metadata has no '{drop}', which "
                       r"scales its ctbr:4 action; export it again with nexus train") as error:
        CtbrPolicy(path)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("extra, needle", [
    ({"nexus:ctbr_max_rates": "3,3"}, r"nexus:ctbr_max_rates is '3,3'; it must be three positive rates"),
    ({"nexus:ctbr_hover_thrust": "1.2"}, r"nexus:ctbr_hover_thrust is '1.2'; it must be the hover thrust fraction"),
])
def test_a_malformed_scaling_is_refused_naming_the_key(tmp_path, extra, needle):
    path = _model(tmp_path / "bad.onnx", extra=extra)
    with pytest.raises(BuildError, match=rf"^--px4-offboard-policy {path}: its metadata {needle}"):
        CtbrPolicy(path)


def test_without_a_rate_option_the_policy_flies_at_its_own_rate_else_50_hz(tmp_path):
    pilot = OffboardPilot(_model(tmp_path / "p125.onnx", extra={"nexus:policy_hz": "125"}), url="udpin:127.0.0.1:0")
    assert pilot.rate_hz == 125.0
    given = OffboardPilot(_model(tmp_path / "p125.onnx", extra={"nexus:policy_hz": "125"}), rate_hz=50.0,
                          url="udpin:127.0.0.1:0")
    assert given.rate_hz == 50.0
    assert OffboardPilot(_model(tmp_path / "plain.onnx"), url="udpin:127.0.0.1:0").rate_hz == 50.0


def _exported(path) -> str:
    """An untrained hover network written by ``nexus train``'s own exporter, for a vehicle hovering at 0.45."""
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    from nexus.gym.export import export_onnx
    from nexus.gym.tasks import task_named

    torch.manual_seed(3)
    net = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        net[2].bias.copy_(torch.tensor([0.3, 0.0, 0.0, 0.0]))  # climbs: collective 0.45 · 1.3 or so
    scaler = SimpleNamespace(running_mean=torch.zeros(12), running_variance=torch.ones(12) * 4.0, epsilon=1e-8,
                             clip_threshold=5.0)
    agent = SimpleNamespace(_observation_preprocessor=scaler, models={"policy": SimpleNamespace(net=net)})
    env = SimpleNamespace(action_width=4, action_mode="ctbr", observation_width=12, task=task_named("hover"),
                          policy_hz=125.0, tick_hz=250.0, hover_fraction=0.45)  # the env's (one process or sharded)
    return str(export_onnx(agent, env, path, None))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("exported")
    model = _exported(out / "policy.onnx")
    # No --px4-offboard-rate: the model's nexus:policy_hz (125 Hz, every 2nd tick).
    summary, toy = fly_offboard(out, seconds=1.0, model=model, offboard_rate=None)
    record = pq.read_table(out / "run" / "record.parquet").to_pandas()
    record.index = np.rint(record["time"].to_numpy() * 250).astype(int)
    return model, summary, toy, record


def test_the_exporter_declares_the_ctbr_scaling(exported):
    import onnx

    meta = {p.key: p.value for p in onnx.load(exported[0]).metadata_props}
    assert meta["nexus:action"] == "ctbr:4" and meta["nexus:policy_hz"] == "125"
    assert meta["nexus:ctbr_hover_thrust"] == "0.45" and meta["nexus:ctbr_max_rates"] == "3.0,3.0,1.5"


def test_an_exported_policy_flies_offboard_with_the_hand_converted_setpoints(exported):
    _, summary, toy, record = exported
    # 1 s at 250 Hz; every 2nd tick from tick 50 (0.2 s) to 250: (250 − 50) / 2 + 1 = 101 setpoints.
    assert summary.ticks == 250
    assert [clock for clock, *_ in toy.setpoints] == [(k - 1) * TICK_US for k in range(50, 251, 2)]
    moved = 0
    for (clock, _, _, rates, thrust) in toy.setpoints:
        a = record.loc[clock // TICK_US + 1, ["ctbr[0]", "ctbr[1]", "ctbr[2]", "ctbr[3]"]].to_numpy(np.float64)
        a = np.clip(a, -1.0, 1.0)
        # thrust = 0.45 · (1 + a0) clipped to [0, 1]; rates = a · (3, 3, 1.5) rad/s, body FRD.
        assert thrust == np.float32(min(max(0.45 * (1.0 + a[0]), 0.0), 1.0))
        assert list(rates) == [np.float32(3.0 * a[1]), np.float32(3.0 * a[2]), np.float32(1.5 * a[3])]
        moved += abs(a[0] - 0.3) > 1e-3
    assert moved, "the network's action never changed with the observation"
