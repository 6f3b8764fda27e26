"""One flight's ring: a vehicle in a scene, its controller, and the record."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nexus.assembly import DEFAULT_CONTROLLER, Vehicle, assemble
from nexus.core import Component, Loop
from nexus.record.recorder import Recorder


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
    #: Rows the device record table holds between drains.
    record_capacity: int = 2500
    eager: bool = False
    #: ``scene`` flies the scene's mission; ``short`` the same mission in under 10 s.
    mission: str = "scene"
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
        mode="eager" if options.eager else "captured",
    )
    loop.build()
    return Flight(options, vehicle, loop, recorder, device)


def fly(flight: Flight, writer, ticks: int, on_progress=None) -> bool:
    """Fly up to ``ticks`` ticks, draining the record as it fills; True once a stage ended the run.

    ``writer`` is a :class:`nexus.record.writer.RecordWriter` (or None to keep
    no record); ``on_progress(sim_time)`` is called every second of sim time.
    The run's tick loop and the flight benchmark both fly through here, so the
    benchmark times what a run does.
    """
    loop = flight.loop
    every = max(1, int(round(1e9 / loop.dt_ns)))
    for _ in range(int(ticks)):
        finished = loop.tick()
        if writer is not None:
            writer.after_tick()
        if on_progress is not None and loop.ticks % every == 0:
            on_progress(loop.sim_time)
        if finished:
            return True
    return False
