"""The device arrays a component exposes, declared by name, and the read-only container that holds them.

A component's kernels read arrays it builds in ``prepare`` (an ESC's time
constants, a propeller's thrust coefficients, the PID's gains). Other parts of
Nexus need a few of them: the differentiable rollout marks some as needing a
gradient and sets parameters through them, the gym redraws an ESC's lag each
episode. They ask for them by name, through :class:`NamedArrays`, never by
their place in a kernel's argument list, and the component's spec says which
names exist (:class:`ArrayDecl`, ``Spec.arrays``) and whether a gradient may
flow through each, so a reader can list them without building a vehicle.

A declaration may also give the rollout's name of the parameter that lives in
the array (``esc.tau_up``, ``rotor{n}.kt``); :func:`gradient_names` spells
them out, with the unit, the doc and the spec parameter each one sets. The
parameter table (``nexus params``) and the rollout both read that list, so a
new differentiable parameter is declared once, beside its kernel.

This module is domain-free: it knows names and templates, nothing of vehicles.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArrayDecl:
    """One device array a component exposes as ``component.arrays.<name>``.

    ``layout`` says in words what the array holds and how it is laid out
    (``"float32, one per ESC of the plant's fused group"``). ``gradient``: the
    differentiable rollout may ask for this array's gradient.

    ``rollout`` is the rollout's name template for the parameter(s) the array
    holds (None: the rollout sets nothing through it). Its fields:
    ``{n}`` the element, 1-based, one name each (``rotor{n}.kt``; without it
    one value is shared by every element, ``esc.tau_up``); ``{field}`` each of
    ``fields`` (a struct array: the struct fields, each also a parameter key
    of the spec); ``{axis}`` each of ``axes`` (the components of a vector).
    ``param`` is the spec parameter whose value the array holds (its unit,
    doc and USD attribute describe the name); ``axis_aliases`` are other
    names of ``axes``, position for position (``roll`` for ``x``); ``aliases``
    are short names, each ``(short, full name)``.
    """

    name: str
    layout: str
    unit: str = "-"
    doc: str = ""
    gradient: bool = False
    rollout: str | None = None
    param: str | None = None
    fields: tuple[str, ...] = ()
    axes: tuple[str, ...] = ()
    axis_aliases: tuple[str, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        if self.rollout is not None and not self.gradient:
            raise ValueError(f"array {self.name}: a rollout name ({self.rollout}) needs gradient=True")
        if "{field}" in (self.rollout or "") and not self.fields:
            raise ValueError(f"array {self.name}: the rollout name {self.rollout} has {{field}} but no fields")
        if "{axis}" in (self.rollout or "") and not self.axes:
            raise ValueError(f"array {self.name}: the rollout name {self.rollout} has {{axis}} but no axes")
        if self.axis_aliases and len(self.axis_aliases) != len(self.axes):
            raise ValueError(f"array {self.name}: give one alias per axis ({len(self.axes)})")


@dataclass(frozen=True)
class GradientName:
    """One scalar the rollout differentiates, as a declaration spells it out.

    ``array`` is the declared array it lives in; ``param`` the spec parameter
    it sets (``attr`` its USD attribute; ``component`` the vector component,
    None for a scalar); ``element`` the instance it lives in (0-based: rotor
    ``n`` is element ``n - 1``), None when every element shares it;
    ``field`` the struct field that holds it (a struct array), else None.
    """

    name: str
    array: str
    param: str | None
    attr: str | None
    component: int | None
    element: int | None
    unit: str
    doc: str
    aliases: tuple[str, ...] = ()
    field: str | None = None

    @property
    def shared(self) -> bool:
        """One value set on every element (every ESC's time constant)."""
        return self.element is None


def gradient_names(spec: Any, elements: int = 1) -> tuple[GradientName, ...]:
    """The rollout's names of ``spec``'s arrays (``Spec.arrays``), for ``elements`` instances of the component.

    Names come in declaration order, then element, field and axis order."""
    names: list[GradientName] = []
    for decl in spec.arrays:
        if decl.rollout is None:
            continue
        each = "{n}" in decl.rollout
        for element in (range(elements) if each else (None,)):
            for field in decl.fields or (decl.param,):
                param = spec.param(field) if field is not None else None
                for component, axis in (enumerate(decl.axes) if decl.axes else ((None, None),)):
                    name = decl.rollout.format(n=(element or 0) + 1, field=field, axis=axis)
                    aliases = []
                    if decl.axis_aliases:
                        aliases.append(decl.rollout.format(n=(element or 0) + 1, field=field,
                                                           axis=decl.axis_aliases[component]))
                    aliases += [short for short, full in decl.aliases if full in (name, *aliases)]
                    doc = param.doc if param is not None else decl.doc
                    names.append(GradientName(
                        name, decl.name, field, param.attr if param is not None else None, component, element,
                        param.unit if param is not None else decl.unit,
                        f"{doc}: component {component}" if component is not None else doc, tuple(aliases),
                        field if decl.fields else None))
    return tuple(names)


class NamedArrays(Mapping):
    """A component's device arrays by declared name: ``arrays.tau_up`` or ``arrays["tau_up"]``, read-only.

    There is no integer indexing: a position in a kernel's argument list is
    the component's own business, and ``arrays[7]`` raises ``TypeError``.
    A declared array the component does not hold (a launch that is not
    fused holds no group arrays) raises ``KeyError`` saying so.
    """

    __slots__ = ("_owner", "_declared", "_arrays")

    def __init__(self, owner: str, declared: tuple[ArrayDecl, ...], **arrays: Any):
        names = {d.name: d for d in declared}
        undeclared = sorted(set(arrays) - set(names))
        if undeclared:
            raise ValueError(f"{owner}: arrays {', '.join(undeclared)} are not declared in its spec "
                             f"(declared: {', '.join(names) or 'none'})")
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_declared", names)
        object.__setattr__(self, "_arrays", dict(arrays))

    def __getitem__(self, name: str) -> Any:
        if not isinstance(name, str):
            raise TypeError(f"{self._owner}'s arrays are named, not numbered: ask for one of "
                            f"{', '.join(self._declared)} by name (arrays.<name> or arrays['<name>']), not {name!r}")
        if name not in self._declared:
            raise KeyError(f"{self._owner} declares no array '{name}'; it declares {', '.join(self._declared)}")
        if name not in self._arrays:
            raise KeyError(f"{self._owner} holds no array '{name}' in this run (declared, but not built: "
                           f"it holds {', '.join(self._arrays) or 'none'})")
        return self._arrays[name]

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as error:
            raise AttributeError(error.args[0]) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{self._owner}'s arrays are read-only; the component builds them in prepare()")

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._arrays

    def declaration(self, name: str) -> ArrayDecl:
        """What the spec says about array ``name``."""
        if name not in self._declared:
            raise KeyError(f"{self._owner} declares no array '{name}'; it declares {', '.join(self._declared)}")
        return self._declared[name]

    def gradient(self) -> tuple[str, ...]:
        """The names of the held arrays a gradient may flow through."""
        return tuple(n for n in self._arrays if self._declared[n].gradient)

    def __repr__(self) -> str:
        return f"NamedArrays({self._owner}: {', '.join(self._arrays)})"


def declaring(components, array: str) -> list:
    """The components whose spec declares an array named ``array`` (in the order given)."""
    return [c for c in components if any(d.name == array for d in getattr(c.spec, "arrays", ()))]


__all__ = ["ArrayDecl", "GradientName", "NamedArrays", "declaring", "gradient_names"]
