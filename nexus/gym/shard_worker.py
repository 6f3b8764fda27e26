"""One shard of a :class:`~nexus.gym.sharded_env.ShardedVectorEnv`: ``python -m nexus.gym.shard_worker FD PID``.

FD is this process's end of a socket pair with the environment (PID: the process that holds the other end, and
this one's parent). The first message is the keywords of the shard's
:class:`~nexus.gym.env.NexusVectorEnv` (its ``first_world`` and ``num_envs`` are the shard's range); the shard
builds it and answers with its spaces and sizes, then serves the environment's commands until told to close
or until the socket closes (the environment is gone). Every message is bytes, its first byte the kind:

- ``S`` + the shard's action rows (float32): one step; the answer is ``O`` + the observation rows (float32),
  the rewards (float32), the terminated and truncated flags (one byte each), then, when a world of the shard
  ended in this step, the final observation rows (float32);
- ``R`` + a pickled seed (or None): a reset; the answer ``O`` + the observation rows;
- ``C``: close; no answer.

An error answers ``E`` + its one-line text (a :class:`~nexus.core.errors.BuildError` as ``B`` + its text, so the
environment raises the same error a one-process environment would), and the shard exits.
"""

from __future__ import annotations

import os
import pickle
import socket
import sys
import traceback
from multiprocessing.connection import Connection

import numpy as np

from nexus.core.errors import BuildError
from nexus.core.warp_setup import init_warp
from nexus.gym.env import NexusVectorEnv
from nexus.runtime.shard_child import _stop_with_parent


def step_answer(env: NexusVectorEnv, actions: bytes) -> bytes:
    """One step of ``env`` with the action rows in ``actions``; the ``O`` answer (see the module doc)."""
    rows = np.frombuffer(actions, dtype=np.float32).reshape(env.num_envs, env.action_width)
    obs, reward, terminated, truncated, info = env.step(rows)
    parts = [b"O", obs.tobytes(), reward.tobytes(), terminated.astype(np.uint8).tobytes(),
             truncated.astype(np.uint8).tobytes()]
    if "final_obs" in info:
        parts.append(info["final_obs"].tobytes())
    return b"".join(parts)


def serve(conn: Connection) -> None:
    """Build the shard's environment from the first message, then answer commands until ``C`` or the end."""
    env = None
    try:
        keywords = pickle.loads(conn.recv_bytes())
        env = NexusVectorEnv(**keywords)
        conn.send_bytes(b"M" + pickle.dumps({
            "observation_space": env.single_observation_space, "action_space": env.single_action_space,
            "action_width": env.action_width, "observation_width": env.observation_width,
            "episode_steps": env.episode_steps, "decimation": env.decimation, "hover_fraction": env.hover_fraction,
        }))
        while True:
            try:
                message = conn.recv_bytes()
            except (EOFError, OSError):
                return  # the environment is gone
            kind = message[:1]
            if kind == b"S":
                conn.send_bytes(step_answer(env, message[1:]))
            elif kind == b"R":
                obs, _ = env.reset(seed=pickle.loads(message[1:]))
                conn.send_bytes(b"O" + obs.tobytes())
            elif kind == b"C":
                return
            else:
                raise ValueError(f"unknown command {kind!r}")
    except BuildError as error:
        _answer(conn, b"B" + str(error).encode())
    except Exception as error:  # noqa: BLE001 (reported to the environment as one line)
        _answer(conn, b"E" + f"{type(error).__name__}: {error}".encode())
        raise
    finally:
        if env is not None:
            env.close()


def _answer(conn: Connection, message: bytes) -> None:
    try:
        conn.send_bytes(message)
    except OSError:
        pass  # the environment is gone: nobody to tell


def main(argv: list[str]) -> int:
    _stop_with_parent(int(argv[1]))
    init_warp(False)
    conn = Connection(socket.socket(fileno=int(argv[0])).detach())
    try:
        serve(conn)
    except Exception:  # noqa: BLE001 (already told to the environment in one line; the traceback goes to stderr)
        traceback.print_exc()
        return 1
    finally:
        conn.close()
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stderr.flush()
    os._exit(code)  # without the interpreter's teardown (Warp's and LLVM's), which only delays the close
