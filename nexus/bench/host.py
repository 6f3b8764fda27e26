"""Suite ``host``: host solvers between graph replays, on the figure-eight.

The MPC (``--controller mpc``) and the shipped policy (``--controller
policy``) each fly the figure-eight scene to its end, the way ``nexus run``
does (start-up excluded, record drained to Parquet). Per controller:

* ``rtf_<name>``: sim time over wall time of the whole flight;
* ``host_share_<name>``: the share of that wall time spent inside the ring's
  host stages (the tracking guidance and the controller's solve or
  inference), timed around the stages' own calls;
* ``solve_us_median`` / ``solve_us_p99`` (MPC) and ``inference_us_median`` /
  ``inference_us_p99`` (policy): the controller's own per-call times.

Each figure comes from the best of ``ROUNDS`` flights, the MPC and policy
flights taken in turn so that a busy spell of the machine hits both.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from nexus.bench.timing import alternating_best, time_host_stages
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

SCENE = "figure_eight"
#: Longest sim time flown [s]; the figure-eight's guidance ends the run sooner.
CAP_S = 60.0
ROUNDS = 2
TARGETS = {"rtf_mpc": 1.5, "rtf_policy": 5.0}


class _HostFlight:
    """Flights of one controller on the figure-eight; keeps the figures of its best round."""

    def __init__(self, controller: str, device: str, folder: Path):
        self.controller, self.device, self.folder = controller, device, folder
        self.best: dict | None = None

    def round(self) -> float:
        """Fly once; returns wall seconds per sim second (lower is better) and keeps the round's figures."""
        timers = {}
        options = RunConfig(scene=SCENE, controller=self.controller, device=self.device)
        with FlightSession(options, self.folder / f"record_{self.controller}.parquet",
                           before_start=lambda flight: timers.update(time_host_stages(flight.loop.plan.stages))) \
                as session:
            flight = session.flight
            for timer in timers.values():  # start-up's own calls are not part of the flight
                timer.seconds, timer.calls = 0.0, 0
            ticks = int(round(CAP_S * 1e9 / flight.loop.dt_ns))
            ticks0, sim0 = flight.loop.ticks, flight.loop.sim_time
            began = time.perf_counter()
            done = session.fly(ticks)
            session.writer.drain()
            wall = time.perf_counter() - began
            sim = flight.loop.sim_time - sim0
            figures = {
                "done": bool(done),
                "sim_s": sim,
                "ticks": flight.loop.ticks - ticks0,
                "rtf": sim / wall,
                "host_share": sum(t.seconds for t in timers.values()) / wall,
                "host_stages": sorted(timers),
                "stats": flight.vehicle.controller.stats(),
            }
        if self.best is None or figures["rtf"] > self.best["rtf"]:
            self.best = figures
        return wall / sim


def run(device: str = "cpu") -> dict:
    with tempfile.TemporaryDirectory(prefix="nexus-bench-host-") as folder:
        flights = {name: _HostFlight(name, device, Path(folder)) for name in ("mpc", "policy")}
        alternating_best({name: f.round for name, f in flights.items()}, rounds=ROUNDS)
    mpc, policy = flights["mpc"].best, flights["policy"].best
    result = {
        "suite": "host",
        "device": device,
        "scene": SCENE,
        "rounds": ROUNDS,
        "mpc_done": mpc["done"],
        "policy_done": policy["done"],
        "sim_s": mpc["sim_s"],
        "rtf_mpc": mpc["rtf"],
        "rtf_policy": policy["rtf"],
        "host_share_mpc": mpc["host_share"],
        "host_share_policy": policy["host_share"],
        "host_stages_mpc": mpc["host_stages"],
        "host_stages_policy": policy["host_stages"],
        "solve_us_median": mpc["stats"].get("solve_us_median"),
        "solve_us_p99": mpc["stats"].get("solve_us_p99"),
        "solves": mpc["stats"].get("solves"),
        "solve_failures": mpc["stats"].get("failures"),
        "inference_us_median": policy["stats"].get("inference_us_median"),
        "inference_us_p99": policy["stats"].get("inference_us_p99"),
    }
    result["targets_met"] = {name: result[name] >= bound for name, bound in TARGETS.items()}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("figure-eight flown [s sim]", f"{result['sim_s']:.2f}"),
        ("RTF MPC (target >= 1.5)", f"{result['rtf_mpc']:.2f}x"),
        ("RTF policy (target >= 5)", f"{result['rtf_policy']:.2f}x"),
        ("host share of wall time, MPC", f"{result['host_share_mpc']:.0%}"),
        ("host share of wall time, policy", f"{result['host_share_policy']:.0%}"),
        ("MPC solve, median [µs]", f"{result['solve_us_median']:.0f}"),
        ("MPC solve, p99 [µs]", f"{result['solve_us_p99']:.0f}"),
        ("MPC solves / failures", f"{result['solves']} / {result['solve_failures']}"),
        ("policy inference, median [µs]", f"{result['inference_us_median']:.0f}"),
        ("policy inference, p99 [µs]", f"{result['inference_us_p99']:.0f}"),
    ]
