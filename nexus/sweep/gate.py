"""The warm-up gate of a sweep: a Ray actor that counts the workers' warm-ups (see :func:`nexus.sweep.task.warm`).

A module of its own, importing nothing: Ray starts each actor in a new process that imports the actor's
module, and the flight code (Warp, Newton) that :mod:`nexus.sweep.task` imports took about 3 s there, once
per sweep.
"""


class Gate:
    """Counts the warm-ups that arrived (a Ray actor in a sweep), so each one holds its worker until all did."""

    def __init__(self):
        self.arrived = 0

    def arrive(self) -> None:
        self.arrived += 1

    def count(self) -> int:
        return self.arrived
