"""The vector environment's worlds split over processes, so that a CPU's every core steps worlds.

A MuJoCo Warp step on the CPU runs on one core: one :class:`~nexus.gym.env.NexusVectorEnv` of N worlds
leaves the other cores idle. :class:`ShardedVectorEnv` is the same Gymnasium vector environment (the same
spaces, ``SAME_STEP`` autoreset, ``info["final_obs"]`` and its mask) whose worlds ``[0, N)`` are split into
K contiguous ranges; shard k is a process of its own (:mod:`nexus.gym.shard_worker`) holding the one-process
environment of its range with ``first_world`` = the range's start. World i of N is the world ``first_world =
i`` draws (its seed branch, its variation draws, its flight streams), so every world computes the same bits
in any shard as in one process, and the rows come back concatenated in world order.

One step sends each shard its action rows over a socket pair, every shard steps at once, and the parent
copies their answers into its arrays (the arrays returned are the parent's: the next step overwrites them,
as the one-process environment's views). A shard that dies (killed, or an error inside it) ends the
environment: the others are closed and :class:`ShardError` names the shard, its worlds and how it ended.
:meth:`ShardedVectorEnv.close` stops every shard and waits for it, so no process outlives the environment;
each shard also gets SIGTERM if this process dies.

:func:`make_vector_env` (the ids' ``vector_entry_point``) picks the one-process or the sharded environment:
``shards=None`` takes one shard per core the process may run on when each gets at least
:data:`MIN_SHARD_WORLDS` worlds on the CPU (fewer worlds step faster in one process than the exchange with a
second one costs, and its start), else one process.
"""

from __future__ import annotations

import inspect
import os
import pickle
import signal
import socket
import subprocess
import sys
import tempfile
from multiprocessing.connection import Connection
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv

from nexus.core.errors import BuildError, NexusError
from nexus.gym.env import NexusVectorEnv, check_keywords, keywords_of, refuse_unknown, said
from nexus.runtime.world_ranges import world_ranges as shard_ranges  # each shard's (first world, worlds)

#: The fewest worlds a shard must get for the default to shard. Measured on the 2-core CPU (docs/learning.md,
#: "Both cores"; wall clock, loaded machine): two shards of 8 worlds step 1.06 to 1.14 times as fast as one
#: process of 16, two of 16 1.38 times as fast as one of 32; a shard also costs a fresh interpreter's start.
MIN_SHARD_WORLDS = 16
#: Seconds a shard has to exit after being told to close before it is killed.
CLOSE_GRACE_S = 10.0


class ShardError(NexusError, RuntimeError):
    """A shard's process died or failed: the environment is closed; the message names the shard and its worlds."""


def cores() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, else the CPU count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def default_shards(num_envs: int, device: str = "cpu") -> int:
    """One shard per core when each gets at least :data:`MIN_SHARD_WORLDS` worlds on the CPU, else 1."""
    if device != "cpu":
        return 1  # on a GPU every world is one graph already
    return max(1, min(cores(), num_envs // MIN_SHARD_WORLDS))


def check_shards(shards, num_envs: int, label: str = "shards=") -> int:
    """A shard count: a whole number from 1 to the world count."""
    if isinstance(shards, bool) or not isinstance(shards, (int, np.integer)) or not 1 <= shards <= num_envs:
        raise BuildError(f"{said(label, shards)}: give a whole number of processes from 1 to the {num_envs} worlds "
                         "(or leave it out: one per core when the worlds are enough to pay for it)")
    return int(shards)


class _Shard:
    """One shard's range, process and socket."""

    def __init__(self, index: int, start: int, count: int):
        self.index, self.start, self.count = index, start, count
        self.process: subprocess.Popen | None = None
        self.conn: Connection | None = None
        self.stderr = tempfile.TemporaryFile()

    @property
    def name(self) -> str:
        return f"shard {self.index} (worlds {self.start}-{self.start + self.count - 1})"

    def start_process(self, keywords: dict) -> None:
        ours, theirs = socket.socketpair()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "nexus.gym.shard_worker", str(theirs.fileno()), str(os.getpid())],
                pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=self.stderr, start_new_session=True)  # a Ctrl-C reaches the parent, which closes the shards
        finally:
            theirs.close()  # the shard holds the only other end: its death is this end's EOF
        self.conn = Connection(ours.detach())
        self.conn.send_bytes(pickle.dumps(keywords))

    def why(self) -> str:
        """How the process ended, in a few words (it is waited for, briefly, to know)."""
        code = None
        if self.process is not None:
            try:
                code = self.process.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                code = None
        if code is not None and code < 0:
            return f"was killed by {signal.Signals(-code).name}"
        self.stderr.seek(0)
        lines = [line for line in self.stderr.read().decode(errors="replace").splitlines() if line.strip()]
        tail = f": {lines[-1].strip()}" if lines else ""
        return f"exited with status {code}{tail}" if code is not None else f"closed its socket{tail}"

    def stop(self) -> None:
        """Tell the shard to close, wait for it (kill it past the grace) and release the socket."""
        if self.conn is not None:
            try:
                self.conn.send_bytes(b"C")
            except OSError:
                pass
        if self.process is not None and self.process.poll() is None:
            try:
                self.process.wait(timeout=CLOSE_GRACE_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        self.stderr.close()


class ShardedVectorEnv(VectorEnv):
    """``num_envs`` worlds in ``shards`` processes, as one :class:`~nexus.gym.env.NexusVectorEnv` (module doc).

    The keywords are :class:`~nexus.gym.env.NexusVectorEnv`'s and ``shards``; the CPU only, no ``human`` render
    (world 0's live view needs its graph in this process). Bad values are refused before any process starts.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, shards: int = 2, **keywords):
        valid = keywords_of(NexusVectorEnv)
        unknown = {name: value for name, value in keywords.items() if name not in valid}
        if unknown:
            refuse_unknown(unknown, [*valid, "shards"], type(self).__name__)
        values = {**_defaults(), **keywords, "num_envs": num_envs}
        self.task = check_keywords(**{name: values[name] for name in _CHECKED})
        self.num_envs = int(num_envs)
        self.shard_count = check_shards(shards, self.num_envs)
        if values["device"] != "cpu":
            raise BuildError(f"device={values['device']!r} with shards={shards}: shards split the worlds over the "
                             "CPU's cores; on a GPU give shards=1 (every world is one graph already)")
        if values["render_mode"] is not None:
            raise BuildError(f"render_mode={values['render_mode']!r} with shards={shards}: world 0's live view needs "
                             "its graph in this process; give shards=1")
        self.policy_hz, self.tick_hz = float(values["policy_hz"]), float(values["tick_hz"])
        self.action_mode, self.render_mode, self.device = values["action"], None, "cpu"
        self.metadata = {**type(self).metadata, "render_fps": self.policy_hz}
        first = int(values["first_world"])
        self.shards = [_Shard(i, start, count) for i, (start, count) in enumerate(shard_ranges(self.num_envs,
                                                                                                 self.shard_count))]
        self._closed = False
        try:
            for shard in self.shards:  # every shard builds at once
                shard.start_process({**keywords, "num_envs": shard.count, "first_world": first + shard.start})
            meta = [pickle.loads(self._answer(shard, b"M")) for shard in self.shards]
        except BaseException:
            self.close()
            raise
        m = meta[0]
        self.single_observation_space, self.single_action_space = m["observation_space"], m["action_space"]
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space, self.num_envs)
        self.action_space = gym.vector.utils.batch_space(self.single_action_space, self.num_envs)
        self.action_width, self.observation_width = m["action_width"], m["observation_width"]
        self.episode_steps, self.decimation, self.hover_fraction = m["episode_steps"], m["decimation"], m[
            "hover_fraction"]
        n, width = self.num_envs, self.observation_width
        self._obs = np.zeros((n, width), dtype=np.float32)
        self._reward = np.zeros(n, dtype=np.float32)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._final = np.zeros((n, width), dtype=np.float32)
        self._reset_once = False

    # -- Gymnasium ------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Every shard resets (see :meth:`NexusVectorEnv.reset <nexus.gym.env.NexusVectorEnv.reset>`)."""
        message = b"R" + pickle.dumps(None if seed is None else int(seed))
        self._send_all(lambda shard: message)
        for shard in self.shards:
            answer = self._answer(shard, b"O")
            self._obs[shard.start:shard.start + shard.count] = np.frombuffer(answer, np.float32).reshape(
                shard.count, self.observation_width)
        self._reset_once = True
        return self._obs, {}

    def step(self, actions):
        if not self._reset_once:
            raise gym.error.ResetNeeded("call reset() before step()")
        rows = np.asarray(actions, dtype=np.float32)
        if rows.shape != (self.num_envs, self.action_width):
            raise ValueError(f"actions of shape {rows.shape}; this environment takes "
                             f"{(self.num_envs, self.action_width)} ({self.num_envs} worlds x {self.action_width})")
        self._send_all(lambda shard: b"S" + rows[shard.start:shard.start + shard.count].tobytes())
        width, any_done = self.observation_width, False
        self._final[...] = 0.0
        for shard in self.shards:
            answer = self._answer(shard, b"O")
            a, b, count = shard.start, shard.start + shard.count, shard.count
            at = 0
            self._obs[a:b] = np.frombuffer(answer, np.float32, count * width, at).reshape(count, width)
            at += 4 * count * width
            self._reward[a:b] = np.frombuffer(answer, np.float32, count, at)
            at += 4 * count
            self._terminated[a:b] = np.frombuffer(answer, np.uint8, count, at).astype(bool)
            at += count
            self._truncated[a:b] = np.frombuffer(answer, np.uint8, count, at).astype(bool)
            at += count
            if len(answer) > at:  # a world of this shard ended: its final observation rows follow
                self._final[a:b] = np.frombuffer(answer, np.float32, count * width, at).reshape(count, width)
                any_done = True
        info: dict[str, Any] = {}
        if any_done:
            info = {"final_obs": self._final.copy(), "_final_obs": self._terminated | self._truncated}
        return self._obs, self._reward, self._terminated, self._truncated, info

    def render(self):
        return None

    def close(self, **kwargs):
        """Stop every shard and wait for it (none outlives the environment); closing twice does nothing."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        for shard in self.shards:
            shard.stop()

    # -- the shards ------------------------------------------------------------------------

    def _send_all(self, message_of) -> None:
        if self._closed:
            raise ShardError("this sharded environment is closed (a shard died, or close() was called)")
        for shard in self.shards:
            try:
                shard.conn.send_bytes(message_of(shard))
            except OSError:
                self._fail(shard)

    def _answer(self, shard: _Shard, kind: bytes) -> bytes:
        """The shard's next answer without its kind byte; a shard that died or failed ends the environment."""
        try:
            message = shard.conn.recv_bytes()
        except (EOFError, OSError):
            self._fail(shard)
        if message[:1] == kind:
            return message[1:]
        if message[:1] == b"B":  # the same refusal a one-process environment gives
            self.close()
            raise BuildError(message[1:].decode(errors="replace"))
        self._fail(shard, message[1:].decode(errors="replace") if message[:1] == b"E" else None)

    def _fail(self, shard: _Shard, error: str | None = None):
        why = f"failed: {error}" if error is not None else shard.why()
        self.close()
        raise ShardError(f"{shard.name} of {self.num_envs} {why}; the environment is closed")

    @property
    def pids(self) -> list[int]:
        """The shards' process ids, in world order."""
        return [shard.process.pid for shard in self.shards]


#: The keywords :func:`~nexus.gym.env.check_keywords` takes.
_CHECKED = ("num_envs", "task", "action", "policy_hz", "tick_hz", "noise", "vary", "flight_seed", "render_mode",
            "render_host", "render_port", "observe", "realtime", "estimator", "first_world")


def _defaults() -> dict:
    """NexusVectorEnv's keywords' defaults."""
    return {name: p.default for name, p in inspect.signature(NexusVectorEnv.__init__).parameters.items()
            if p.default is not inspect.Parameter.empty}


def make_vector_env(num_envs: int = 1, shards: int | None = None, **keywords):
    """The ids' vector environment: :class:`~nexus.gym.env.NexusVectorEnv` in this process (``shards=1``, or
    ``None`` when the worlds are too few for another process to pay, see :func:`default_shards`), else
    :class:`ShardedVectorEnv` over ``shards`` processes."""
    if shards is None:
        human = keywords.get("render_mode") is not None
        worlds = num_envs if isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) else 1
        shards = 1 if human else default_shards(int(worlds), keywords.get("device", "cpu"))
    elif isinstance(num_envs, (int, np.integer)) and not isinstance(num_envs, bool) and num_envs >= 1:
        check_shards(shards, int(num_envs))
    if shards == 1:
        return NexusVectorEnv(num_envs=num_envs, **keywords)
    return ShardedVectorEnv(num_envs=num_envs, shards=shards, **keywords)

