"""The run's side of rendering: hands poses to a renderer and takes finished frames, in either mode.

``peer`` (the default on the CPU) renders in ``nexus render-peer``, a process
of its own, which works on the second core while the loop flies; frames come
back through one shared-memory block per sensor. ``inline`` renders in this
process at the moment a frame is asked for (for GPU runs and tests). Both use
:class:`~nexus.render.renderer.SceneRenderer` on the same poses, so they
return the same bytes; only when the bytes become available differs, and a
render sensor never looks before its frame's fixed delivery tick.
"""

from __future__ import annotations

import logging
import os
import pickle
import select
import subprocess
import sys
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np

from nexus.core.errors import BuildError
from nexus.render.errors import RenderPeerDied, RenderPeerTimeout
from nexus.render.frames import FrameWriter, sensor_file
from nexus.render.peer import _LENGTH, frame_views, send
from nexus.render.renderer import SceneRenderer
from nexus.render.request import ViewSpec, frame_bytes

log = logging.getLogger("nexus")

MODES = ("peer", "inline")
#: Wall time [s] a frame may take before the run ends with ``render-peer-timeout``.
FRAME_TIMEOUT_S = 30.0
#: Wall time [s] the peer may take to load the files and compile its kernels.
START_TIMEOUT_S = 600.0
#: Wall time [s] the peer has to exit once asked before it is killed.
CLOSE_WAIT_S = 2.0


class RenderHub:
    """Renders every render sensor of one run: ``add`` each sensor's spec, then ``submit`` and ``take``."""

    def __init__(self, vehicle: str | Path, scene: str | Path, worlds: int, device: str, mode: str = "peer",
                 frame_timeout_s: float = FRAME_TIMEOUT_S, close_wait_s: float = CLOSE_WAIT_S):
        if mode not in MODES:
            raise BuildError(f"unknown render mode '{mode}': choose one of {', '.join(MODES)} (--render)")
        self.vehicle, self.scene = str(vehicle), str(scene)
        self.worlds, self.device, self.mode = int(worlds), device, mode
        self.frame_timeout_s = float(frame_timeout_s)
        #: Wall time [s] :meth:`close` gives the peer to exit before it is killed.
        self.close_wait_s = float(close_wait_s)
        self.specs: dict[str, ViewSpec] = {}
        self.slots: dict[str, int] = {}
        #: Sensor -> its declared frame rate [Hz] (None: not given), kept in its frame folder.
        self.rates: dict[str, float | None] = {}
        self._free: dict[str, list[int]] = {}
        self._tickets: dict[int, tuple[str, int]] = {}
        self._done: set[int] = set()
        self._inline_frames: dict[int, dict] = {}
        self._next_id = 0
        self.renderer = None
        self.process: subprocess.Popen | None = None
        self.blocks: dict[str, shared_memory.SharedMemory] = {}
        self.labels: list[str] = []
        self._buffer = bytearray()
        #: Wall time [s] spent waiting for frames that were not ready at their delivery tick.
        self.wait_s = 0.0
        #: Wall time [s] the renders themselves took (in the peer, or here when inline).
        self.render_s = 0.0
        self.frames = 0
        #: Sensor -> its frame file writer, once :meth:`record_to` named a folder.
        self.writers: dict = {}

    def add(self, spec: ViewSpec, slots: int, rate_hz: float | None = None) -> None:
        """Register a sensor whose frames are at most ``slots`` in flight at once, taken at ``rate_hz``."""
        if self.renderer is not None or self.process is not None:
            raise BuildError(f"render sensor {spec.name} was added after rendering started")
        self.specs[spec.name] = spec
        self.rates[spec.name] = rate_hz
        self.slots[spec.name] = max(1, int(slots))
        self._free[spec.name] = list(range(self.slots[spec.name]))

    @property
    def started(self) -> bool:
        return self.renderer is not None or self.process is not None

    def start(self) -> None:
        if self.started or not self.specs:
            return
        specs = list(self.specs.values())
        if self.mode == "inline":
            self.renderer = SceneRenderer(self.vehicle, self.scene, self.worlds, self.device, specs)
            self.labels = self.renderer.labels
            return
        for name, spec in self.specs.items():
            size = frame_bytes(spec, self.worlds) * self.slots[name]
            self.blocks[name] = shared_memory.SharedMemory(create=True, size=max(1, size))
        command = [sys.executable, "-m", "nexus.cli", "render-peer"]  # `nexus render-peer`
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        send(self.process.stdin, {"vehicle": self.vehicle, "scene": self.scene, "worlds": self.worlds,
                                  "device": self.device, "specs": specs,
                                  "memory": {name: block.name for name, block in self.blocks.items()}})
        log.info("render peer started (pid %d); waiting for it to load the scene...", self.process.pid)
        answer = self._read(time.monotonic() + START_TIMEOUT_S, "starting")
        if "error" in answer:
            self.close()
            raise BuildError(f"the render peer could not load {self.vehicle} in {self.scene}: {answer['error']}")
        self.labels = answer["labels"]

    def submit(self, name: str, body_q: np.ndarray, poses: np.ndarray | None = None) -> int:
        """Ask for a frame of sensor ``name``; returns the ticket :meth:`take` takes."""
        self.start()
        if not self._free[name]:
            raise RuntimeError(f"render sensor {name} has more than {self.slots[name]} frames in flight")
        slot = self._free[name].pop(0)
        ticket = self._next_id
        self._next_id += 1
        self._tickets[ticket] = (name, slot)
        if self.renderer is not None:
            began = time.perf_counter()
            self._inline_frames[ticket] = self.renderer.render(name, body_q, poses)
            self.render_s += time.perf_counter() - began
            self._done.add(ticket)
        else:
            try:
                send(self.process.stdin, {"id": ticket, "sensor": name, "slot": slot,
                                          "body_q": np.ascontiguousarray(body_q), "poses": poses})
            except (BrokenPipeError, OSError):
                raise self._died("while a frame was asked for") from None
        return ticket

    def take(self, ticket: int) -> dict[str, np.ndarray]:
        """The frame of ``ticket`` (copies), waiting for it if the peer has not finished it."""
        name, slot = self._tickets.pop(ticket)
        if ticket not in self._done:
            began = time.monotonic()
            deadline = began + self.frame_timeout_s
            while ticket not in self._done:
                answer = self._read(deadline, f"rendering {name}")
                self._done.add(answer["id"])
                self.render_s += answer.get("render_s", 0.0)
            self.wait_s += time.monotonic() - began
        self._done.discard(ticket)
        self._free[name].append(slot)
        self.frames += 1
        if ticket in self._inline_frames:
            return self._inline_frames.pop(ticket)
        views = frame_views(self.blocks[name].buf, self.specs[name], self.worlds, slot)
        return {key: np.array(view, copy=True) for key, view in views.items()}

    def record_to(self, folder: Path) -> None:
        """Keep every frame the sensors write under ``folder`` (one frame folder per sensor)."""

        self.writers = {name: FrameWriter(Path(folder) / sensor_file(name), self.worlds, self.rates.get(name))
                        for name in self.specs}

    def store(self, name: str, tick: int, time_s: float, arrays: dict) -> None:
        writer = self.writers.get(name)
        if writer is not None:
            writer.add(tick, time_s, arrays)

    def _read(self, deadline: float, doing: str) -> dict:
        """The peer's next answer; a dead or silent peer ends the run with its own reason."""
        fd = self.process.stdout.fileno()
        while True:
            if len(self._buffer) >= _LENGTH.size:
                (size,) = _LENGTH.unpack_from(self._buffer)
                if len(self._buffer) >= _LENGTH.size + size:
                    data = bytes(self._buffer[_LENGTH.size:_LENGTH.size + size])
                    del self._buffer[:_LENGTH.size + size]
                    return pickle.loads(data)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RenderPeerTimeout(
                    f"the render peer (pid {self.process.pid}) sent nothing for {self.frame_timeout_s:g} s while "
                    f"{doing}; it may be stuck: lower the sensors' resolution or rate, or use --render inline"
                )
            ready, _, _ = select.select([fd], [], [], min(remaining, 1.0))
            if not ready:
                if self.process.poll() is not None:
                    raise self._died(f"while {doing}")
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise self._died(f"while {doing}")
            self._buffer += chunk

    def _died(self, when: str) -> RenderPeerDied:
        code = self.process.wait(timeout=5.0) if self.process is not None else None
        return RenderPeerDied(
            f"the render peer (pid {self.process.pid}) ended {when} with exit code {code}; the run cannot "
            "get its frames: see the peer's messages above, or use --render inline"
        )

    def close(self) -> None:
        """Write the frames kept, stop the peer and free the shared memory (safe twice, and after a failure)."""
        for writer in self.writers.values():
            writer.close()
        if self.process is not None:
            try:
                send(self.process.stdin, None)
                self.process.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass
            try:
                self.process.wait(timeout=self.close_wait_s)
            except subprocess.TimeoutExpired:  # stuck (or stopped): it has had its chance
                self.process.kill()
                self.process.wait(timeout=5.0)
            self.process = None
        for block in self.blocks.values():
            block.close()
            try:
                block.unlink()
            except FileNotFoundError:
                pass
        self.blocks = {}
        self.renderer = None
