"""The render peer: a process of its own that renders frames the run asks for, into shared memory.

``nexus render-peer`` (started and stopped by the run; ``python -m
nexus.render.peer`` is the same) reads requests on stdin and answers on
stdout, one pickled message each, length-prefixed:

* first ``{"vehicle", "scene", "worlds", "device", "specs", "memory"}``: it
  loads its own copy of the files and answers ``{"ready": True, "labels": ...}``
  (or ``{"error": ...}``); ``memory`` names one shared-memory block per sensor;
* then ``{"id", "sensor", "slot", "body_q", "poses"}``: it renders that
  sensor's frame into slot ``slot`` of the sensor's block and answers ``{"id", "render_s"}``
  (the wall time the render took [s]);
* ``None`` (or end of input) ends it.
"""

from __future__ import annotations

import os
import pickle
import struct
import sys
import time
from multiprocessing import shared_memory

import numpy as np

from nexus.core.warp_setup import init_warp
from nexus.render.request import frame_bytes, output_layout

_LENGTH = struct.Struct("<Q")


def send(stream, message) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def receive(stream):
    """The next message, or None at end of input."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


def frame_views(buffer, spec, worlds: int, slot: int) -> dict[str, np.ndarray]:
    """NumPy views of slot ``slot``'s arrays in a sensor's shared block."""
    offset = slot * frame_bytes(spec, worlds)
    views = {}
    for name, (shape, dtype) in output_layout(spec, worlds).items():
        count = int(np.prod(shape))
        views[name] = np.ndarray(shape, dtype=dtype, buffer=buffer, offset=offset)
        offset += count * np.dtype(dtype).itemsize
    return views


def attach(name: str) -> shared_memory.SharedMemory:
    """The run's block ``name``; the run owns it, so this process's resource tracker must not unlink it."""
    from multiprocessing import resource_tracker  # noqa: PLC0415

    block = shared_memory.SharedMemory(name=name)
    resource_tracker.unregister(block._name, "shared_memory")  # Python < 3.13 registers every attach
    return block


def serve(inp, out) -> None:
    setup = receive(inp)
    if setup is None:
        return
    try:
        init_warp(verbose=False)  # only Warp's warnings and errors reach the run's terminal
        from nexus.render.renderer import SceneRenderer  # noqa: PLC0415  (reason: Newton failing to load is the peer's error, sent to the run)

        renderer = SceneRenderer(setup["vehicle"], setup["scene"], setup["worlds"], setup["device"], setup["specs"])
        blocks = {name: attach(memory) for name, memory in setup["memory"].items()}
    except Exception as error:  # the run reports it as the peer's failure
        send(out, {"error": f"{type(error).__name__}: {error}"})
        return
    send(out, {"ready": True, "labels": renderer.labels, "pid": os.getpid()})
    specs = {spec.name: spec for spec in setup["specs"]}
    try:
        while True:
            request = receive(inp)
            if request is None:
                return
            name = request["sensor"]
            began = time.perf_counter()
            frame = renderer.render(name, request["body_q"], request.get("poses"))
            views = frame_views(blocks[name].buf, specs[name], setup["worlds"], request["slot"])
            for key, values in frame.items():
                views[key][...] = values
            del views
            send(out, {"id": request["id"], "render_s": time.perf_counter() - began})
    finally:
        for block in blocks.values():
            block.close()


def main(argv=None) -> None:
    """Serve render requests on stdin/stdout (started by a run; not meant to be typed)."""
    # The binary pipes; anything the renderer prints goes to stderr, never into the answers.
    inp, out = sys.stdin.buffer, os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(inp, out)


if __name__ == "__main__":
    main()
