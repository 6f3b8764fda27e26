"""Controllers, registered beside their classes: what ``--controller`` offers and how each one is built.

A controller's module ends with one :func:`register` call that says
everything the rest of Nexus needs to know about it: its builder, its typed
options (a frozen dataclass of :class:`ControllerOptions` whose fields carry
their help text, and a command-line flag where the command line sets them),
whether it reads the guidance's setpoint (then its runs get the scene's
mission) or brings its own estimator (then the vehicle's estimator prims are
left out), whether it can fly many worlds (and why not), its default run
length, its help line, and where it has them: the gains a scenario may scale,
what ``nexus run`` adds for it (:class:`RunHooks`) and the table of a sweep or
scenario file that sets it up. :mod:`nexus.runtime.assembly` builds from it,
:class:`nexus.runtime.config.RunConfig` takes its defaults and checks from it, the
command line generates ``--controller``'s choices and the controllers'
options from it, a sweep file's ``controller`` values are checked against
it, and the table of controllers in ``docs/controllers.md`` is checked
against :func:`table`.

Registration is open: a module outside Nexus registers a controller the same
way, and ``nexus run --plugin MODULE`` (or ``plugins = ["MODULE"]`` in a
sweep file's ``[run]`` table, carried in the run's configuration to every
sweep worker) imports that module before the run is built
(:func:`import_plugins`).
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, fields

from nexus.core.errors import BuildError
from nexus.core.lazy import import_once, load_module
from nexus.vocab.settings import option
from nexus.vocab.types import fits_type, type_text

#: The modules that register Nexus's own controllers, imported on the first look-up; ``--controller`` lists
#: their controllers in this order, then those registered by other modules in the order they registered.
BUILTIN_MODULES = ("nexus.control.pid", "nexus.px4.controller", "nexus.control.hold", "nexus.control.mpc.controller",
                   "nexus.control.policy.controller", "nexus.control.fixed_wing.plugin", "nexus.control.vtol.plugin")
DEFAULT_CONTROLLER = "pid"
#: The kinds of vehicle a controller may fly (:func:`for_vehicle`): a vehicle file with a wing
#: (``NexusFixedWingAeroAPI``) is a ``plane``, one with a wing and lift rotors (ESCs) a ``vtol``, any other a
#: ``multirotor``.
VEHICLE_KINDS = ("multirotor", "plane", "vtol")
MULTIROTOR, PLANE, VTOL = VEHICLE_KINDS
#: The controller a run of each kind flies when it names none (``--controller`` left at :data:`DEFAULT_CONTROLLER`).
DEFAULT_FOR_KIND = {"multirotor": DEFAULT_CONTROLLER, "plane": "fixed_wing", "vtol": "vtol"}
#: The kinds that built-in controllers registered without ``vehicles`` fly, by name (the rest: multirotors):
#: ``hold`` holds a row of controls, whatever the row drives; ``fixed_wing`` flies planes.
KINDS_BY_NAME = {"hold": VEHICLE_KINDS, "fixed_wing": ("plane",)}


@dataclass(frozen=True)
class ControllerOptions:
    """A controller's typed options (a controller without options has this empty class).

    Subclass it as a frozen dataclass whose fields are :func:`option`\\ s (plain fields work too: no help
    text, no flag). ``run.json`` holds :meth:`as_dict`; :meth:`from_dict` reads it back.
    """

    def as_dict(self) -> dict:
        """The recorded fields (see :func:`option`) as JSON-ready values (a tuple becomes a list)."""
        values = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if not f.metadata.get("recorded", True):
                continue
            if f.metadata.get("always") or f.default is MISSING or value != f.default:
                values[f.name] = list(value) if isinstance(value, tuple) else value
        return values

    def reads_guidance(self) -> bool:
        """True when these options make the controller read the guidance's ``setpoint`` and the vehicle's
        ``estimate`` although its registration says otherwise (PX4 flying an offboard policy): the run then
        gets the scene's mission and the vehicle's estimator."""
        return False

    def keywords(self) -> dict:
        """Every field as a keyword argument (what a builder passes on to a constructor)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping, where: str = "controller_options") -> ControllerOptions:
        """The options ``data`` holds (a field it lacks takes its default); ``where`` names ``data`` in errors.

        A key that is no field is refused, and so is a value of the wrong type (a whole number fits a
        float field, a list a tuple field). A field that is never recorded is skipped when read back.
        """
        if not isinstance(data, Mapping):
            raise BuildError(f"{where} is {type(data).__name__}; give a table of option names to values")
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(k for k in data if k not in known)
        if unknown:
            names = ", ".join(known) or "none"
            raise BuildError(f"{where}: unknown option {unknown[0]!r} for {cls.__name__}; its options: {names}")
        hints = typing.get_type_hints(cls)
        values = {}
        for name, value in data.items():
            if not known[name].metadata.get("recorded", True) and isinstance(value, str):
                continue  # an older run.json holds the text of a value that lives only in its process
            hint = hints[name]
            if isinstance(value, list) and (hint is tuple or typing.get_origin(hint) is tuple):
                value = tuple(value)
            if not fits_type(value, hint):
                raise BuildError(f"{where}.{name} is {value!r}, which is not of type {type_text(hint)}")
            values[name] = float(value) if hint is float else value
        return cls(**values)


@dataclass(frozen=True)
class RunHooks:
    """What ``nexus run`` does for a controller beyond its typed options (PX4: its built-in mission, an
    instance of a fleet, the ground-station relay): options of the run's own and the steps that apply them,
    so the command line names no controller."""

    #: ``options()``: the run's command-line options (click option decorators, in order), made when
    #: ``nexus run`` first needs them.
    options: Callable[[], list]
    #: Their parameter names: ``nexus run`` hands their values back as a dict of these keys.
    names: tuple[str, ...]
    #: ``check(ctx, config, values) -> config``: the run's configuration, before anything is written; refuses
    #: values that need this controller when the run flies another. Called whichever controller flies.
    check: Callable[..., typing.Any]
    #: ``start(config, values) -> (config, finish)``: once the run folder is ready; ``finish(out, info)``
    #: (None: nothing) gets run.json's contents when the run has ended and returns lines to print.
    start: Callable[..., typing.Any]


#: ``build(prim, path, ctx, options)``: the controller prim (``NexusPidControllerAPI``; None when the vehicle has
#: none), the path the controller takes (the prim's, or ``<default prim>/controller``), the
#: :class:`nexus.runtime.assembly.PrimContext` and the typed options.
Builder = Callable[[typing.Any, str, typing.Any, ControllerOptions], typing.Any]


@dataclass(frozen=True)
class Controller:
    """One registered controller (see :func:`register`)."""

    name: str
    build: Builder
    help: str
    options: type[ControllerOptions] = ControllerOptions
    reads_setpoint: bool = False
    own_estimator: bool = False
    #: Why it flies one world only; None when it flies any number.
    single_world: str | None = None
    #: Sim time a run flies unless its configuration gives a duration [s].
    duration_s: float = 60.0
    #: The module that registered it.
    module: str = ""
    #: The gains a scenario may scale by name (``controller.gain_scale``); the controller built from this entry
    #: scales them itself: ``controller.scale_gains({name: factor})``. Empty: it has no gains to scale.
    gains: tuple[str, ...] = ()
    #: What ``nexus run`` adds for it (:class:`RunHooks`); None: nothing.
    run_hooks: RunHooks | None = None
    #: The table of a sweep or scenario file that sets up what it needs outside Nexus (PX4's ``[px4]``: the
    #: binary, a fleet of instances); None: it needs none, and a file with such a table flies another one.
    setup_table: str | None = None
    #: The kinds of vehicle it flies (:data:`VEHICLE_KINDS`).
    vehicles: tuple[str, ...] = ("multirotor",)
    #: Whether, flying one world only, it still flies every vehicle of it (PX4: an instance per vehicle).
    one_world_fleet: bool = False

    def make_options(self, given: ControllerOptions | Mapping | None, where: str = "controller_options"):
        """``given`` as this controller's options: kept when it is, read as a table (None: the defaults)."""
        if isinstance(given, self.options):
            return given
        if given is None:
            return self.options()
        if isinstance(given, ControllerOptions):  # another controller's (a sweep point that changes it)
            given = given.as_dict()
        return self.options.from_dict(given, f"{where} of --controller {self.name}")


_REGISTRY: dict[str, Controller] = {}


def register(name: str, build: Builder, *, help: str, options: type[ControllerOptions] = ControllerOptions,
             reads_setpoint: bool = False, own_estimator: bool = False, single_world: str | None = None,
             duration_s: float = 60.0, gains: Sequence[str] = (), run_hooks: RunHooks | None = None,
             setup_table: str | None = None, vehicles: Sequence[str] | None = None,
             one_world_fleet: bool = False) -> Controller:
    """Register the controller ``name`` (what ``--controller`` takes); returns its entry.

    ``vehicles`` are the kinds of vehicle it flies (:data:`VEHICLE_KINDS`); None: those :data:`KINDS_BY_NAME`
    gives its name, else multirotors.

    The same builder registered again (its module imported twice) replaces its entry; another
    builder under a name that is taken is refused.
    """
    if not isinstance(options, type) or not issubclass(options, ControllerOptions):
        raise TypeError(f"controller {name!r}: options must be a ControllerOptions dataclass, not {options!r}")
    module = getattr(build, "__module__", "") or ""
    old = _REGISTRY.get(name)
    if old is not None and (old.module, getattr(old.build, "__qualname__", "")) != (
            module, getattr(build, "__qualname__", "")):
        raise BuildError(f"controller {name!r} is registered twice, by {old.module} and by {module}; rename one")
    if vehicles is None:
        vehicles = KINDS_BY_NAME.get(name, ("multirotor",))
    unknown = [kind for kind in vehicles if kind not in VEHICLE_KINDS]
    if unknown or not vehicles:
        raise TypeError(f"controller {name!r}: vehicles must be some of {', '.join(VEHICLE_KINDS)}; got {vehicles!r}")
    entry = Controller(name, build, help, options, reads_setpoint, own_estimator, single_world, float(duration_s),
                       module, tuple(gains), run_hooks, setup_table, tuple(vehicles),
                       one_world_fleet=bool(one_world_fleet))
    _REGISTRY[name] = entry
    return entry


_load_builtins = import_once(BUILTIN_MODULES)


def controllers(builtin_only: bool = False) -> dict[str, Controller]:
    """Every registered controller by name: Nexus's own first (in :data:`BUILTIN_MODULES` order), then the rest."""
    _load_builtins()
    order = {module: i for i, module in enumerate(BUILTIN_MODULES)}
    own = sorted((c for c in _REGISTRY.values() if c.module in order), key=lambda c: order[c.module])
    others = [] if builtin_only else [c for c in _REGISTRY.values() if c.module not in order]
    return {c.name: c for c in [*own, *others]}


def names() -> tuple[str, ...]:
    """``--controller``'s choices."""
    return tuple(controllers())


def get(name: str) -> Controller:
    """The controller registered as ``name``; a one-line :class:`BuildError` naming the choices otherwise."""
    found = controllers().get(name)
    if found is None:
        raise BuildError(f"unknown controller '{name}'; choose one of {', '.join(names())} (a controller of "
                         "your own: import the module that registers it with --plugin MODULE)")
    return found


def for_vehicle(name: str, kind: str, where: str) -> Controller:
    """The controller a run asking for ``name`` flies on a vehicle of ``kind`` (``where``: its file, for errors).

    :data:`DEFAULT_CONTROLLER` stands for "the default": a plane gets :data:`DEFAULT_FOR_KIND`'s. Another
    name must fly that kind, or the run is refused in one line naming the vehicle and the choices.
    """
    if name == DEFAULT_CONTROLLER:
        name = DEFAULT_FOR_KIND[kind]
    entry = get(name)
    if kind not in entry.vehicles:
        choices = [c.name for c in controllers().values() if kind in c.vehicles]
        raise BuildError(f"{where}: --controller {name} flies {' and '.join(entry.vehicles)} vehicles, and this "
                         f"vehicle is a {kind}; choose one of {', '.join(choices)}")
    return entry


def scalable_gains() -> tuple[str, ...]:
    """Every gain a scenario may scale, of every controller that has gains (in registration order)."""
    return tuple(dict.fromkeys(gain for c in controllers().values() for gain in c.gains))


def run_hooks() -> dict[str, RunHooks]:
    """Every registered controller's :class:`RunHooks`, by controller name."""
    return {c.name: c.run_hooks for c in controllers().values() if c.run_hooks is not None}


def with_setup_table(table: str) -> tuple[str, ...]:
    """The controllers a sweep or scenario file's ``table`` (``[px4]``) sets up, by name."""
    return tuple(c.name for c in controllers().values() if c.setup_table == table)


def import_plugins(modules: Sequence[str], source: str = "--plugin") -> None:
    """Import each module (each registers its controllers); ``source`` names where the list came from in errors."""
    for module in modules:
        if not isinstance(module, str) or not module:
            raise BuildError(f"{source}: {module!r} is not a module name; give a dotted name such as my_pkg.my_ctl")
        try:
            load_module(module)
        except ImportError as error:
            raise BuildError(f"{source} {module}: cannot import it ({error}); give a module on the Python path "
                             "(PYTHONPATH) that registers a controller") from None


def table() -> str:
    """The Markdown table of Nexus's own controllers that ``docs/controllers.md`` holds."""
    rows = ["| `--controller` | what it is | setpoint | estimator | worlds | default duration | options class | "
            "command-line options |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for c in controllers(builtin_only=True).values():
        flags = [f.metadata["flag"] for f in fields(c.options) if f.metadata.get("flag")]
        flags_text = ", ".join(f"`{flag}`" for flag in flags) or "—"
        rows.append(f"| `{c.name}` | {c.help} | {'reads it' if c.reads_setpoint else 'none'} | "
                    f"{'its own' if c.own_estimator else 'the vehicle’s'} | {'one' if c.single_world else 'N'} | "
                    f"{c.duration_s:g} s | {_class_text(c.options)} | {flags_text} |")
    return "\n".join(rows) + "\n"


def _class_text(options: type[ControllerOptions]) -> str:
    return "—" if options is ControllerOptions else f"`{options.__module__}.{options.__name__}`"
