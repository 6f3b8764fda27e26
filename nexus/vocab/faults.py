"""Scenario faults by declaration: a part says, beside its class, which ``[[fault]] kind`` breaks it.

A scenario file's ``[[fault]]`` starts at a time (``at = 3.0`` [s]) or when a condition on the flight first
holds (``when = {altitude_above = 1.0}``), and takes keys of its own (a rotor fault's ``rotor`` and
``fraction``). Whatever a fault does, it does as fixed drawn values: the scenario hands every world the
values its faults set (``rotor_fail_time = 3.0``, ...), and the part that owns them reads them while it
prepares (``ctx.varied(name, default)``), as it would read a variation file's draws. So a part declares:

* the drawn parameters it reads, with :func:`nexus.vocab.drawn.draws` (their units and checks, so a
  variation file may draw them too and ``nexus params`` lists them), and
* the fault, with :func:`declare_faults`: its ``kind``, the drawn value its start time sets
  (:attr:`Fault.time`), and each key a ``[[fault]]`` of that kind takes (:class:`FaultKey`: type, unit,
  allowed values, default, and the drawn value it sets).

The scenario file (:mod:`nexus.scenario.spec`) then accepts ``kind = "<kind>"``, checks its keys against
this declaration and turns it into those values; nothing else names the kind. A fault started by a
condition is built with a start time no run reaches, and the stage that watches the condition writes the
firing time into the arrays the owner lists under the fault's kind in its ``fault_clocks()`` (per world
[ns]: :mod:`nexus.runtime.fault_trigger`).

This module holds the declarations and the register they fill as their modules are imported (Nexus's
own, or a module of one's own imported with ``nexus run --plugin MODULE``); it knows no reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nexus.core.errors import BuildError
from nexus.vocab.drawn import Interval

#: The types a fault's key may take, as a scenario file writes them.
KEY_KINDS = ("float", "int", "str")


@dataclass(frozen=True)
class FaultKey:
    """One key a ``[[fault]]`` of a declared kind takes: the drawn value it ``sets``, its type (``kind``: one of
    :data:`KEY_KINDS`), unit, meaning, the value a fault that leaves it out gets (``default``), the allowed
    values of a number (``allowed``, an :class:`~nexus.vocab.drawn.Interval`; None: any finite number) and the
    fix a scenario's error gives for a value of the wrong type (``fix``; empty: one made from ``doc``)."""

    name: str
    sets: str
    unit: str
    doc: str
    default: Any
    kind: str = "float"
    allowed: Interval | None = None
    fix: str = ""

    def __post_init__(self):
        if self.kind not in KEY_KINDS:
            raise ValueError(f"fault key {self.name}: kind {self.kind!r}; choose one of {', '.join(KEY_KINDS)}")
        if self.name in ("kind", "at", "when"):
            raise ValueError(f"fault key {self.name}: the name is every fault's own; give it another")


@dataclass(frozen=True)
class Fault:
    """A scenario fault: its ``kind`` (``[[fault]] kind = "..."``), what it does (``doc``), the drawn value its
    start time [s] sets (``time``; ``math.inf`` in a world without the fault), the keys it takes, and why a
    scenario gives it once (``once``: the end of the sentence refusing a second one)."""

    kind: str
    doc: str
    time: str
    keys: tuple[FaultKey, ...] = ()
    once: str = "a scenario gives each kind of fault once"

    def values(self, given: dict, at: float) -> dict:
        """The fixed drawn values of one ``[[fault]]`` table (``given``: its keys as the file wrote them,
        checked) starting at ``at`` [s]."""
        out = {self.time: float(at)}
        for key in self.keys:
            value = given.get(key.name, key.default)
            out[key.sets] = float(value) if key.kind == "float" else value
        return out


@dataclass(frozen=True)
class DeclaredFault:
    """A fault with the part that declared it (its class): the owner of the values it sets."""

    fault: Fault
    owner: Any

    @property
    def label(self) -> str:
        """How a sentence names the owner: ``tests.test_adding_a_component.Tether``."""
        return f"{self.owner.__module__}.{self.owner.__qualname__}"


_DECLARED: dict[str, DeclaredFault] = {}
#: Counts the declarations, so a reader's cache (the scenario file's declaration) sees a new one.
_version = 0


def declare_faults(*faults: Fault):
    """Declare, above a part's class, the scenario faults that break it (see the module).

    The same class declared again (its module imported twice) replaces its faults; a kind another part
    already declares is refused.
    """

    def declare(target):
        global _version
        label = f"{target.__module__}.{target.__qualname__}"
        for kind in [k for k, d in _DECLARED.items() if d.label == label]:
            del _DECLARED[kind]
        for fault in faults:
            known = _DECLARED.get(fault.kind)
            if known is not None:
                raise BuildError(f"scenario fault {fault.kind!r} is declared by both {known.label} and {label}; "
                                 "rename one")
            _DECLARED[fault.kind] = DeclaredFault(fault, target)
        _version += 1
        return target

    return declare


def withdraw(target) -> None:
    """Forget the faults ``target`` declared (a test's own part, once it is done)."""
    global _version
    for kind in [k for k, d in _DECLARED.items() if d.owner is target]:
        del _DECLARED[kind]
    _version += 1


def declared() -> dict[str, DeclaredFault]:
    """Every declared fault by kind, in the order they were declared."""
    return dict(_DECLARED)


def version() -> int:
    """A number that changes with every declaration or withdrawal."""
    return _version


__all__ = ["KEY_KINDS", "DeclaredFault", "Fault", "FaultKey", "declare_faults", "declared", "version", "withdraw"]
