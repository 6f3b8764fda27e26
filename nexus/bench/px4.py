"""Suite ``px4``: the PX4 lockstep exchange's cost, against a peer that answers at once.

The PX4 ring (sensors out, actuators in, over a real loopback TCP socket) runs
against the scripted PX4 stand-in, which answers every sensor message at once
with a hover row, so the figure is Nexus's own cost: the two host stages,
the MAVLink packing and parsing, and the socket round trip. The PID ring's
real-time factor is taken in the same run for comparison. Real PX4 adds its
own compute on top (see docs/px4.md for a measured SITL flight).
"""

from __future__ import annotations

import subprocess
import sys
import time

from nexus.flight import FlightOptions, build_flight
from nexus.startup import start

TICK_S = 0.004
SECONDS = 8.0
HOVER_ROW = [0.5722] * 4 + [0.0] * 12


def _px4_run(device: str) -> tuple[float, int, float]:
    options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
    flight = build_flight(FlightOptions(controller="px4", controller_options=options), device)
    px4 = flight.vehicle.controller
    # The peer runs in a process of its own, as PX4 does, so it does not share our GIL.
    peer = subprocess.Popen(
        [sys.executable, "-m", "nexus.px4.scripted_peer", "--port", str(px4.link.port), "--row", *map(str, HOVER_ROW[:4])]
    )
    try:
        start(flight.loop, flight.vehicle.plant)
        flight.loop.run(5)  # connect and enter lockstep outside the timed stretch
        stages = {s.name: s for s in flight.loop.plan.stages if s.host}
        ticks = int(SECONDS / TICK_S)
        began = time.perf_counter()
        for _ in range(ticks):
            flight.loop.tick()
        wall = time.perf_counter() - began
        # The host stages alone, timed around the same kind of tick.
        truth, exchange = stages["truth"], stages["exchange"]
        samples = 500
        t0 = time.perf_counter()
        for _ in range(samples):
            truth.run(flight.loop.ios[id(truth)])
            exchange.run(flight.loop.ios[id(exchange)])
        exchange_s = (time.perf_counter() - t0) / samples
    finally:
        flight.loop.close()
        peer.terminate()
        peer.wait(timeout=5)
    return wall, ticks, exchange_s


def _pid_run(device: str) -> tuple[float, int]:
    flight = build_flight(FlightOptions(), device)
    start(flight.loop, flight.vehicle.plant)
    ticks = int(SECONDS / TICK_S)
    began = time.perf_counter()
    flight.loop.run(ticks)
    wall = time.perf_counter() - began
    flight.loop.close()
    return wall, flight.loop.ticks


def run(device: str = "cpu") -> dict:
    px4_wall, px4_ticks, exchange_s = _px4_run(device)
    pid_wall, pid_ticks = _pid_run(device)
    result = {
        "suite": "px4",
        "device": device,
        "exchange_us": exchange_s * 1e6,
        "px4_tick_us": px4_wall / px4_ticks * 1e6,
        "rtf_px4_peer": px4_ticks * TICK_S / px4_wall,
        "rtf_pid": pid_ticks * TICK_S / pid_wall,
    }
    result["targets_met"] = {"rtf_px4_peer": result["rtf_px4_peer"] >= 10.0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("truth + exchange host stages per tick [µs]", f"{result['exchange_us']:.0f}"),
        ("PX4 ring tick with an instant peer [µs]", f"{result['px4_tick_us']:.0f}"),
        ("RTF, PX4 ring with instant peer (target >= 10)", f"{result['rtf_px4_peer']:.1f}x"),
        ("RTF, PID ring", f"{result['rtf_pid']:.1f}x"),
    ]
