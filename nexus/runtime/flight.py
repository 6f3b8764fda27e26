"""One flight: its configuration, and its ring (a vehicle in a scene, its controller, and the record).

:class:`RunConfig` is the one place a run's settings and their defaults are
written: the command line takes its option defaults from it, ``run.json``
holds it (:meth:`RunConfig.as_dict`) and ``nexus replay`` reads it back
(:meth:`RunConfig.from_dict`).
"""

from __future__ import annotations

import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from nexus.air.wind_field import WindField, parse_wind
from nexus.control import registry
from nexus.control.registry import ControllerOptions
from nexus.core import Component, Loop
from nexus.core.device import DEVICE_CHOICES, resolve_device
from nexus.core.errors import BuildError
from nexus.core.loop import DEFAULT_TICK_HZ, DEFAULT_TICKS_PER_REPLAY, tick_ns
from nexus.core.ring import compose, placed
from nexus.plant.crash import CrashDetector
from nexus.plant.solvers import DEFAULT_SOLVER, SOLVERS, check_solver
from nexus.record.recorder import Recorder
from nexus.render.hub import RenderHub
from nexus.runtime.assembly import DEFAULT_CONTROLLER, MISSIONS, Vehicle, assemble
from nexus.runtime.pacing import check_factor, paced_ticks_per_replay
from nexus.runtime.params import variation_names
from nexus.runtime.roles import FLIGHT_RULES
from nexus.runtime.scenario_parts import scenario_parts, scenario_variation, with_gusts
from nexus.sensors.render_sensor import RenderSensor
from nexus.worlds.capacity import check_fits
from nexus.worlds.drawn import take_draws, world_values
from nexus.worlds.summary import WorldSummary
from nexus.vocab.settings import setting
from nexus.vocab.types import fits_type, type_text

#: ``--record`` choices.
RECORD_MODES = ("full", "summary")
#: RunConfig fields a run.json from before them lacks, with the value such a run flew with.
ADDED_LATER = {"worlds": 1, "vary": None, "record_every": 1, "record_mode": "full", "first_world": 0,
               "render": "auto", "solver": "mujoco", "plugins": [], "wind": None, "turbulence": None, "scenario": None,
               "realtime": None, "estimator": "vehicle"}


#: ``--render``: where the ray-traced sensors render (``auto``: a peer process on the CPU, inline on a GPU).
RENDER_MODES = ("auto", "peer", "inline")


class ConfigError(BuildError):
    """A saved run configuration (``run.json``'s ``options``) that cannot be read back."""

    reason = "bad-config"


@dataclass
class RunConfig:
    """Everything that decides what a run computes (the wall clock decides nothing), with its defaults.

    ``duration`` None flies the controller's default (its registration's ``duration_s``:
    :mod:`nexus.control.registry`); ``device`` is ``auto``, ``cpu``, ``cuda`` or a Warp name such as
    ``cuda:1``. ``controller_options`` may be given as a table (a dict): it becomes the controller's typed
    options when the configuration is made, after ``plugins`` are imported.
    """

    vehicle: str = setting("astro_max_base", "Vehicle name (a file in vehicles/) or path to a .usda file")
    scene: str = setting("empty", "Scene name (a file in scenes/) or path to a .usda file")
    controller: str = setting(DEFAULT_CONTROLLER, "What writes the controls (docs/controllers.md; one of your own: "
                              "--plugin MODULE)", choices=registry.names)
    #: ``scene`` flies the scene's mission; ``short`` the same mission in under 10 s.
    mission: str = setting("scene", "With --controller pid: the scene's mission, or the same mission shortened to "
                           "under 10 s", choices=MISSIONS)
    #: The controller's typed options (its registration's options class: PX4's host, port, timeouts, ...).
    controller_options: ControllerOptions = field(default_factory=dict)
    seed: int = setting(0, "Seed of every random stream", minimum=0)
    #: Control tick rate [Hz]; one tick is ``dt`` [s].
    tick_hz: float = setting(DEFAULT_TICK_HZ, "Control tick rate", unit="Hz", minimum=1.0, maximum=10000.0)
    substeps: int = setting(1, "Solver steps per tick", minimum=1)
    #: Longest sim time to fly [s]; None: the controller's default.
    duration: float | None = setting(None, "Longest sim time to fly", unit="s", minimum=0.0, min_open=True)
    device: str = setting("auto", "auto takes the GPU when one is present", choices=DEVICE_CHOICES)
    #: Launch stage by stage instead of replaying graphs (the debugging reference).
    eager: bool = setting(False, "Launch stage by stage instead of replaying graphs (debugging)")
    #: WMM date [decimal year]; None takes the plant's fixed default.
    decimal_year: float | None = None
    #: Rows the device record table holds between drains (41 s at 250 Hz; a multiple of the 16 ticks a replay
    #: runs). A full drain of 10,240 rows to Parquet costs about 8 ms, under 1 µs per tick (docs/benchmarking.md).
    record_capacity: int = 10240
    #: Ticks per graph replay; None lets the loop choose (a hidden knob for tests, not a CLI option).
    ticks_per_replay: int | None = None
    worlds: int = setting(1, "Vehicles flown at once, one Newton world each, in one graph (docs/worlds.md)")
    #: A variation file (TOML) drawing each world's values; None: every world is the vehicle as its file says.
    vary: str | None = setting(None, "Variation file (TOML): each world's mass, rotors, sensors, start, wind and "
                               "faults, drawn from the seed (docs/worlds.md lists every parameter)", path=True)
    record_every: int = setting(1, "Record ticks K, 2K, 3K, ... of every world (every tick: 1)")
    record_mode: str = setting("full", "full: the record and the per-world summary; summary: the summary only",
                               choices=RECORD_MODES, flag="--record")
    #: The run-wide index of this run's world 0 (``--world-of RUN:i`` flies world i of RUN alone).
    first_world: int = 0
    render: str = setting("auto", "Where cameras and lidars render: peer (a process of its own, overlapping the "
                          "loop), inline (this process), auto (peer on the CPU, inline on a GPU)", choices=RENDER_MODES)
    #: The physics solver (:mod:`nexus.plant.solvers`).
    solver: str = setting(DEFAULT_SOLVER, "Physics solver; featherstone is the differentiable one, freeflyer the fast "
                          "one for a free base with rotors (docs/freeflyer.md)", choices=SOLVERS)
    #: What writes the estimate (:data:`nexus.runtime.assembly.ESTIMATORS`); ``vehicle``: the vehicle file's own.
    estimator: str = setting("vehicle", "What writes the estimate: the vehicle file's own estimator, the truth, or "
                             "the error-state EKF (docs/estimation.md)", choices=("vehicle", "truth", "ekf"))
    #: Modules imported before the run is built (each may register a controller); ``run.json`` lists them
    #: when there are any, and a sweep's workers import them before building.
    plugins: list[str] = setting(help="Import MODULE before anything else (repeatable): a module of your own that "
                                      "registers a controller (docs/controllers.md) or declares drawn parameters "
                                      "(docs/worlds.md); run.json lists it",
                                 default_factory=list, flag="--plugin")

    #: The air for this run over the scene's (docs/air.md); None: the scene's own.
    wind: str | None = setting(None, "Mean wind SPEED@FROM: speed [m/s] at the scene's reference height and where it "
                               "blows from, degrees clockwise from north (8@270: 8 m/s from the west); over the "
                               "scene's wind (docs/air.md)", metavar="SPEED@FROM")
    turbulence: str | None = setting(None, "Dryden turbulence level (MIL-HDBK-1797), over the scene's (docs/air.md)",
                                     choices=("light", "moderate", "severe"))
    #: A scenario's mission steps, gusts and PID gain factors (:mod:`nexus.runtime.scenario_parts`); None: no scenario.
    scenario: dict | None = None
    #: Pace the flight against the wall clock at this many times real time (:mod:`nexus.runtime.pacing`); None:
    #: as fast as the machine can. Pacing moves only the moments between replays: the flight's bits are the same.
    realtime: float | None = setting(None, "Fly at FACTOR times real time against the wall clock (1: real time, "
                                     "2: twice as fast; alone: 1), for people and ground stations watching; the "
                                     "flight's bits do not change (docs/running.md)", minimum=0.0, min_open=True,
                                     metavar="FACTOR")

    def __post_init__(self):
        self.plugins = list(self.plugins)
        registry.import_plugins(self.plugins, "plugins")
        self.controller_options = registry.get(self.controller).make_options(self.controller_options)

    @property
    def dt_ns(self) -> int:
        """One control tick [ns] (a rate that is no whole number of nanoseconds is a :class:`BuildError`)."""
        return tick_ns(self.tick_hz)

    @property
    def dt(self) -> float:
        """One control tick [s]."""
        return self.dt_ns * 1e-9

    @property
    def duration_s(self) -> float:
        """The sim time this run flies at most [s]: ``duration``, or the controller's default."""
        if self.duration is not None:
            return float(self.duration)
        return registry.get(self.controller).duration_s

    def check(self) -> None:
        """Refuse settings that cannot fly together, before anything is built (one-line errors)."""
        if isinstance(self.worlds, bool) or not isinstance(self.worlds, int) or self.worlds < 1:
            raise BuildError(f"--worlds {self.worlds}: a run flies at least one world; give a whole number, 1 or more")
        if isinstance(self.record_every, bool) or not isinstance(self.record_every, int) or self.record_every < 1:
            raise BuildError(f"--record-every {self.record_every}: give a whole number of ticks, 1 or more")
        check_solver(self.solver)
        if self.wind is not None:
            parse_wind(self.wind)  # SPEED@FROM, before anything is built (a sweep's points too)
        if self.realtime is not None:
            check_factor(self.realtime)
        if self.render not in RENDER_MODES:
            raise BuildError(f"--render {self.render}: choose one of {', '.join(RENDER_MODES)}")
        if self.record_mode not in RECORD_MODES:
            raise BuildError(f"--record {self.record_mode}: choose one of {', '.join(RECORD_MODES)}")
        single_world = registry.get(self.controller).single_world
        if self.worlds > 1 and single_world:
            many = [c.name for c in registry.controllers().values() if c.reads_setpoint and not c.single_world]
            raise BuildError(f"--controller {self.controller} --worlds {self.worlds}: "
                             f"{single_world}; fly --worlds 1, or --controller {' or '.join(many)}")

    def as_dict(self) -> dict:
        """The configuration as JSON-ready values (what ``run.json`` holds under ``options``)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["controller_options"] = self.controller_options.as_dict()
        values["plugins"] = list(self.plugins)
        # A run without them writes what it wrote before them (and keeps its sweep point id).
        for name in ("plugins", "wind", "turbulence", "scenario", "realtime"):
            if not values[name]:
                del values[name]
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in values.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "run.json") -> RunConfig:
        """The configuration :meth:`as_dict` gave; ``source`` names where ``data`` came from in errors.

        Every field must be there and no other key: a configuration written by another
        version of Nexus is refused, never silently filled with today's defaults. The one
        exception is :data:`ADDED_LATER`: fields newer than the run, which take the value
        such a run flew with (one world, every tick recorded), not a default.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"{source}: the run configuration (options) is {type(data).__name__}, not an object")
        known = {f.name: f for f in fields(cls)}
        data = {**{k: v for k, v in ADDED_LATER.items() if k not in data}, **data}  # a run from before worlds
        unknown = sorted(set(data) - set(known))
        missing = [name for name in known if name not in data]
        if unknown or missing:
            said = "; ".join(part for part in (
                f"unknown keys {unknown}" if unknown else "",
                f"missing keys {missing}" if missing else "",
            ) if part)
            raise ConfigError(
                f"{source}: the run configuration (options) does not match this version of Nexus ({said}); "
                "it was written by another version or edited: rerun the flight with this version"
            )
        hints = typing.get_type_hints(cls)
        hints["controller_options"] = Mapping  # a table here: the controller's options class reads it
        for name, value in data.items():
            if not fits_type(value, hints[name]):
                raise ConfigError(
                    f"{source}: options.{name} is {value!r}, which is not of type {type_text(hints[name])}; "
                    "restore the value the run wrote"
                )
        try:
            return cls(**data)
        except BuildError as error:  # a plugin that cannot be imported, a controller or option it does not know
            raise ConfigError(f"{source}: {error}") from None


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
    worlds = options.worlds
    if worlds > 1:
        check_fits(worlds, device)
    vehicle = assemble(
        options.vehicle, options.scene, device=device, controller=options.controller,
        substeps=options.substeps, decimal_year=options.decimal_year,
        controller_options=options.controller_options, mission=options.mission, worlds=worlds,
        solver=options.solver, estimator=options.estimator,
    )
    plant = vehicle.plant
    if options.scenario is not None and variation is None:  # its faults and start, over any drawn values
        variation = scenario_variation(options, plant, vehicle.components)
    names = variation_names(options.vehicle)  # the vehicle's other names of a draw, for the worlds' checks
    variation = world_values(options, plant, vehicle.components, variation, names=names)  # drawn or given, checked
    components = list(vehicle.components)
    if replace_controller is not None:
        replace_controller.name = vehicle.controller.name  # the ESCs connect to the controller prim
        placed(replace_controller, "controller")
        components = [replace_controller if c is vehicle.controller else c for c in components]
        components = [c for c in components if not getattr(c, "is_guidance", False)]
    # A caller's components that declare no place of their own join after the controller, in the order given.
    components += [extra if extra.place is not None else placed(extra, "extra", sequence=at)
                   for at, extra in enumerate(extra_components)]
    air = WindField.from_scene(plant, options.wind, options.turbulence, options.duration_s, variation)
    if options.scenario is not None:  # its steps, drag, faults, contact count, gain factors and gusts
        parts = scenario_parts(options.scenario, plant, components, vehicle.controller, options.controller)
        if parts.replaces_guidance:
            components = [c for c in components if not getattr(c, "is_guidance", False)]
        components += parts.components
        air = with_gusts(options.scenario, plant, air)
    if air is not None:  # its place: before every force stage that reads it
        components.append(placed(air, "air"))
    components = compose(components)
    drawn = take_draws(plant, components, variation)  # each draw to the part that declares it
    components += [placed(part, "draw", sequence=at) for at, part in enumerate(drawn)]
    crash = None
    if detect_crash and CrashDetector.fits(plant):
        crash = placed(CrashDetector(plant), "monitor")
        components.append(crash)
    summary = None
    if worlds > 1 or options.record_mode == "summary":  # a one-world run keeps its ring (and files) as they were
        summary = placed(WorldSummary(plant), "monitor", after=(crash.name,) if crash is not None else ())
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
        variation=variation if any(variation) else (),
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
    return Flight(options, vehicle, loop, recorder, device, variation, summary, hub, crash)


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
