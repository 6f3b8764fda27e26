"""One flight: its ring (a vehicle in a scene, its controller, and the record), built from a
:class:`~nexus.runtime.config.RunConfig`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from nexus.air.wind_field import WindField
from nexus.core import Component, Loop
from nexus.core.device import resolve_device
from nexus.core.loop import DEFAULT_TICKS_PER_REPLAY
from nexus.core.ring import compose, placed
from nexus.plant.crash import CrashDetector
from nexus.plant.vehicle_collision import VehicleCollision
from nexus.record.recorder import Recorder
from nexus.render.hub import RenderHub
from nexus.runtime.assembly import Vehicle, assemble
from nexus.runtime.pacing import paced_ticks_per_replay
from nexus.runtime.config import RunConfig
from nexus.runtime.params import variation_names
from nexus.runtime.roles import FLIGHT_RULES
from nexus.runtime.scenario_parts import scenario_parts, scenario_variation, with_gusts
from nexus.sensors.render_sensor import RenderSensor
from nexus.worlds.capacity import check_fits
from nexus.worlds.drawn import take_draws, variation_file, world_values
from nexus.worlds.vehicle_draws import slot_values as fleet_values
from nexus.worlds.summary import WorldSummary

@dataclass
class Flight:
    options: RunConfig
    vehicle: Vehicle
    loop: Loop
    #: None with ``--record summary``.
    recorder: Recorder | None
    device: str
    #: Each world's drawn values (empty dicts without a variation).
    variation: list[dict] = field(default_factory=list)
    summary: Any = None
    #: The renderer of the ray-traced sensors (None without any): ``flight.loop.close()`` does not stop it.
    render: Any = None
    #: The crash detector (:mod:`nexus.plant.crash`; None when not built in).
    crash: Any = None
    #: The contact between the vehicles of a world (:mod:`nexus.plant.vehicle_collision`; None unless they share it).
    collisions: Any = None
    #: Each slot's values: a fleet's vehicles draw their own (:mod:`nexus.worlds.vehicle_draws`); the worlds' own
    #: with one vehicle a world.
    slot_values: list[dict] = field(default_factory=list)


def build_flight(
    options: RunConfig,
    device: str | None = None,
    replace_controller: Component | None = None,
    extra_components: Sequence[Component] = (),
    variation: Sequence[dict] | None = None,
    start_render: bool = True,
    detect_crash: bool = True,
) -> Flight:
    """Assemble and build the ring (validated, allocated, captured); nothing has run yet.

    ``device`` is a Warp device name; None resolves ``options.device``.
    ``replace_controller`` takes the controller's place (and name) and drops the
    guidance; ``extra_components`` join the ring after the vehicle's own, in the order given (unless they
    declare their place: :mod:`nexus.core.ring`).
    ``variation`` gives each world's values (a replay passes the values run.json
    holds); None draws them from ``options.vary`` (no file: none). ``start_render`` False
    leaves the render peer of cameras and lidars unstarted (``nexus plan`` flies nothing).
    ``detect_crash`` builds in the crash detector (:mod:`nexus.plant.crash`; MuJoCo only).
    The caller closes ``flight.render`` when there is one.
    """
    options.check()
    device = device or resolve_device(options.device)
    worlds = options.slots  # every vehicle of every world: the leading axis of the ring's signals
    if worlds > 1:
        check_fits(worlds, device)
    vehicle = assemble(
        options.vehicle, options.scene, device=device, controller=options.controller,
        substeps=options.substeps, decimal_year=options.decimal_year,
        controller_options=options.controller_options, mission=options.mission, worlds=options.worlds,
        solver=options.solver, estimator=options.estimator, fleet=options.fleet,
    )
    plant = vehicle.plant
    if options.scenario is not None and variation is None:  # its faults and start, over any drawn values
        variation = scenario_variation(options, plant, vehicle.components)
    names = variation_names(options.vehicle)  # the vehicle's other names of a draw, for the worlds' checks
    given_slots = None
    if variation is not None and options.vehicles > 1 and len(variation) == options.slots:  # a fleet's own values
        given_slots = [dict(values) for values in variation]
        variation = given_slots[::options.vehicles]  # vehicle 0's are its world's
    variation = world_values(options, plant, vehicle.components, variation, names=names)  # drawn or given, checked
    # Each vehicle of a world draws its own values, but the world's air and place (nexus.worlds.vehicle_draws).
    # (Loaded again only for a fleet: a run of one vehicle a world has its values already.)
    own_draws = variation_file(options, plant, vehicle.components, names=names) if options.vehicles > 1 else None
    slot_values = given_slots or fleet_values(variation, options.vehicles, variation=own_draws, seed=options.seed,
                                              first_world=options.first_world, first_vehicle=options.first_vehicle)
    components = list(vehicle.components)
    if replace_controller is not None:
        replace_controller.name = vehicle.controller.name  # the ESCs connect to the controller prim
        placed(replace_controller, "controller")
        components = [replace_controller if c is vehicle.controller else c for c in components]
        components = [c for c in components if not getattr(c, "is_guidance", False)]
    # A caller's components that declare no place of their own join after the controller, in the order given.
    components += [extra if extra.place is not None else placed(extra, "extra", sequence=at)
                   for at, extra in enumerate(extra_components)]
    air = WindField.from_scene(plant, options.wind, options.turbulence, options.duration_s, slot_values)
    if options.scenario is not None:  # its steps, drag, faults, contact count, gain factors and gusts
        parts = scenario_parts(options.scenario, plant, components, vehicle.controller, options.controller,
                               options.fleet)
        if parts.replaces_guidance:
            components = [c for c in components if not getattr(c, "is_guidance", False)]
        components += parts.components
        air = with_gusts(options.scenario, plant, air)
    if air is not None:  # its place: before every force stage that reads it
        components.append(placed(air, "air"))
    components = compose(components)
    drawn = take_draws(plant, components, slot_values)  # each draw to the part that declares it
    components += [placed(part, "draw", sequence=at) for at, part in enumerate(drawn)]
    crash = None
    if detect_crash and CrashDetector.fits(plant):
        crash = placed(CrashDetector(plant), "monitor")
        components.append(crash)
    collisions = None
    if VehicleCollision.fits(plant):  # vehicles sharing a world: a ring of one vehicle a world keeps its ring
        collisions = placed(VehicleCollision(plant, options.end_on_collision), "monitor",
                            after=(crash.name,) if crash is not None else ())
        components.append(collisions)
    monitors = tuple(c.name for c in (crash, collisions) if c is not None)
    summary = None
    if worlds > 1 or options.record_mode == "summary":  # a one-world run keeps its ring (and files) as they were
        summary = placed(WorldSummary(plant), "monitor", after=monitors)
        components.append(summary)
    components = compose(components)
    recorder = None
    if options.record_mode == "full":
        recorder = Recorder.for_components(components, capacity=options.record_capacity, every=options.record_every)
    ticks_per_replay = options.ticks_per_replay
    if ticks_per_replay is None and options.realtime is not None:  # paced between replays: shorter replays
        ticks_per_replay = paced_ticks_per_replay(options.realtime, options.dt_ns, DEFAULT_TICKS_PER_REPLAY)
    loop = Loop(
        compose([*components, *([placed(recorder, "record")] if recorder is not None else [])]), device=device,
        tick_hz=options.tick_hz, seed=options.seed, mode="eager" if options.eager else "captured",
        ticks_per_replay=ticks_per_replay, rules=FLIGHT_RULES, worlds=worlds, first_world=options.first_world,
        variation=slot_values if any(variation) else (), vehicles=options.vehicles, first_vehicle=options.first_vehicle,
    )
    hub = _render_hub(options, plant, components, device, worlds)
    try:
        loop.build()
        if hub is not None and start_render:
            hub.start()  # the peer loads its scene before any tick: a bad file fails the build
    except BaseException:
        if hub is not None:
            hub.close()
        raise
    return Flight(options, vehicle, loop, recorder, device, variation, summary, hub, crash, collisions, slot_values)


def _render_hub(options: RunConfig, plant, components: Sequence[Component], device: str, worlds: int):
    """One renderer for every ray-traced sensor of the ring (None without any)."""
    sensors = [c for c in components if isinstance(c, RenderSensor)]
    if not sensors:
        return None

    mode = options.render if options.render != "auto" else ("peer" if device == "cpu" else "inline")
    hub = RenderHub(plant.vehicle_path, plant.scene_path, worlds, device, mode)
    for sensor in sensors:
        sensor.hub = hub
    return hub


def fly(flight: Flight, writer, ticks: int, on_progress=None, pacer=None) -> bool:
    """Fly up to ``ticks`` ticks, draining the record as it fills; True once a stage ended the run.

    The loop runs ``ticks_per_replay`` ticks per launch while at least that
    many are left, then one at a time, so a run stops exactly at ``ticks``.
    ``writer`` is a :class:`nexus.record.writer.RecordWriter` (or None to keep
    no record); ``on_progress(sim_time)`` is called after every replay. The
    run's tick loop and the flight benchmark both fly through here, so the
    benchmark times what a run does. ``pacer`` (a
    :class:`nexus.runtime.pacing.Pacer`, for ``--realtime``) waits after each
    replay until its ticks are due on the wall clock.
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
        if pacer is not None:
            pacer.advanced(loop.ticks - before)
        if on_progress is not None:
            on_progress(loop.sim_time)
        if finished:
            return True
    return False
