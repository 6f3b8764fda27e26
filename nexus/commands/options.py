"""Option helpers shared by the ``nexus`` commands: the device, and the flight options of ``run`` and ``plan``.

The flight options are read from :class:`nexus.flight.RunConfig` and the
controller registry, which load Warp and Newton; :class:`LaterOptions` makes
them when a command first needs them (to parse its arguments or show its
help), so that ``nexus --help`` and the other commands load neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import click


class LaterOptions(click.Command):
    """A command whose first options are made when first needed, not when the command is defined.

    ``later``: functions, each returning a list of click option decorators; their options come first, in
    order, then those the command's own decorators add.
    """

    def __init__(self, *args, later: Sequence[Callable[[], list]] = (), **kwargs):
        self._later = tuple(later)
        super().__init__(*args, **kwargs)

    @property
    def params(self) -> list[click.Parameter]:
        if self._later:
            makers, self._later = self._later, ()
            self._own[:0] = made_options(makers)
        return self._own

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._own = value


def made_options(makers: Sequence[Callable[[], list]]) -> list[click.Parameter]:
    """The click parameters the decorators that ``makers`` return make, in the order the decorators are listed."""

    def holder():
        pass

    for make in reversed(makers):
        for decorator in reversed(make()):
            holder = decorator(holder)
    return holder.__click_params__[::-1]


class LaterChoice(click.Choice):
    """A choice whose values ``values()`` gives each time they are read (when the option is used or shown)."""

    def __init__(self, values: Callable[[], Sequence[str]]):
        self._values = values
        super().__init__(())

    @property
    def choices(self):
        return self._values()

    @choices.setter
    def choices(self, value):
        pass


def _devices() -> tuple[str, ...]:
    from nexus.core.device import DEVICE_CHOICES

    return DEVICE_CHOICES


#: ``--device``'s type: auto, cpu or cuda (read from :mod:`nexus.core.device`, which loads Warp, when used).
DEVICES = LaterChoice(_devices)


def resolve(device: str, verbose: bool) -> str:
    """Start Warp and the Warp device that ``--device`` names (a usage error when there is none such)."""
    from nexus.core.device import resolve_device
    from nexus.core.errors import NexusError
    from nexus.core.warp_setup import init_warp

    init_warp(verbose)
    try:
        return resolve_device(device)
    except NexusError as error:
        raise click.UsageError(str(error)) from None


def flight_options() -> list:
    """The options shared by ``run`` and ``plan`` (click decorators, in order); their defaults are
    :class:`nexus.flight.RunConfig`'s."""
    from nexus.assembly import MISSIONS
    from nexus.flight import RECORD_MODES, RENDER_MODES, RunConfig

    default = RunConfig()
    decorators = [
        click.option("--vehicle", default=default.vehicle, show_default=True,
                     help="Vehicle name (a file in vehicles/) or path to a .usda file."),
        click.option("--scene", default=default.scene, show_default=True,
                     help="Scene name (a file in scenes/) or path to a .usda file."),
        click.option("--device", type=DEVICES, default=default.device, show_default=True,
                     help="auto takes the GPU when one is present."),
        click.option("--controller", type=LaterChoice(_controllers), default=default.controller, show_default=True,
                     help="What writes the controls (docs/controllers.md; one of your own: --plugin MODULE)."),
        click.option("--seed", type=click.IntRange(min=0), default=default.seed, show_default=True,
                     help="Seed of every random stream."),
        click.option("--tick-hz", type=click.FloatRange(min=1.0, max=10000.0), default=default.tick_hz, show_default=True,
                     help="Control tick rate [Hz]."),
        click.option("--substeps", type=click.IntRange(min=1), default=default.substeps, show_default=True,
                     help="Solver steps per tick."),
        click.option("--solver", type=click.Choice(("mujoco", "featherstone")), default=default.solver,
                     show_default=True, help="Physics solver; featherstone is the differentiable one."),
        click.option("--eager", is_flag=True, default=default.eager,
                     help="Launch stage by stage instead of replaying graphs (debugging)."),
        click.option("--mission", type=click.Choice(MISSIONS), default=default.mission, show_default=True,
                     help="With --controller pid: the scene's mission, or the same mission shortened to under 10 s."),
        *(_controller_option(f, hint) for _, f, hint in _controller_flags()),
        click.option("--worlds", type=int, default=default.worlds, show_default=True,
                     help="Vehicles flown at once, one Newton world each, in one graph (docs/worlds.md)."),
        click.option("--vary", type=click.Path(dir_okay=False), default=default.vary,
                     help="Variation file (TOML): each world's mass, rotors, sensors, start, wind and faults, drawn "
                          "from the seed (docs/worlds.md lists every parameter)."),
        click.option("--record-every", type=int, default=default.record_every, show_default=True,
                     help="Record ticks K, 2K, 3K, ... of every world (every tick: 1)."),
        click.option("--record", "record_mode", type=click.Choice(RECORD_MODES), default=default.record_mode,
                     show_default=True, help="full: the record and the per-world summary; summary: the summary only."),
        click.option("--render", type=click.Choice(RENDER_MODES), default=default.render, show_default=True,
                     help="Where cameras and lidars render: peer (a process of its own, overlapping the loop), "
                          "inline (this process), auto (peer on the CPU, inline on a GPU)."),
        click.option("--plugin", "plugins", multiple=True, is_eager=True, callback=_import_plugins, metavar="MODULE",
                     help="Import MODULE before anything else (repeatable): a module of your own that registers a "
                          "controller (docs/controllers.md); run.json lists it."),
    ]
    return decorators


def _controllers() -> list[str]:
    """``--controller``'s choices: the registered controllers, read when the option is used (after ``--plugin``)."""
    from nexus.control import registry

    return registry.names()


def _import_plugins(ctx, param, modules):
    from nexus.control import registry
    from nexus.core.errors import BuildError

    try:
        registry.import_plugins(modules)
    except BuildError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    return modules


def _controller_flags() -> list:
    """``(controller, field, type hint)`` of each option of Nexus's own controllers that has a flag."""
    import typing
    from dataclasses import fields

    from nexus.control import registry

    found = []
    for entry in registry.controllers(builtin_only=True).values():
        hints = typing.get_type_hints(entry.options)
        found += [(entry.name, f, hints[f.name]) for f in fields(entry.options) if f.metadata.get("flag")]
    return found


def _dest(f) -> str:
    return f.metadata["flag"].lstrip("-").replace("-", "_")


def _controller_option(f, hint):
    """The click option of a controller's option field (its flag, help, default and bounds)."""
    meta = f.metadata
    if hint is bool:
        return click.option(meta["flag"], _dest(f), is_flag=True, default=f.default, help=meta["help"])
    lo, hi = meta.get("minimum"), meta.get("maximum")
    if meta.get("path"):
        kind = click.Path(dir_okay=False)
    elif hint is int:
        kind = click.IntRange(lo, hi) if lo is not None or hi is not None else int
    elif hint is float:
        kind = click.FloatRange(lo, hi) if lo is not None or hi is not None else float
    else:
        kind = str
    return click.option(meta["flag"], _dest(f), type=kind, default=f.default, show_default=f.default is not None,
                        help=meta["help"])


def default_durations() -> dict[str, float]:
    from nexus.control import registry

    return {name: entry.duration_s for name, entry in registry.controllers(builtin_only=True).items()}


def run_config(ctx, controller, **flight):
    """The :class:`~nexus.flight.RunConfig` of the options :func:`flight_options` adds (and ``--duration``).

    A controller's option given on the command line for another controller is refused.
    """
    from nexus.control import registry
    from nexus.flight import RunConfig

    chosen = {}
    for owner, f, _ in _controller_flags():
        value = flight.pop(_dest(f))
        if owner == controller:
            chosen[f.name] = value
        elif ctx.get_parameter_source(_dest(f)) == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{f.metadata['flag']} needs --controller {owner}")
    options = registry.get(controller).options(**chosen)
    return RunConfig(controller=controller, controller_options=options, plugins=list(flight.pop("plugins")), **flight)
