"""Fly a CTBR policy through PX4's offboard path against the scripted PX4, and print what it cost.

No PX4 needed: the scripted peer (:mod:`nexus.px4.scripted_peer`) answers the
lockstep and its toy API stream (:mod:`nexus.px4.scripted_api`) takes the
setpoints, the switch to offboard and the arm. The policy is a constant ONNX
model (thrust ``--thrust``, zero rates: the ``ctbr:4`` action a₀ = thrust / 0.5 − 1
about a declared hover thrust of 0.5) written to a temporary folder. Prints
the run's ``controller_stats.offboard`` and the wall time per tick with and
without the offboard stage (the same flight, plain lockstep).

    python tools/px4_offboard_scripted.py --seconds 4
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np


#: The constant model's declared scaling: hover thrust fraction [-] and max rates [rad/s].
HOVER_THRUST, MAX_RATES = 0.5, "3,3,1.5"


def constant_ctbr_model(path: Path, thrust: float) -> str:
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Gemm", ["observation", "weights", "bias"], ["action"])], "ctbr",
        [helper.make_tensor_value_info("observation", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("action", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.zeros((3, 4), np.float32), "weights"),
         numpy_helper.from_array(np.array([thrust / HOVER_THRUST - 1.0, 0, 0, 0], np.float32), "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, {"nexus:observation": "position_error_heading:3", "nexus:action": "ctbr:4",
                                   "nexus:ctbr_hover_thrust": repr(HOVER_THRUST), "nexus:ctbr_max_rates": MAX_RATES})
    onnx.save(model, str(path))
    return str(path)


def fly(out: Path, seconds: float, policy: str | None) -> tuple[float, dict]:
    from nexus.px4.scripted_api import ScriptedApi
    from nexus.px4.scripted_peer import ScriptedPx4
    from nexus.runtime.flight import build_flight
    from nexus.runtime.config import RunConfig
    from nexus.runtime.run import run_flight

    options = {"host": "127.0.0.1", "port": 0, "boot_patience": 0.5}
    if policy:
        options.update(offboard_policy=policy, offboard_url="udpin:127.0.0.1:0", offboard_at_s=1.5, offboard_lead_s=1.2)
    flight = build_flight(RunConfig(controller="px4", controller_options=options), "cpu")
    px4 = flight.vehicle.controller
    toy = ScriptedApi(px4.offboard.commander.link.port) if policy else None
    # The peer answers from the first tick (no boot silence), so the wall time is the lockstep's alone.
    script = (lambda n: toy.offboard_row()) if policy else (lambda n: [0.0] * 16)
    with ScriptedPx4(px4.link.port, script, api=toy).running():
        began = time.perf_counter()
        summary = run_flight(replace(flight.options, device="cpu", duration=seconds), out, progress=False,
                             flight=flight)
        wall = time.perf_counter() - began
    info = json.loads((out / "run.json").read_text())
    return wall / summary.ticks, info["controller_stats"].get("offboard", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="sim time of each flight [s]")
    parser.add_argument("--thrust", type=float, default=0.6, help="the constant policy's thrust [0, 1]")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        policy = constant_ctbr_model(folder / "ctbr.onnx", args.thrust)
        plain, _ = fly(folder / "plain", args.seconds, None)
        offboard, stats = fly(folder / "offboard", args.seconds, policy)
    print(json.dumps({key: stats[key] for key in ("rate_hz", "decimation", "setpoints", "first_setpoint_tick",
                                                  "clock_mismatches", "setpoint_hold_wall_s", "inference_us_median",
                                                  "commands")}, indent=1))
    per_setpoint = 1e6 * stats["setpoint_hold_wall_s"] / max(1, stats["setpoints"])
    print(f"wall per tick: {plain * 1e6:.0f} us plain lockstep, {offboard * 1e6:.0f} us with the offboard stage; "
          f"clock held {per_setpoint:.0f} us per setpoint")


if __name__ == "__main__":
    main()
