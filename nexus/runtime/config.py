"""A run's configuration: :class:`RunConfig`, the one place a run's settings and their defaults are written.

The command line takes its option defaults from it, ``run.json`` holds it
(:meth:`RunConfig.as_dict`), ``nexus replay`` reads it back
(:meth:`RunConfig.from_dict`), a sweep file's ``[run]`` table and its axes are
checked against it, and the parameter table lists its fields. It sits apart
from :mod:`nexus.runtime.flight` (which builds a flight from it) so that
readers of a configuration need not load the flight's builder.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from nexus.air.wind_field import parse_wind
from nexus.control import registry
from nexus.control.registry import ControllerOptions
from nexus.core.device import DEVICE_CHOICES
from nexus.core.errors import BuildError
from nexus.core.loop import DEFAULT_TICK_HZ, tick_ns
from nexus.plant.fleet import DEFAULT_SPACING, FleetLayout, check_heading
from nexus.plant.solvers import DEFAULT_SOLVER, SOLVERS, check_solver
from nexus.runtime.assembly import DEFAULT_CONTROLLER, MISSIONS
from nexus.runtime.pacing import check_factor
from nexus.vocab.settings import setting
from nexus.vocab.types import fits_type, type_text

#: ``--shards``'s default: as many processes as pay (:func:`nexus.runtime.shards.shard_ranges`).
AUTO_SHARDS = "auto"
#: With ``--shards auto``: the fewest world-ticks (worlds x the duration's ticks) a process is given, so ``auto``
#: flies one process per core from ``cores x AUTO_SHARD_WORLD_TICKS`` on, one below twice this: under it a second
#: process costs more in its own build than it saves in flight (measured: docs/worlds.md).
AUTO_SHARD_WORLD_TICKS = 2_000_000
#: ``--record`` choices.
RECORD_MODES = ("full", "summary")
#: RunConfig fields a run.json from before them lacks, with the value such a run flew with.
ADDED_LATER = {"worlds": 1, "vary": None, "record_every": 1, "record_mode": "full", "first_world": 0,
               "render": "auto", "solver": "mujoco", "plugins": [], "wind": None, "turbulence": None, "scenario": None,
               "realtime": None, "estimator": "vehicle", "shards": 1, "vehicles": 1, "spacing": DEFAULT_SPACING,
               "vehicle_contact": True, "first_vehicle": 0, "offsets": [], "end_on_collision": False}
#: Fields a run writes to run.json only when they differ from their default (a run without them writes what it
#: wrote before them, and keeps its sweep point id).
OMITTED_AT_DEFAULT = ("vehicles", "spacing", "vehicle_contact", "first_vehicle", "offsets", "end_on_collision")


#: ``--render``: where the ray-traced sensors render (``auto``: a peer process on the CPU, inline on a GPU).
RENDER_MODES = ("auto", "peer", "inline")


def parse_offsets(texts: list[str]) -> tuple[tuple[float, ...], ...]:
    """``--offset`` values ("NORTH,EAST" [m], or "NORTH,EAST,YAW" with a start heading [deg]) as (north, east)
    pairs or (north, east, yaw) triples; a one-line error names a bad one."""
    places = []
    for text in texts:
        parts = str(text).split(",")
        try:
            if len(parts) not in (2, 3):
                raise ValueError
            place = tuple(float(p) for p in parts)
        except ValueError:
            raise BuildError(f"--offset {text}: give NORTH,EAST in metres from the vehicle file's place, and "
                             "optionally ,YAW the start heading in degrees, e.g. --offset 0,3 or --offset 0,3,90"
                             ) from None
        if not (math.isfinite(place[0]) and math.isfinite(place[1])):
            raise BuildError(f"--offset {text}: give finite numbers")
        if len(place) == 3:
            check_heading(place[2], f"--offset {text}")
        places.append(place)
    return tuple(places)


def single_world_controller(name: str) -> str | None:
    """Why controller ``name`` flies one vehicle only (None: it serves every slot at once)."""
    return registry.get(name).single_world


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
    #: Rows the device record table holds between drains (164 s at 250 Hz; a multiple of the 16 ticks a replay
    #: runs; fewer for many worlds, see ``Recorder.table_bytes``). A drain has a fixed cost (the Parquet file's
    #: set-up, two fsyncs, run.json) besides its rows': a full drain of 40,960 rows costs 0.85 µs a tick against
    #: 1.2 for 10,240 (docs/benchmarking.md). A killed run still loses at most about 2 s of wall time.
    record_capacity: int = 40960
    #: Ticks per graph replay; None lets the loop choose (a hidden knob for tests, not a CLI option).
    ticks_per_replay: int | None = None
    worlds: int = setting(1, "Vehicles flown at once, one Newton world each, in one graph (docs/worlds.md)")
    vehicles: int = setting(1, "Vehicles in each world, in a line --spacing apart (vehicle k starts k x spacing "
                            "east of the file's place), each flying its own mission from where it starts "
                            "(docs/fleets.md)", minimum=1, maximum=64)
    spacing: float = setting(DEFAULT_SPACING, "With --vehicles: the distance between neighbours in the line",
                             unit="m", minimum=0.0, min_open=True)
    vehicle_contact: bool = setting(True, "With --vehicles: the vehicles of a world collide (one Newton world); "
                                    "--no-vehicle-contact gives each its own, so vehicle k flies the bits a "
                                    "one-vehicle run of it flies", flag="--vehicle-contact/--no-vehicle-contact")
    end_on_collision: bool = setting(False, "With --vehicles and their contact: a collision between two vehicles "
                                     "ends their world's flight (every vehicle of it), exit reason collision "
                                     "(docs/fleets.md)")
    #: Each vehicle's start as "NORTH,EAST[,YAW]" ([m], [m], [deg]) from the file's place and heading, one per
    #: vehicle, in the line's stead.
    offsets: list[str] = setting(help="With --vehicles: where a vehicle starts, NORTH,EAST [m] from the vehicle file's "
                                      "place, in the line's stead, and optionally YAW, its start heading [deg] "
                                      "clockwise seen from above from the file's (default 0); once per vehicle, "
                                      "vehicle 0's first",
                                 default_factory=list, flag="--offset", metavar="NORTH,EAST[,YAW]")
    #: The index of this run's vehicle 0 in its world (``--world-of RUN:I:K``: vehicle k of a fleet flown alone).
    first_vehicle: int = 0
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
    #: Processes the worlds are split over (:mod:`nexus.runtime.shards`): each flies a contiguous range of them, and
    #: the run's folder joins their records; 0 takes one per core, ``auto`` one per core once the run is long
    #: enough to pay for a model built in every process (:func:`nexus.runtime.shards.shard_count`), else one. The
    #: bits of every world are the same for any count.
    shards: int | str = setting(AUTO_SHARDS, "Processes to fly the worlds in, each a contiguous range of them: a "
                                "count, 0 (one per core) or auto (a process per "
                                f"{AUTO_SHARD_WORLD_TICKS / 1e6:g} M world-ticks, worlds x the duration's ticks, at "
                                "most one per core: a shorter run flies in one process, as a second costs more in "
                                "its own build than it saves); the record and summary are the same bit for bit for "
                                "any count (docs/worlds.md)", minimum=0, maximum=256, metavar="K|auto")

    def __post_init__(self):
        self.plugins = list(self.plugins)
        self.offsets = list(self.offsets)
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

    @property
    def fleet(self) -> FleetLayout:
        """The vehicles of each world and their line (checked)."""
        return FleetLayout(self.vehicles, float(self.spacing), bool(self.vehicle_contact), self.first_vehicle,
                           parse_offsets(self.offsets) if self.offsets else None)

    @property
    def slots(self) -> int:
        """Vehicles flown in all: worlds x vehicles, the leading axis of every device signal."""
        return self.worlds * self.vehicles

    def check(self) -> None:
        """Refuse settings that cannot fly together, before anything is built (one-line errors)."""
        if isinstance(self.worlds, bool) or not isinstance(self.worlds, int) or self.worlds < 1:
            raise BuildError(f"--worlds {self.worlds}: a run flies at least one world; give a whole number, 1 or more")
        if isinstance(self.record_every, bool) or not isinstance(self.record_every, int) or self.record_every < 1:
            raise BuildError(f"--record-every {self.record_every}: give a whole number of ticks, 1 or more")
        if self.shards != AUTO_SHARDS and (isinstance(self.shards, bool) or not isinstance(self.shards, int)
                                           or self.shards < 0):
            raise BuildError(f"--shards {self.shards}: give a whole number of processes, 1 or more (0: one per core)")
        check_solver(self.solver)
        self.fleet  # noqa: B018  (its checks: a whole number of vehicles, a spacing above 0)
        single_world = single_world_controller(self.controller)
        if self.vehicles > 1 and single_world and not registry.get(self.controller).one_world_fleet:
            raise BuildError(f"--controller {self.controller} --vehicles {self.vehicles}: {single_world}; fly "
                             "--vehicles 1, or a controller that serves every vehicle at once")
        if self.wind is not None:
            parse_wind(self.wind)  # SPEED@FROM, before anything is built (a sweep's points too)
        if self.realtime is not None:
            check_factor(self.realtime)
        if self.render not in RENDER_MODES:
            raise BuildError(f"--render {self.render}: choose one of {', '.join(RENDER_MODES)}")
        if self.record_mode not in RECORD_MODES:
            raise BuildError(f"--record {self.record_mode}: choose one of {', '.join(RECORD_MODES)}")
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
        values["offsets"] = list(self.offsets)
        for name in OMITTED_AT_DEFAULT:
            if values[name] == ADDED_LATER[name]:
                del values[name]
        if values["shards"] in (1, AUTO_SHARDS):  # read back as 1: a replay or a sweep's point flies in one process
            del values["shards"]
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
