"""Option helpers shared by the ``nexus`` commands: the device, and the flight options of ``run`` and ``plan``.

The flight options are read from :class:`nexus.runtime.config.RunConfig` and the
controller registry, which load Warp and Newton; :class:`LaterOptions` makes
them when a command first needs them (to parse its arguments or show its
help), so that ``nexus --help`` and the other commands load neither.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence
from dataclasses import MISSING, fields

import click

from nexus.control import registry
from nexus.core.device import DEVICE_CHOICES, resolve_device
from nexus.core.errors import BuildError, NexusError
from nexus.core.warp_setup import init_warp
from nexus.runtime.config import AUTO_SHARDS, RunConfig
from nexus.vocab.settings import help_of


class LaterOptions(click.Command):
    """A command some of whose options are made when it first needs them (to parse its arguments or show its
    help), not when it is defined: those that :func:`later` marks, each in its place among the others."""

    @property
    def params(self) -> list[click.Parameter]:
        if any(isinstance(p, _Later) for p in self._own):
            self._own[:] = [made for p in self._own for made in (p.options() if isinstance(p, _Later) else [p])]
        return self._own

    @params.setter
    def params(self, value: list[click.Parameter]) -> None:
        self._own = value


class _Later:
    """The place of the options ``make()`` returns (click option decorators) among a command's parameters."""

    def __init__(self, make: Callable[[], list]):
        self.make = make

    def options(self) -> list[click.Parameter]:
        def holder():
            pass

        for decorator in reversed(self.make()):
            holder = decorator(holder)
        return getattr(holder, "__click_params__", [])[::-1]


def later(make: Callable[[], list]):
    """A decorator for a :class:`LaterOptions` command: the options ``make()`` returns (click option decorators,
    in order) stand here among the command's options, made when the command first needs them."""

    def decorate(f):
        f.__dict__.setdefault("__click_params__", []).append(_Later(make))
        return f

    return decorate


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
    return DEVICE_CHOICES


#: ``--device``'s type: auto, cpu or cuda (read from :mod:`nexus.core.device`, which loads Warp, when used).
DEVICES = LaterChoice(_devices)


def resolve(device: str, verbose: bool) -> str:
    """Start Warp and the Warp device that ``--device`` names (a usage error when there is none such)."""

    init_warp(verbose)
    try:
        return resolve_device(device)
    except NexusError as error:
        raise click.UsageError(str(error)) from None


#: The RunConfig fields ``run`` and ``plan`` take as options, in the order their ``--help`` lists them; None
#: stands for the options of Nexus's own controllers (from the controller registry).
FLIGHT_FIELDS = ("vehicle", "scene", "device", "controller", "seed", "tick_hz", "substeps", "solver", "estimator", "eager",
                 "mission", None, "worlds", "vehicles", "spacing", "offsets", "vehicle_contact", "end_on_collision", "vary", "record_every", "record_mode", "render", "wind", "turbulence",
                 "plugins")


def flight_options() -> list:
    """The options shared by ``run`` and ``plan`` (click decorators, in order), made from the fields of
    :class:`nexus.runtime.config.RunConfig`: their flags, defaults, help, choices and bounds."""
    made = []
    for name in FLIGHT_FIELDS:
        if name is None:
            made += [_controller_option(f, hint) for _, f, hint in _controller_flags()]
        elif name == "plugins":
            made.append(plugin_option())
        else:
            made.append(config_option(name))
    return made


def config_option(name: str, help: str | None = None, **extra):
    """The click option of :class:`~nexus.runtime.config.RunConfig`'s field ``name``.

    Its flag is ``--<name>`` (or the field's ``flag``), its type comes from its type hint, choices and bounds,
    its default from the field (shown unless None), its help from the field unless ``help`` replaces it;
    ``extra`` goes to ``click.option``. A list field is an option given once per item.
    """

    f = next(f for f in fields(RunConfig) if f.name == name)
    hint = typing.get_type_hints(RunConfig)[name]
    flag = f.metadata.get("flag") or "--" + name.replace("_", "-")
    return field_option(f, hint, flag, name, help_of(f) if help is None else help, **extra)


def field_option(f, hint, flag: str, dest: str, help: str, **extra):
    """The click option ``flag`` (value in ``dest``) of a dataclass field whose metadata holds its choices, bounds
    and whether it is a file (a RunConfig field's :func:`~nexus.runtime.flight.setting`, a controller's
    :func:`~nexus.control.registry.option`): a flag for a bool, repeated for a list, else one value."""
    if hint is bool:
        return click.option(flag, dest, is_flag=True, default=f.default, help=help, **extra)
    if f.metadata.get("metavar"):
        extra = {"metavar": f.metadata["metavar"], **extra}
    if f.default is MISSING:  # a list: one item each time the option is given
        return click.option(flag, dest, multiple=True, help=help, **extra)
    return click.option(flag, dest, type=_click_type(f, hint), default=f.default, show_default=f.default is not None,
                        help=help, **extra)


def _click_type(f, hint):
    """The click type of a field: its choices, a file, a bounded number, or its plain type."""
    meta = f.metadata
    choices = meta.get("choices")
    if choices is not None:
        return LaterChoice(choices) if callable(choices) else click.Choice(choices)
    if meta.get("path"):
        return click.Path(dir_okay=False)
    kind = next((k for k in (bool, int, float) if k in (hint, *typing.get_args(hint))), None)
    lo, hi = meta.get("minimum"), meta.get("maximum")
    if kind is None or (lo is None and hi is None):
        return kind
    if kind is int:
        return click.IntRange(lo, hi)
    return click.FloatRange(lo, hi, min_open=meta.get("min_open", False))


def vehicle_and_scene(vehicle_help: str | None = None, scene_help: str | None = None) -> Callable[[], list]:
    """For :func:`later`: ``--vehicle`` and ``--scene`` with :class:`~nexus.runtime.config.RunConfig`'s defaults (for the
    commands that take them without the other flight options), with the help given."""

    def make() -> list:
        default = RunConfig()
        return [click.option("--vehicle", default=default.vehicle, show_default=True, help=vehicle_help),
                click.option("--scene", default=default.scene, show_default=True, help=scene_help)]

    return make


def plugin_option():
    """``--plugin MODULE`` (RunConfig's ``plugins``): imports each module as the command line is read."""
    return config_option("plugins", is_eager=True, callback=_import_plugins, metavar="MODULE")


def _import_plugins(ctx, param, modules):
    try:
        registry.import_plugins(modules)
    except BuildError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None
    return modules


def _controller_flags() -> list:
    """``(controller, field, type hint)`` of each option of Nexus's own controllers that has a flag."""
    import typing
    from dataclasses import fields


    found = []
    for entry in registry.controllers(builtin_only=True).values():
        hints = typing.get_type_hints(entry.options)
        found += [(entry.name, f, hints[f.name]) for f in fields(entry.options) if f.metadata.get("flag")]
    return found


def _dest(f) -> str:
    return f.metadata["flag"].lstrip("-").replace("-", "_")


def _controller_option(f, hint):
    """The click option of a controller's option field (its flag, help, default and bounds)."""
    return field_option(f, hint, f.metadata["flag"], _dest(f), f.metadata["help"])


def default_durations() -> dict[str, float]:
    return {name: entry.duration_s for name, entry in registry.controllers(builtin_only=True).items()}


def run_config(ctx, controller, **flight):
    """The :class:`~nexus.runtime.config.RunConfig` of the options :func:`flight_options` adds (and ``--duration``).

    A controller's option given on the command line for another controller is refused.
    """

    chosen = {}
    for owner, f, _ in _controller_flags():
        value = flight.pop(_dest(f))
        if owner == controller:
            chosen[f.name] = value
        elif ctx.get_parameter_source(_dest(f)) == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"{f.metadata['flag']} needs --controller {owner}")
    options = registry.get(controller).options(**chosen)
    return RunConfig(controller=controller, controller_options=options, plugins=list(flight.pop("plugins")), **flight)


# -- --shards K|auto: a count of processes, or auto (its own click type: the option takes a word besides numbers)

#: The most processes ``--shards`` takes (the field's maximum).
MOST_SHARDS = int(next(f for f in fields(RunConfig) if f.name == "shards").metadata["maximum"])


class ShardCount(click.ParamType):
    """A whole number from 0 to :data:`MOST_SHARDS`, or ``auto``."""

    name = "K|auto"

    def convert(self, value, param, ctx):
        if value == AUTO_SHARDS or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        try:
            count = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r}: give a whole number of processes (0: one per core) or {AUTO_SHARDS}", param, ctx)
        if not 0 <= count <= MOST_SHARDS:
            self.fail(f"{count}: give 0 to {MOST_SHARDS} processes (0: one per core) or {AUTO_SHARDS}", param, ctx)
        return count


def shards_option():
    """The click option ``--shards`` (value in ``shards``)."""
    f = next(f for f in fields(RunConfig) if f.name == "shards")
    return click.option("--shards", "shards", type=ShardCount(), default=f.default, show_default=True,
                        help=help_of(f))
