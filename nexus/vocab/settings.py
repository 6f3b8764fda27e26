"""Settings and options: a dataclass field that carries what every reader of it needs.

A run's configuration (:class:`nexus.runtime.config.RunConfig`) declares its fields with :func:`setting`, a
controller's typed options (:mod:`nexus.control.registry`) with :func:`option`. Both write the same metadata
(help text, unit, bounds, command-line flag, whether the value is a file), so the command line's options, a
sweep file's checks and ``nexus params`` read either without knowing whose field it is.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import MISSING, Field, field
from typing import Any


def setting(default: Any = MISSING, help: str = "", *, default_factory: Any = MISSING, unit: str | None = None,
            choices: Sequence[str] | Callable[[], Sequence[str]] | None = None, minimum: float | None = None,
            maximum: float | None = None, min_open: bool = False, flag: str | None = None,
            path: bool = False, metavar: str | None = None) -> Field:
    """A run setting with what every reader of it needs: its help text and ``unit``, its ``choices``
    (a function: read each time, e.g. the controllers registered so far), its bounds (``min_open``: the minimum
    itself is refused), whether it is a file (``path``), its command-line ``flag`` when that is not
    ``--<name>``, and how --help writes its value (``metavar``). The command line's options
    (:mod:`nexus.commands.options`) and a sweep file's checks (:mod:`nexus.sweep.spec`) are made from it.
    """
    metadata = {"help": help, "unit": unit, "choices": choices, "minimum": minimum, "maximum": maximum,
                "min_open": min_open, "flag": flag, "path": path, "metavar": metavar}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def option(default: Any = None, help: str = "", *, flag: str | None = None, minimum: float | None = None,
           maximum: float | None = None, path: bool = False, always: bool = False, recorded: bool = True) -> Field:
    """A field of a controller's options: its default and help text, and how it appears elsewhere.

    ``flag`` is its command-line option (``--px4-port``; None: not on the command line), ``minimum`` and
    ``maximum`` bound it there, and ``path`` makes it a file there. ``run.json`` records a field whose
    value differs from its default, or every time when ``always``; ``recorded`` False never (a value that
    lives only in the process, such as a callable).
    """
    metadata = {"help": help, "flag": flag, "minimum": minimum, "maximum": maximum, "path": path, "always": always,
                "recorded": recorded}
    return field(default=default, metadata=metadata)


def choices_of(f: Field) -> tuple[str, ...] | None:
    """The values a setting may take (None: any of its type)."""
    choices = f.metadata.get("choices")
    if choices is None:
        return None
    return tuple(choices() if callable(choices) else choices)


def out_of_bounds(f: Field, value: Any) -> str | None:
    """What a setting's ``value`` must be when it is outside the setting's bounds (None: inside them)."""
    lo, hi = f.metadata.get("minimum"), f.metadata.get("maximum")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if lo is not None and (value < lo or (value == lo and f.metadata.get("min_open"))):
        return f"give more than {lo:g}" if f.metadata.get("min_open") else f"give {lo:g} or more"
    if hi is not None and value > hi:
        return f"give {hi:g} or less"
    return None


def help_of(f: Field) -> str:
    """A setting's help text as a sentence, with its unit: ``Control tick rate [Hz].``"""
    unit = f.metadata.get("unit")
    return f.metadata["help"] + (f" [{unit}]" if unit else "") + "."


__all__ = ["choices_of", "help_of", "option", "out_of_bounds", "setting"]
