"""Cutting the ordered ring at its host stages into segments.

Each maximal run of device stages becomes one segment, captured once and
replayed every tick; each host stage is a segment of its own that runs in
Python between replays. When the ring has any host stage, the record stages
start a segment of their own after it, so a recorded row holds what the host
stages wrote on that tick. With no host stage, the whole ring is one segment.

A ring of one segment needs no Python between ticks, so the loop may capture
several ticks into its graph and replay them with one launch: the plan then
says how many, ``graph(clock -> ... -> record) x16``. So may a ring whose
host stages all know the ticks they leave alone (``Stage.idle_ticks``): on
those ticks its device stages run, in ring order, as one graph of up to that
many ticks, and the plan says so: ``... graph(record); between host ticks
graph x16``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from nexus.core.stage import Stage


@dataclass(frozen=True)
class Segment:
    """Stages that run together: a captured graph, or one host stage."""

    host: bool
    stages: tuple[Stage, ...]

    def text(self) -> str:
        names = " -> ".join(stage.name for stage in self.stages)
        return f"{'host' if self.host else 'graph'}({names})"


def slots_text(slots: int, vehicles: int = 1) -> str:
    """How many a plan covers, as its text ends: nothing for one, ``, 16 worlds``, ``, 4 worlds x 2 vehicles``."""
    if vehicles > 1:
        worlds = slots // vehicles
        return f", {worlds} world{'s' * (worlds != 1)} x {vehicles} vehicles"
    return f", {slots} worlds" if slots > 1 else ""


@dataclass(frozen=True)
class Plan:
    segments: tuple[Segment, ...]
    #: Ticks one replay runs (the loop chooses it; 1 unless the ring is one graph).
    ticks_per_replay: int = 1
    #: Worlds every stage covers in one launch (with several vehicles a world: their slots, worlds x vehicles).
    worlds: int = 1
    #: Vehicles in each world.
    vehicles: int = 1
    #: The ring has host stages, every one of which says which ticks it leaves alone: on those
    #: ticks the device stages run without them, up to ``ticks_per_replay`` ticks a launch.
    hosts_idle_between: bool = False

    @property
    def device_stages(self) -> tuple[Stage, ...]:
        """The device stages in ring order: what runs on a tick every host stage leaves alone."""
        return tuple(stage for stage in self.stages if not stage.host)

    @property
    def stages(self) -> tuple[Stage, ...]:
        return tuple(stage for segment in self.segments for stage in segment.stages)

    @property
    def has_host_stage(self) -> bool:
        return any(segment.host for segment in self.segments)

    def text(self) -> str:
        """The one-line form logged at start: ``stage plan: graph(a -> b) host(c) graph(record)``."""
        text = "stage plan: " + " ".join(segment.text() for segment in self.segments)
        if self.hosts_idle_between:
            text += f"; between host ticks graph x{self.ticks_per_replay}"
        else:
            text += f" x{self.ticks_per_replay}" if self.ticks_per_replay > 1 else ""
        return text + slots_text(self.worlds, self.vehicles)

    def describe(self) -> list[dict]:
        """One entry per segment; a graph's says how many ticks one replay runs. A ring whose host stages
        leave ticks alone ends with the graph of its device stages that runs on those ticks."""
        per_segment = 1 if self.has_host_stage else self.ticks_per_replay
        entries = [
            {"kind": "host", "stages": [stage.name for stage in s.stages]} if s.host else
            {"kind": "graph", "stages": [stage.name for stage in s.stages], "ticks_per_replay": per_segment}
            for s in self.segments
        ]
        if self.hosts_idle_between:
            entries.append({"kind": "graph", "stages": [stage.name for stage in self.device_stages],
                            "ticks_per_replay": self.ticks_per_replay, "runs": "between host ticks"})
        return entries


def plan_segments(ordered: Sequence[Stage]) -> Plan:
    """Segments for stages already in ring order."""
    has_host = any(stage.host for stage in ordered)
    idle_between = has_host and all(stage.idle_ticks is not None for stage in ordered if stage.host)
    segments: list[Segment] = []
    run: list[Stage] = []

    def close_run() -> None:
        if run:
            segments.append(Segment(host=False, stages=tuple(run)))
            run.clear()

    record_started = False
    for stage in ordered:
        if stage.host:
            close_run()
            segments.append(Segment(host=True, stages=(stage,)))
            continue
        if has_host and stage.kind == "record" and not record_started:
            close_run()
            record_started = True
        run.append(stage)
    close_run()
    return Plan(tuple(segments), hosts_idle_between=idle_between)
