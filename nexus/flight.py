"""One flight's ring: a vehicle in a scene, its controller, and the record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nexus.assembly import DEFAULT_CONTROLLER, Vehicle, assemble
from nexus.core import Component, Loop
from nexus.record.recorder import Recorder
from nexus.roles import FLIGHT_RULES


@dataclass
class FlightOptions:
    """Everything that decides what a run computes (the wall clock decides nothing)."""

    vehicle: str = "astro_max_base"
    scene: str = "empty"
    controller: str = DEFAULT_CONTROLLER
    seed: int = 0
    #: Control tick rate [Hz].
    tick_hz: float = 250.0
    substeps: int = 1
    #: WMM date [decimal year]; None takes the plant's fixed default.
    decimal_year: float | None = None
    #: Rows the device record table holds between drains (41 s at 250 Hz; a multiple of the 16 ticks a replay
    #: runs). A drain costs about 5 ms for 2,560 rows and 12 ms for 10,240: fewer, larger drains cost less per tick.
    record_capacity: int = 10240
    eager: bool = False
    #: ``scene`` flies the scene's mission; ``short`` the same mission in under 10 s.
    mission: str = "scene"
    #: Ticks per graph replay; None lets the loop choose (a hidden knob for tests, not a CLI option).
    ticks_per_replay: int | None = None
    #: Keyword arguments of the controller (PX4: host, port, connect_timeout, answer_timeout).
    controller_options: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in self.__dict__.items()}


@dataclass
class Flight:
    options: FlightOptions
    vehicle: Vehicle
    loop: Loop
    recorder: Recorder
    device: str


def build_flight(
    options: FlightOptions,
    device: str,
    replace_controller: Component | None = None,
    extra_components: Sequence[Component] = (),
) -> Flight:
    """Assemble and build the ring (validated, allocated, captured); nothing has run yet.

    ``replace_controller`` takes the controller's place (and name) and drops the
    guidance; ``extra_components`` join the ring after the vehicle's own.
    """
    vehicle = assemble(
        options.vehicle, options.scene, device=device, controller=options.controller,
        substeps=options.substeps, decimal_year=options.decimal_year,
        controller_options=options.controller_options, mission=options.mission,
    )
    components = list(vehicle.components)
    if replace_controller is not None:
        replace_controller.name = vehicle.controller.name  # the ESCs connect to the controller prim
        components = [replace_controller if c is vehicle.controller else c for c in components]
        components = [c for c in components if not getattr(c, "is_guidance", False)]
    components += list(extra_components)
    recorder = Recorder.for_components(components, capacity=options.record_capacity)
    loop = Loop(
        [*components, recorder], device=device, tick_hz=options.tick_hz, seed=options.seed,
        mode="eager" if options.eager else "captured", ticks_per_replay=options.ticks_per_replay,
        rules=FLIGHT_RULES,
    )
    loop.build()
    return Flight(options, vehicle, loop, recorder, device)


def fly(flight: Flight, writer, ticks: int, on_progress=None) -> bool:
    """Fly up to ``ticks`` ticks, draining the record as it fills; True once a stage ended the run.

    The loop runs ``ticks_per_replay`` ticks per launch while at least that
    many are left, then one at a time, so a run stops exactly at ``ticks``.
    ``writer`` is a :class:`nexus.record.writer.RecordWriter` (or None to keep
    no record); ``on_progress(sim_time)`` is called after every replay. The
    run's tick loop and the flight benchmark both fly through here, so the
    benchmark times what a run does.
    """
    loop = flight.loop
    per_replay = loop.ticks_per_replay
    end = loop.ticks + int(ticks)
    while loop.ticks < end:
        if writer is not None:
            writer.make_room(min(per_replay, end - loop.ticks))
        before = loop.ticks
        finished = loop.advance(end - loop.ticks)
        if writer is not None:
            writer.add(loop.ticks - before)
        if on_progress is not None:
            on_progress(loop.sim_time)
        if finished:
            return True
    return False
