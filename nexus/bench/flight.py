"""Suite ``flight`` (the default): real-time factor of the default PID flight on the CPU.

Three measurements in one process:

* ``rtf_captured``: the whole default mission flown captured, start-up
  excluded, the record drained to Parquet as a run does;
* ``rtf_eager``: the same ring flown eager over a shorter stretch (eager is slow);
* ``loop_vs_bare``: the loop's time per tick against the bare captured
  ``solver.step`` of the same model **in the same airborne state**. A second
  flight takes off (``AIRBORNE_S`` of sim time, untimed); then rounds of
  ``ROUND_TICKS`` mission ticks alternate with rounds of as many bare steps
  started from the state the loop has just reached, and with rounds that
  drain a full record table to Parquet (a run drains one every ``capacity``
  ticks); the loop's figure is its best round plus the best drain's share
  per tick, so the drain counts at the rate a run pays it. The bare steps run on the
  loop's own state arrays, so the state is saved before a bare round and put
  back after it (outside the timed region), and the mission continues as if
  nothing had happened. Both sides report their best round of ``ROUNDS``.
  On the CPU the rounds are timed in this process's CPU time (the machine is
  shared; waiting for a core is not the loop's work), and again by the wall
  clock (``loop_vs_bare_wall``); on CUDA by the wall clock only.
  The mission is airborne from about 0.5 s to about 26 s; the rounds cover
  ``AIRBORNE_S`` to ``AIRBORNE_S + ROUNDS * ROUND_TICKS * 4 ms`` (2 s to 12.2 s).

``loop_vs_bare_ekf`` is the same figure for the default flight flown on the EKF
(``--estimator ekf``): a third flight, the same rounds, its loop against the bare
step of its own plant from the state that loop reached (the bare step is the
same solver step either way; the loop adds the filter's stages).

``launch_us`` and ``memset_us`` (:mod:`nexus.bench.replay_cost`) are what one trivial captured launch and one
memset cost on this machine, taken just before the rounds: the loop's overhead over the bare step is mostly
launches, so a day on which a launch costs more reads a higher ``loop_vs_bare``.

It also reports ``kernels_per_tick`` (graph nodes one tick replays, which
predicts GPU speed where launch latency dominates) and ``ticks_per_replay``,
and ``rtf_featherstone`` and ``kernels_per_tick_featherstone``: the default
mission flown captured with ``--solver featherstone`` (docs/differentiable.md).
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import warp as wp

from nexus.bench.plant import bare_step_graph
from nexus.bench.replay_cost import replay_cost_us
from nexus.bench.timing import alternating_best, bare_step_round
from nexus.core.executors import graph_nodes
from nexus.runtime.flight import fly
from nexus.runtime.config import RunConfig
from nexus.record.writer import RecordWriter
from nexus.runtime.run_file import RunFile
from nexus.runtime.flight_session import FlightSession
from nexus.viz.live import LiveView

#: One control tick of the default run [s].
TICK_S = RunConfig().dt
#: Sim time flown eagerly [s]: enough ticks for a stable figure.
EAGER_S = 1.0
#: Flights of the default mission with and without the live view, each.
VIEW_ROUNDS = 3
#: Longest mission flown captured [s].
CAP_S = 60.0
#: Sim time flown (untimed) before the loop-vs-bare rounds, so both sides start in the air [s].
AIRBORNE_S = 2.0
ROUND_TICKS = 256
ROUNDS = 10


def _fly(eager: bool, device: str, seconds: float, folder: Path, view: bool = False) -> tuple[float, int, float]:
    """(wall seconds, ticks, sim seconds) of the default flight, start-up excluded, record drained.

    ``view``: with the live view of ``nexus run --view`` drawing it (its server started
    before the clock, as a run does; no browser attached).
    """
    record = folder / f"record_{'eager' if eager else 'captured'}.parquet"
    with FlightSession(RunConfig(eager=eager, device=device), record) as session:
        live = None
        if view:
            with contextlib.redirect_stdout(sys.stderr):  # viser's banner must not mix into --json output
                live = LiveView(session.flight, port=0)
        try:
            wall = session.timed(int(round(seconds / TICK_S)), on_progress=live.update if live else None)
        finally:
            if live is not None:
                with contextlib.redirect_stdout(sys.stderr):
                    live.close()
        return wall, session.loop.ticks, session.loop.sim_time


def _featherstone(device: str, folder: Path) -> tuple[float, int]:
    """(real-time factor, graph nodes per tick) of the default mission flown captured on Featherstone."""
    options = RunConfig(solver="featherstone", device=device)
    with FlightSession(options, folder / "record_featherstone.parquet") as session:
        wall = session.timed(int(round(CAP_S / TICK_S)))
        return session.loop.sim_time / wall, session.loop.nodes_per_tick


def _with_and_without_view(device: str, folder: Path, rounds: int = VIEW_ROUNDS) -> dict[str, float]:
    """Best real-time factor of the default mission without and with the live view, flown in turn."""
    best = {"plain": 0.0, "view": 0.0}
    for _ in range(rounds):
        for name in best:
            wall, _, sim = _fly(False, device, CAP_S, folder, view=name == "view")
            best[name] = max(best[name], sim / wall)
    return best


def _state_arrays(plant) -> list[wp.array]:
    """Every array of the plant's state and control: what a bare step may change."""
    arrays = []
    for holder in (plant.state, plant.control):
        arrays += [value for value in vars(holder).values() if isinstance(value, wp.array)]
    return arrays


def loop_against_bare(device: str, folder: Path, wall: bool, options: RunConfig | None = None,
                      rounds: int = ROUNDS) -> dict[str, float]:
    """Best seconds per tick of the flying loop and of the bare step from its airborne state.

    ``wall``: time by the wall clock; else by this process's CPU time (all its
    threads), which other jobs on a shared machine do not inflate. ``options``:
    the flight (default: the default run; the ``worlds`` suite gives N worlds).
    """
    with FlightSession(replace(options or RunConfig(), device=device), folder / "record_rounds.parquet") as session:
        return _rounds(session, device, folder, wall, rounds)


def _rounds(session: FlightSession, device: str, folder: Path, wall: bool, rounds: int) -> dict[str, float]:
    """:func:`loop_against_bare`'s rounds on a started flight."""
    flight, writer = session.flight, session.writer
    fly(flight, writer, int(round(AIRBORNE_S / TICK_S)))
    writer.drain()
    graph = bare_step_graph(flight.vehicle, device)
    arrays = _state_arrays(flight.vehicle.plant)

    clock = time.perf_counter if wall else time.process_time

    def loop_round() -> float:
        began = clock()
        fly(flight, writer, ROUND_TICKS)
        wp.synchronize_device(device)
        seconds = (clock() - began) / ROUND_TICKS
        writer.drain()  # outside the round: a run drains a full table, counted below at its own rate
        return seconds

    status = RunFile(folder, {"stage_plan": flight.loop.plan.text(), "segments": flight.loop.plan.describe(),
                              "options": flight.options.as_dict(), "record_columns": flight.recorder.columns})
    # A run rewrites run.json after each drain: that is part of the drain's cost. One writer for every round, as a
    # run has one for all its drains.
    drains = RecordWriter(folder / "record_drain.parquet", flight.recorder,
                          on_drain=lambda ticks, rows: status.write(ticks=ticks, record_rows=rows))

    def drain_round() -> float:
        """A full table drained to a part file and run.json rewritten, as a run does every ``capacity`` ticks, per tick."""
        drains.pending = flight.recorder.capacity
        began = clock()
        drains.drain()
        return (clock() - began) / flight.recorder.capacity

    def bare_round() -> float:
        return bare_step_round(graph, arrays, ROUND_TICKS, device, clock)

    wp.capture_launch(graph)  # warm the bare graph's first launch outside the rounds
    try:
        best = alternating_best({"loop": loop_round, "bare": bare_round, "drain": drain_round}, rounds)
    finally:
        drains.close()
    best["loop_flying"] = best["loop"]
    best["loop"] = best["loop_flying"] + best["drain"]
    best["height_m"] = float(-flight.loop.output("estimate").numpy()[0]["position"][2])
    best["kernels_per_tick"] = flight.loop.nodes_per_tick
    best["ticks_per_replay"] = flight.loop.ticks_per_replay
    best["bare_kernels"] = graph_nodes(graph)
    best["stages"] = [stage.name for stage in flight.loop.plan.stages]
    return best


def ekf_options() -> RunConfig:
    """The default flight on the EKF: what ``loop_vs_bare_ekf`` times."""
    return RunConfig(estimator="ekf")


def run(device: str = "cpu") -> dict:
    with tempfile.TemporaryDirectory(prefix="nexus-bench-") as folder:
        folder = Path(folder)
        captured_wall, captured_ticks, captured_sim = _fly(False, device, CAP_S, folder)
        eager_wall, eager_ticks, eager_sim = _fly(True, device, EAGER_S, folder)
        replay = replay_cost_us(device)
        # On the CPU the ratio is taken in CPU time: the 2-core machine is shared, and waiting for a core
        # is not work the loop does. On CUDA the GPU works asynchronously, so only wall time means anything.
        best = loop_against_bare(device, folder, wall=device != "cpu")
        best_wall = loop_against_bare(device, folder, wall=True) if device == "cpu" else best
        best_ekf = loop_against_bare(device, folder, wall=device != "cpu", options=ekf_options())
        viewed = _with_and_without_view(device, folder)
        rtf_featherstone, featherstone_nodes = _featherstone(device, folder)
    loop_tick_s = captured_wall / captured_ticks
    result = {
        "suite": "flight",
        "device": device,
        "mission_sim_s": captured_sim,
        "rtf_captured": captured_sim / captured_wall,
        "rtf_eager": eager_sim / eager_wall,
        "rtf_bare_physics": TICK_S / best["bare"],
        "loop_tick_us": loop_tick_s * 1e6,
        "eager_tick_us": eager_wall / eager_ticks * 1e6,
        "round_loop_tick_us": best["loop"] * 1e6,
        "record_drain_us_per_tick": best["drain"] * 1e6,
        "bare_step_us": best["bare"] * 1e6,
        "loop_vs_bare": best["loop"] / best["bare"],
        "loop_vs_bare_wall": best_wall["loop"] / best_wall["bare"],
        "loop_vs_bare_ekf": best_ekf["loop"] / best_ekf["bare"],
        "round_loop_tick_us_ekf": best_ekf["loop"] * 1e6,
        "bare_step_us_ekf": best_ekf["bare"] * 1e6,
        "kernels_per_tick_ekf": best_ekf["kernels_per_tick"],
        "loop_vs_bare_clock": "process CPU time" if device == "cpu" else "wall",
        "launch_us": replay["launch_us"],
        "memset_us": replay["memset_us"],
        "captured_vs_eager": (eager_wall / eager_ticks) / loop_tick_s,
        "rounds_end_height_m": best["height_m"],
        "kernels_per_tick": best["kernels_per_tick"],
        "bare_step_kernels": best["bare_kernels"],
        "ticks_per_replay": best["ticks_per_replay"],
        "rtf_without_view": viewed["plain"],
        "rtf_with_view": viewed["view"],
        "view_cost": 1.0 - viewed["view"] / viewed["plain"],
        "rtf_featherstone": rtf_featherstone,
        "kernels_per_tick_featherstone": featherstone_nodes,
    }
    result["targets_met"] = {"rtf_captured": result["rtf_captured"] >= 20.0, "loop_vs_bare": result["loop_vs_bare"] <= 1.25,
                             "loop_vs_bare_ekf": result["loop_vs_bare_ekf"] <= 1.3,
                             "view_cost": result["view_cost"] <= 0.10}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    return [
        ("default mission flown [s sim]", f"{result['mission_sim_s']:.2f}"),
        ("RTF captured (target >= 20)", f"{result['rtf_captured']:.1f}x"),
        ("RTF eager", f"{result['rtf_eager']:.2f}x"),
        ("RTF bare captured physics step, airborne", f"{result['rtf_bare_physics']:.1f}x"),
        ("loop tick over the whole mission [µs]", f"{result['loop_tick_us']:.1f}"),
        ("loop tick, best airborne round [µs]", f"{result['round_loop_tick_us']:.1f}"),
        ("bare physics step, best airborne round [µs]", f"{result['bare_step_us']:.1f}"),
        (f"loop vs bare, airborne, {result['loop_vs_bare_clock']} (target <= 1.25)", f"{result['loop_vs_bare']:.2f}"),
        ("loop vs bare, airborne, wall time", f"{result['loop_vs_bare_wall']:.2f}"),
        ("one captured launch / memset on this machine now [µs]", f"{result['launch_us']:.3f} / {result['memset_us']:.3f}"),
        (f"loop vs bare on the EKF, airborne, {result['loop_vs_bare_clock']} (target <= 1.3)",
         f"{result['loop_vs_bare_ekf']:.2f} ({result['round_loop_tick_us_ekf']:.1f} / {result['bare_step_us_ekf']:.1f} µs)"),
        ("captured vs eager (speed-up)", f"{result['captured_vs_eager']:.0f}x"),
        ("kernels per tick (graph nodes; bare step alone)", f"{result['kernels_per_tick']} ({result['bare_step_kernels']})"),
        ("ticks per replay", f"{result['ticks_per_replay']}"),
        ("RTF with the live view / without (best of 3 each)", f"{result['rtf_with_view']:.1f}x / {result['rtf_without_view']:.1f}x"),
        ("live view's cost (target <= 10%)", f"{result['view_cost']:.1%}"),
        ("RTF captured, --solver featherstone (kernels per tick)",
         f"{result['rtf_featherstone']:.1f}x ({result['kernels_per_tick_featherstone']})"),
    ]
