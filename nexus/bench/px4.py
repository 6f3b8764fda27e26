"""Suite ``px4``: Nexus's side of the PX4 lockstep ring, against a peer that answers at once.

The PX4 ring (sensors out, actuators in, over a real loopback TCP socket) flies
against the scripted stand-in for PX4 (``nexus.px4.scripted_peer``), in a
process of its own, which answers every sensor message at once with a hover
row. The figures are therefore Nexus's own cost, not PX4's: real PX4 adds its
compute on top and is measured separately (docs/px4.md).

* ``exchange_us``: wall time of the PX4 host stage (``exchange``: the ground
  truth and sensor frames packed, the socket round trip, the answer parsed)
  per tick, timed around the stage's own calls **inside real ticks** of the ring, so each
  call does what it does in a flight: ground truth every other tick, a GPS fix
  every 25th, new mag and baro samples at their rates. ``messages_per_tick``
  says how many messages those calls sent per tick. ``exchange_own_us`` is
  the CPU time of the sim's thread in those calls (``time.thread_time``):
  Nexus's own work, system calls included (reading the samples, packing, the
  send, parsing the answer, writing the controls). The rest,
  ``exchange_wait_us``, the thread was off the CPU: waiting for the peer's
  answer, or preempted by the peer it had just woken (on 2 cores the peer
  often runs inside the sender's ``send``).
* ``rtf_px4_instant_peer``: real-time factor of the whole PX4 ring (graphs,
  host stages, record drained to Parquet) against the instant peer.
* ``rtf_pid``: the PID ring, flown the same way, for comparison.
* ``fleet_*``: the same for :data:`FLEET` vehicles in one world, each with an
  instant peer process of its own (``--vehicles 4``, one PX4 instance each):
  the exchange (every instance sent its tick, then every answer awaited) per
  tick and per instance, and the ring's tick. ``fleet_exchange_per_instance``
  is that per-instance cost over one instance's exchange: how Nexus's own side
  grows with instances (real PX4 adds about 0.6 ms of CPU per instance).

Each figure is the best of ``ROUNDS`` rounds of ``ROUND_TICKS`` ticks, the
PX4 and PID rounds taken in turn (as the other suites do), so a busy spell
of the machine does not favour one side. A round whose peer answers were not
all taken in lockstep fails the suite instead of reporting a free-running ring.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nexus.bench.timing import TimedCall, alternating_best


class _CpuTimedCall(TimedCall):
    """A :class:`TimedCall` that also adds up the CPU time [s] of the calling thread."""

    def __init__(self, run):
        super().__init__(run)
        self.cpu_seconds = 0.0

    def __call__(self, io) -> None:
        began = time.thread_time()
        try:
            super().__call__(io)
        finally:
            self.cpu_seconds += time.thread_time() - began
from nexus.runtime.flight import fly
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

#: One control tick of the default run [s].
TICK_S = RunConfig().dt
ROUND_TICKS = 500
ROUNDS = 6
#: The Astro Max's hover command on the first four outputs.
HOVER_ROW = [0.5722] * 4 + [0.0] * 12
#: Vehicles (PX4 instances) of the fleet ring, 2 m apart.
FLEET = 4


class _Px4Ring:
    """A PX4 flight connected to an instant peer process per vehicle, in lockstep, ready for timed rounds."""

    def __init__(self, device: str, folder: Path, vehicles: int = 1):
        options = {"host": "127.0.0.1", "port": 0, "connect_timeout": 10.0, "answer_timeout": 5.0}
        self.timers = {}
        self.peers: list[subprocess.Popen] = []
        config = RunConfig(controller="px4", controller_options=options, device=device, vehicles=vehicles)
        self.session = FlightSession(config, folder / f"record_px4_{vehicles}.parquet", before_start=self._start_peer)
        try:
            self.session.__enter__()
            self.flight, self.writer = self.session.flight, self.session.writer
            # Connect and enter lockstep outside the timed rounds (the boot ticks wait for the peer's
            # first answer while the peer process starts).
            deadline = time.monotonic() + 30.0
            while not all(link.lockstep for link in self.links):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the instant peer did not answer within 30 s: {self.px4.stats()}")
                fly(self.flight, self.writer, 1)
        except BaseException:
            self.close()
            raise
        self.host_us: list[float] = []
        self.own_us: list[float] = []
        self.messages_per_tick: list[float] = []

    def _start_peer(self, flight) -> None:
        """Before start-up: the peer processes listening, and the PX4 stages timed."""
        self.px4 = flight.vehicle.controller
        #: One link per PX4 instance (the fleet's peers, or the one controller).
        self.links = getattr(self.px4, "peers", [self.px4])
        # Each peer runs in a process of its own, as PX4 does, so it does not share our GIL.
        for link in self.links:
            self.peers.append(subprocess.Popen([sys.executable, "-m", "nexus.px4.scripted_peer", "--port",
                                                str(link.link.port), "--row", *map(str, HOVER_ROW[:4])]))
        for stage in flight.loop.plan.stages:
            if stage.host and stage.component is self.px4:
                stage.run = self.timers[stage.name] = _CpuTimedCall(stage.run)

    def round(self) -> float:
        """One round; its wall seconds per tick. Host-stage time and messages are kept per round."""
        timers = self.timers
        host0 = sum(t.seconds for t in timers.values())
        cpu0 = sum(t.cpu_seconds for t in timers.values())
        before = [(link.link.sent, link.answers, link.exchanges) for link in self.links]
        began = time.perf_counter()
        fly(self.flight, self.writer, ROUND_TICKS)
        wall = time.perf_counter() - began
        for link, (_, answers0, exchanges0) in zip(self.links, before):
            if (link.exchanges - exchanges0 != ROUND_TICKS or link.answers - answers0 != ROUND_TICKS
                    or link.link.bad_messages):
                raise RuntimeError(f"the instant peer's answers were not all taken in lockstep: {link.stats()}")
        self.host_us.append((sum(t.seconds for t in timers.values()) - host0) / ROUND_TICKS * 1e6)
        self.own_us.append((sum(t.cpu_seconds for t in timers.values()) - cpu0) / ROUND_TICKS * 1e6)
        self.messages_per_tick.append(sum(link.link.sent - sent for link, (sent, _, _) in zip(self.links, before))
                                      / ROUND_TICKS)
        return wall / ROUND_TICKS

    def close(self) -> None:
        try:
            self.session.close()
        finally:
            for peer in self.peers:
                peer.terminate()
                peer.wait(timeout=5)


class _PidRing:
    def __init__(self, device: str, folder: Path):
        self.session = FlightSession(RunConfig(device=device), folder / "record_pid.parquet").__enter__()
        self.flight, self.writer = self.session.flight, self.session.writer

    def round(self) -> float:
        ticks0 = self.flight.loop.ticks
        began = time.perf_counter()
        fly(self.flight, self.writer, ROUND_TICKS)
        return (time.perf_counter() - began) / max(self.flight.loop.ticks - ticks0, 1)

    def close(self) -> None:
        self.session.close()


def run(device: str = "cpu") -> dict:
    with tempfile.TemporaryDirectory(prefix="nexus-bench-px4-") as folder:
        px4 = _Px4Ring(device, Path(folder))
        try:
            pid = _PidRing(device, Path(folder))
            try:
                fleet = _Px4Ring(device, Path(folder), vehicles=FLEET)
                try:
                    best = alternating_best({"px4": px4.round, "pid": pid.round, "fleet": fleet.round},
                                            rounds=ROUNDS)
                finally:
                    fleet.close()
            finally:
                pid.close()
        finally:
            px4.close()
    best_round = min(range(ROUNDS), key=lambda k: px4.host_us[k])
    fleet_round = min(range(ROUNDS), key=lambda k: fleet.host_us[k])
    result = {
        "suite": "px4",
        "device": device,
        "rounds": ROUNDS,
        "round_ticks": ROUND_TICKS,
        "exchange_us": px4.host_us[best_round],
        "exchange_own_us": px4.own_us[best_round],
        "exchange_wait_us": px4.host_us[best_round] - px4.own_us[best_round],
        "messages_per_tick": px4.messages_per_tick[best_round],
        "px4_tick_us": best["px4"] * 1e6,
        "rtf_px4_instant_peer": TICK_S / best["px4"],
        "rtf_pid": TICK_S / best["pid"],
        "fleet_instances": FLEET,
        "fleet_exchange_us": fleet.host_us[fleet_round],
        "fleet_exchange_own_us": fleet.own_us[fleet_round],
        "fleet_messages_per_tick": fleet.messages_per_tick[fleet_round],
        "fleet_tick_us": best["fleet"] * 1e6,
        "rtf_px4_fleet_instant_peers": TICK_S / best["fleet"],
    }
    result["fleet_exchange_per_instance"] = result["fleet_exchange_us"] / FLEET / result["exchange_us"]
    result["targets_met"] = {"rtf_px4_instant_peer": result["rtf_px4_instant_peer"] >= 25.0,
                             "exchange_us": result["exchange_us"] <= 80.0}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("PX4 host stage per tick, inside real ticks [µs]", f"{result['exchange_us']:.0f}"),
        ("  of which Nexus's own work (CPU time of the sim's thread) [µs]", f"{result['exchange_own_us']:.0f}"),
        ("  of which off the CPU (the peer, waking it) [µs]", f"{result['exchange_wait_us']:.0f}"),
        ("  messages sent per tick", f"{result['messages_per_tick']:.2f}"),
        ("PX4 ring tick with an instant peer [µs]", f"{result['px4_tick_us']:.0f}"),
        ("RTF, PX4 ring, instant peer (target >= 25)", f"{result['rtf_px4_instant_peer']:.1f}x"),
        ("RTF, PID ring", f"{result['rtf_pid']:.1f}x"),
        (f"PX4 host stage per tick, {result['fleet_instances']} instances in one world [µs]",
         f"{result['fleet_exchange_us']:.0f}"),
        ("  of which Nexus's own work [µs]", f"{result['fleet_exchange_own_us']:.0f}"),
        ("  per instance, over one instance's exchange", f"{result['fleet_exchange_per_instance']:.2f}"),
        (f"PX4 ring tick, {result['fleet_instances']} instances, instant peers [µs]", f"{result['fleet_tick_us']:.0f}"),
        (f"RTF, PX4 ring, {result['fleet_instances']} instances, instant peers",
         f"{result['rtf_px4_fleet_instant_peers']:.1f}x"),
    ]
