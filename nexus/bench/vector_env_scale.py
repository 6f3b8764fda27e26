"""The vector environment's drone-ticks per second, its worlds in one process and sharded (issue 46, points 3, 4).

For each world count N (16, 64 and 1,024 by default) and each shard count (1: :class:`~nexus.gym.env.NexusVectorEnv`
in one process; K: :class:`~nexus.gym.sharded_env.ShardedVectorEnv`), ``nexus/Hover-v0``'s environment as
:func:`~nexus.gym.sharded_env.make_vector_env` builds it (CTBR actions, observation noise on, one step = the
policy's 5 ticks at 250 Hz with motors, sensors and contacts) steps uniform random actions drawn from a fixed
seed (worlds crash and restart as they do in training). Each row: N x 5 ticks x steps over the best round's
wall time (the clock that sharding shortens; other jobs on the machine lengthen it, so each result carries
the load average before and after). Each configuration runs in a process of its own (``python -m
nexus.bench.vector_env_scale measure N K``), so no configuration pays for another's memory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

from nexus.core.warp_setup import init_warp
from nexus.gym.sharded_env import cores, make_vector_env

WORLDS = (16, 64, 1024)
#: The scale suite measures the vector env at its world counts from this one on (fewer: a check run's sizes).
MIN_WORLDS = 16
ROUNDS = 3
#: World-steps in one round (steps = this / N, at least 10): about a second of stepping on the 2-core CPU.
ROUND_WORLD_STEPS = 20_000


def measure(worlds: int, shards: int, rounds: int = ROUNDS, seed: int = 0) -> dict:
    """One row, in this process (and the shards' processes)."""
    began = time.perf_counter()
    env = make_vector_env(num_envs=worlds, shards=shards)
    try:
        built = time.perf_counter() - began
        rng = np.random.default_rng(seed)
        env.reset(seed=seed)
        steps = max(10, ROUND_WORLD_STEPS // worlds)
        batches = [rng.uniform(-1.0, 1.0, (steps, worlds, env.action_width)).astype(np.float32) for _ in range(rounds)]
        for k in range(5):  # the first steps outside the rounds
            env.step(batches[0][k % steps])
        best = float("inf")
        for actions in batches:
            start = time.perf_counter()
            for rows in actions:
                env.step(rows)
            best = min(best, (time.perf_counter() - start) / steps)
        ticks = env.decimation
    finally:
        env.close()
    return {"worlds": worlds, "shards": shards, "step_ms": best * 1e3, "drone_ticks_per_s": worlds * ticks / best,
            "env_steps_per_s": worlds / best, "ticks_per_step": ticks, "round_steps": steps, "rounds": rounds,
            "build_s": built}


def _in_child(worlds: int, shards: int, rounds: int) -> dict:
    command = [sys.executable, "-m", "nexus.bench.vector_env_scale", "measure", str(worlds), str(shards), str(rounds)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"vector env at {worlds} worlds in {shards} shards failed (exit {done.returncode}):\n"
                           f"{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(worlds: tuple[int, ...] = WORLDS, shards: int | None = None, rounds: int = ROUNDS) -> dict:
    """Every world count in one process and in ``shards`` (default: one per core) processes."""
    shards = shards or max(2, cores())
    load_before = os.getloadavg()
    rows = []
    for n in worlds:
        one = _in_child(n, 1, rounds)
        split = _in_child(n, min(shards, n), rounds)
        rows.append({"worlds": n, "shards": split["shards"], "one_process": one, "sharded": split,
                     "speedup": split["drone_ticks_per_s"] / one["drone_ticks_per_s"]})
    return {"clock": "wall", "cores": cores(), "rows": rows,
            "load_average": {"before": list(load_before), "after": list(os.getloadavg())}}


def lines(result: dict) -> list[tuple[str, str]]:
    """The bench table's lines."""
    out = []
    for row in result["rows"]:
        out.append((f"vector env, N={row['worlds']}: one process / {row['shards']} shards [drone-ticks/s, wall]",
                    f"{row['one_process']['drone_ticks_per_s']:,.0f} / {row['sharded']['drone_ticks_per_s']:,.0f} "
                    f"({row['speedup']:.2f}x)"))
    before, after = result["load_average"]["before"][0], result["load_average"]["after"][0]
    out.append(("vector env: load average (1 min) before / after", f"{before:.2f} / {after:.2f}"))
    return out


def main(argv: list[str]) -> None:
    if argv[:1] == ["measure"]:
        init_warp(False)
        print(json.dumps(measure(int(argv[1]), int(argv[2]), int(argv[3]))))
        return
    if argv[:1] == ["run"]:
        init_warp(False)
        worlds = tuple(int(w) for w in argv[1].split(",")) if len(argv) > 1 else WORLDS
        result = run(worlds)
        print(json.dumps(result))
        for name, value in lines(result):
            print(f"{name}: {value}", file=sys.stderr)
        return
    raise SystemExit("usage: python -m nexus.bench.vector_env_scale measure WORLDS SHARDS ROUNDS | run [16,64,1024]")


if __name__ == "__main__":
    main(sys.argv[1:])
