"""Suite ``swarm``: K vehicles in one world against K worlds of one vehicle (issue 47, point 7).

Three flights of the default PID mission, each ``vehicles`` slots, built in one process:

* ``worlds``: ``nexus run --worlds K`` (K worlds of one vehicle);
* ``swarm``: ``nexus run --vehicles K --no-vehicle-contact`` (the same K slots; each vehicle in a Newton world
  of its own, so no interaction);
* ``swarm_contact``: ``nexus run --vehicles K`` (the K vehicles share one world: they collide, the ``collision``
  stage watches their contacts, and the ``downwash`` stage blows each one's rotor jets on the others).

All three take off (``AIRBORNE_S`` of sim, untimed), then rounds of ``ROUND_TICKS`` captured ticks of each
alternate (:func:`nexus.bench.timing.alternating_best`), records drained outside the rounds on every side alike;
each round is timed by the wall clock and by this process's CPU time, the best round of each kept. So

    swarm_vs_worlds = swarm tick / worlds tick              (target <= 1.3, wall)
    swarm_contact_vs_worlds = swarm_contact tick / worlds tick   (reported, no target)

Then, on the ``swarm_contact`` flight as its rounds left it, the ``downwash`` and ``collision`` stages alone, each
captured and replayed from the same tick state (:func:`nexus.bench.fixed_wing.stage_cost_us`, CPU time), and
their share of that flight's tick (CPU time, the same clock); and the same for the physics ``step`` of the
``swarm_contact`` and the ``worlds`` flights (``step_us``: where the rest of the contact's cost goes).

Last, throughput at ``big_worlds`` x ``vehicles`` (64 x 16 by default): ``--worlds 64 --vehicles 16`` with and
without contact, after ``BIG_AIRBORNE_S`` untimed, ``BIG_ROUNDS`` alternating rounds of ``BIG_ROUND_TICKS`` ticks;
``drone_steps_per_s`` = slots x ticks / wall seconds of the best round.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import warp as wp

from nexus.bench.fixed_wing import stage_cost_us
from nexus.bench.timing import alternating_best
from nexus.runtime.config import RunConfig
from nexus.runtime.flight import fly
from nexus.runtime.flight_session import FlightSession

#: One control tick of the default run [s].
TICK_S = RunConfig().dt
#: Slots of the ratio's flights: K vehicles of one world, or K worlds.
VEHICLES = 16
#: Worlds of the throughput figure (each of ``VEHICLES`` vehicles).
BIG_WORLDS = 64
#: Sim time flown untimed before the rounds, so every side is in the air [s].
AIRBORNE_S = 2.0
BIG_AIRBORNE_S = 1.0
#: Ticks a round and rounds a side (the ratio's flights; the throughput's).
ROUND_TICKS, ROUNDS = 256, 6
BIG_ROUND_TICKS, BIG_ROUNDS = 16, 3
#: The stages only a world of several vehicles runs, whose share of the tick is reported.
SWARM_STAGES = ("downwash", "collision")


def flights(vehicles: int, worlds: int = 1) -> dict[str, RunConfig]:
    """The flights compared: ``worlds`` x ``vehicles`` slots each (the ``worlds`` side only when ``worlds`` is 1)."""
    sides = {"swarm": RunConfig(worlds=worlds, vehicles=vehicles, vehicle_contact=False),
             "swarm_contact": RunConfig(worlds=worlds, vehicles=vehicles)}
    if worlds == 1:
        sides = {"worlds": RunConfig(worlds=vehicles), **sides}
    return sides


def timed_rounds(device: str, folder: Path, sides: dict[str, RunConfig], airborne_s: float, ticks: int,
                 rounds: int) -> dict:
    """Best wall and CPU seconds per tick of each side's flight, their rounds alternating; with the sessions
    still open for the caller (``sessions``) inside the returned exit stack (``stack``)."""
    stack = contextlib.ExitStack()
    try:
        sessions = {name: stack.enter_context(FlightSession(replace(config, device=device),
                                                            folder / f"record_{name}.parquet"))
                    for name, config in sides.items()}
        for session in sessions.values():
            fly(session.flight, session.writer, int(round(airborne_s / TICK_S)))
            session.writer.drain()
        cpu: dict[str, float] = {name: float("inf") for name in sessions}

        def round_of(name, session):
            def measure() -> float:
                wp.synchronize_device(device)
                wall, own = time.perf_counter(), time.process_time()
                fly(session.flight, session.writer, ticks)
                wp.synchronize_device(device)
                wall, own = (time.perf_counter() - wall) / ticks, (time.process_time() - own) / ticks
                cpu[name] = min(cpu[name], own)
                session.writer.drain()  # outside the round, on every side alike
                return wall
            return measure

        wall = alternating_best({name: round_of(name, session) for name, session in sessions.items()}, rounds)
    except BaseException:
        stack.close()
        raise
    return {"wall": wall, "cpu": cpu, "sessions": sessions, "stack": stack}


def run(device: str = "cpu", vehicles: int = VEHICLES, big_worlds: int = BIG_WORLDS, rounds: int = ROUNDS,
        big_rounds: int = BIG_ROUNDS) -> dict:
    """The suite's figures (module doc); ``vehicles`` K, ``big_worlds`` the throughput's worlds (0: skipped)."""
    with tempfile.TemporaryDirectory(prefix="nexus-bench-swarm-") as folder:
        folder = Path(folder)
        taken = timed_rounds(device, folder, flights(vehicles), AIRBORNE_S, ROUND_TICKS, rounds)
        with taken["stack"]:
            wall, cpu = taken["wall"], taken["cpu"]
            loop = taken["sessions"]["swarm_contact"].flight.loop
            stage_us = {stage.name: stage_cost_us(loop, stage) for stage in loop.plan.stages
                        if stage.name in SWARM_STAGES}
            step_us = {name: stage_cost_us(taken["sessions"][name].flight.loop, stage)
                       for name in ("worlds", "swarm_contact")
                       for stage in taken["sessions"][name].flight.loop.plan.stages if stage.name == "step"}
            stages = {name: [stage.name for stage in session.flight.loop.plan.stages]
                      for name, session in taken["sessions"].items()}
        big = []
        if big_worlds:
            (folder / "big").mkdir()  # its records apart from the ratio's, whatever the sizes
            taken_big = timed_rounds(device, folder / "big", flights(vehicles, big_worlds), BIG_AIRBORNE_S,
                                     BIG_ROUND_TICKS, big_rounds)
            with taken_big["stack"]:
                for name, seconds in taken_big["wall"].items():
                    slots = big_worlds * vehicles
                    big.append({"flight": name, "worlds": big_worlds, "vehicles": vehicles, "slots": slots,
                                "contact": name == "swarm_contact", "loop_tick_us": seconds * 1e6,
                                "drone_steps_per_s": slots / seconds})
    contact_cpu_us = cpu["swarm_contact"] * 1e6
    result = {
        "suite": "swarm",
        "device": device,
        "clock": "wall (CPU time beside it)",
        "vehicles": vehicles,
        "loop_tick_us": {name: seconds * 1e6 for name, seconds in wall.items()},
        "loop_tick_cpu_us": {name: seconds * 1e6 for name, seconds in cpu.items()},
        "swarm_vs_worlds": wall["swarm"] / wall["worlds"],
        "swarm_contact_vs_worlds": wall["swarm_contact"] / wall["worlds"],
        "swarm_vs_worlds_cpu": cpu["swarm"] / cpu["worlds"],
        "swarm_contact_vs_worlds_cpu": cpu["swarm_contact"] / cpu["worlds"],
        "stage_us": stage_us,
        "stage_share": {name: us / contact_cpu_us for name, us in stage_us.items()},
        "swarm_stages_share": sum(stage_us.values()) / contact_cpu_us,
        "step_us": step_us,
        "contact_only_stages": sorted(set(stages["swarm_contact"]) - set(stages["worlds"])),
        "big": big,
    }
    result["targets_met"] = {"swarm_vs_worlds": result["swarm_vs_worlds"] <= 1.3}
    return result


def table(result: dict) -> list[tuple[str, str]]:
    k = result["vehicles"]
    tick, cpu = result["loop_tick_us"], result["loop_tick_cpu_us"]
    rows = [
        (f"loop tick [µs, wall]: {k} worlds / {k} vehicles apart / {k} vehicles in contact",
         f"{tick['worlds']:.1f} / {tick['swarm']:.1f} / {tick['swarm_contact']:.1f}"),
        ("the same in CPU time [µs]", f"{cpu['worlds']:.1f} / {cpu['swarm']:.1f} / {cpu['swarm_contact']:.1f}"),
        ("swarm vs worlds, no interaction (target <= 1.3)", f"{result['swarm_vs_worlds']:.2f}"),
        ("swarm vs worlds, contact and downwash", f"{result['swarm_contact_vs_worlds']:.2f}"),
    ]
    for name, us in result["stage_us"].items():
        rows.append((f"stage {name} at {k} vehicles [µs a tick] (share, CPU time)",
                     f"{us:.1f} ({result['stage_share'][name]:.1%})"))
    rows.append((f"physics step [µs a tick, CPU time]: {k} worlds / {k} vehicles in contact",
                 f"{result['step_us']['worlds']:.1f} / {result['step_us']['swarm_contact']:.1f}"))
    for row in result["big"]:
        rows.append((f"{row['worlds']} worlds x {row['vehicles']} vehicles, "
                     f"{'contact' if row['contact'] else 'no contact'}: drone-steps/s (tick [µs])",
                     f"{row['drone_steps_per_s']:,.0f} ({row['loop_tick_us']:.0f})"))
    return rows
