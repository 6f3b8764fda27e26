"""Suite ``learn``: environment steps per second of :class:`nexus.gym.env.NexusVectorEnv`, and what being an
environment costs over flying.

For each N (1, 16 and 64 worlds on the CPU; 1,024 and 4,096 on CUDA), in one process:

* ``env_steps_per_s``: N over the time of one vector step (the action rows written, one graph replay of the
  policy's 5 ticks, the observation, reward and flag rows read), hover task, CTBR actions, noise on;
* ``env_vs_loop``: that step's time over the time the plain loop (the PID flight of the same vehicle, N worlds,
  no record, airborne at hover like the environment's worlds) takes for the same 5 ticks. Target: at most 1.3.

On the CPU the rounds are timed in this process's CPU time (as the ``worlds`` suite), which other jobs on a
shared machine do not inflate; rounds of the two sides alternate (:func:`nexus.bench.timing.alternating_best`).
"""

from __future__ import annotations

import time

import numpy as np
import warp as wp

from nexus.bench.timing import alternating_best
from nexus.gym.env import NexusVectorEnv
from nexus.runtime.config import RunConfig
from nexus.runtime.flight_session import FlightSession

CPU_WORLDS = (1, 16, 64)
CUDA_WORLDS = (1024, 4096)
ROUNDS = 6
#: Vector steps per round (one policy step is 5 ticks at 50 Hz over 250 Hz).
ROUND_STEPS = 50


def measure(device: str, worlds: int, rounds: int = ROUNDS, steps: int = ROUND_STEPS) -> dict:
    clock = time.process_time if device == "cpu" else time.perf_counter
    env = NexusVectorEnv(num_envs=worlds, device=device)
    ticks = env.decimation
    options = RunConfig(worlds=worlds, record_mode="summary", device=device, ticks_per_replay=ticks, duration=1e6)
    try:
        with FlightSession(options) as session:
            session.fly(int(round(3.0 * 250)))  # the PID's take-off: airborne, near its hover point
            loop = session.loop
            start_loop = loop.snapshot()
            env.reset(seed=0)
            start_env = env.loop.snapshot()
            hover = np.zeros((worlds, env.action_width), dtype=np.float32)

            def env_round() -> float:
                env.loop.restore(start_env)
                wp.synchronize_device(env.device)
                began = clock()
                for _ in range(steps):
                    env.step(hover)
                wp.synchronize_device(env.device)
                return (clock() - began) / steps

            def loop_round() -> float:
                loop.restore(start_loop)
                wp.synchronize_device(session.device)
                began = clock()
                for _ in range(steps):
                    loop.advance(ticks)
                wp.synchronize_device(session.device)
                return (clock() - began) / steps

            env_round(), loop_round()  # the first launches, outside the rounds
            best = alternating_best({"env": env_round, "loop": loop_round}, rounds)
    finally:
        env.close()
    return {"worlds": worlds, "ticks_per_step": ticks, "env_step_us": best["env"] * 1e6,
            "loop_ticks_us": best["loop"] * 1e6, "env_vs_loop": best["env"] / best["loop"],
            "env_steps_per_s": worlds / best["env"]}


def run(device: str = "cpu", worlds: tuple[int, ...] | None = None) -> dict:
    sizes = worlds or (CUDA_WORLDS if device.startswith("cuda") else CPU_WORLDS)
    rows = [measure(device, n) for n in sizes]
    return {"suite": "learn", "device": device,
            "clock": "process CPU time" if device == "cpu" else "wall", "rows": rows,
            "targets_met": {f"env_vs_loop_{r['worlds']}": r["env_vs_loop"] <= 1.3 for r in rows}}


def table(result: dict) -> list[tuple[str, str]]:
    lines = []
    for row in result["rows"]:
        n = row["worlds"]
        lines += [
            (f"N={n}: vector step / plain loop's {row['ticks_per_step']} ticks [µs] ({result['clock']})",
             f"{row['env_step_us']:.1f} / {row['loop_ticks_us']:.1f}"),
            (f"N={n}: env vs loop (target <= 1.3)", f"{row['env_vs_loop']:.2f}"),
            (f"N={n}: environment steps per second", f"{row['env_steps_per_s']:,.0f}"),
        ]
    return lines
