"""The order of one tick: stage kinds first, then the roles of the components within a kind.

A tick runs its stages kind by kind (:data:`RING_ORDER`). Within one kind the
order can decide bits (the force stages' contributions are summed in the order
they run), so it is declared, never left to how a list happened to be built:
each component has a :class:`Place` (its role in the ring, and ``after`` /
``before`` where order within its role matters), and :func:`compose` sorts the
components by it. Within a role, a component's declared ``sequence`` (the
position its source declares it at: a vehicle file's prims, a scene's missions)
orders it, and a tie is broken by its declared ``name``, so the ring depends
neither on how the list of components was put together nor on a hash.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nexus.core.errors import BuildError

if TYPE_CHECKING:
    from nexus.core.component import Component

#: Stage kinds in the order they run each tick. Within a kind, stages run in
#: the order of their components' places (:func:`compose`).
RING_ORDER: tuple[str, ...] = (
    "clock",
    "clear",
    "command",
    "force",
    "step",
    "state",
    "sensor",
    "estimate",
    "guide",
    "control",
    "record",
)

#: The roles a component plays in a flight's ring, in the order their stages run within one kind:
#: ``clock`` the loop's clock; ``physics`` the plant; ``air`` the wind that the force stages read;
#: ``part`` the vehicle file's parts (sensors, ESCs, propellers, drag, estimator), in file order;
#: ``guidance`` the scene's mission or a scenario's steps; ``scenario`` what a scenario adds to the
#: vehicle (its drag); ``controller``; ``extra`` what a caller adds (tests, tools: the default);
#: ``fault`` what a scenario adds to break and watch the flight (its faults, the stage that fires them, the
#: ground contact its check counts); ``draw`` what a variation's draws add; ``monitor`` the stages that
#: watch every flight (the crash detector, the per-world summary);
#: ``record`` the recorder.
ROLES: tuple[str, ...] = ("clock", "physics", "air", "part", "guidance", "scenario", "controller", "extra",
                          "fault", "draw", "monitor", "record")
#: The role of a component that declares none.
DEFAULT_ROLE = "extra"

_RANK = {kind: index for index, kind in enumerate(RING_ORDER)}
_ROLE_RANK = {role: index for index, role in enumerate(ROLES)}


def kind_rank(kind: str) -> int:
    """Position of ``kind`` in the ring; raises ``KeyError`` for an unknown kind."""
    return _RANK[kind]


def is_known_kind(kind: str) -> bool:
    return kind in _RANK


@dataclass(frozen=True)
class Place:
    """Where a component's stages go among those of the same kind.

    ``role`` is one of :data:`ROLES`. ``sequence`` is the position the component's source declares it at
    (a prim's place in its file; 0 for a component no file lists). ``name`` breaks ties and is what other
    components of the same role name in their ``after`` and ``before`` (empty: the component's own name);
    ``after`` and ``before`` order this component after or before those of its role that declare those
    names (a name no component of the role declares orders nothing).
    """

    role: str = DEFAULT_ROLE
    sequence: int = 0
    name: str = ""
    after: tuple[str, ...] = ()
    before: tuple[str, ...] = ()

    def __post_init__(self):
        if self.role not in _ROLE_RANK:
            raise BuildError(f"unknown ring role {self.role!r}; the ring knows {', '.join(ROLES)}")


def place_of(component: Component) -> Place:
    """The component's declared place (its ``place`` attribute; the default role without one)."""
    return getattr(component, "place", None) or Place()


def placed(component: Component, role: str, *, sequence: int = 0, name: str = "", after: Sequence[str] = (),
           before: Sequence[str] = ()) -> Component:
    """``component`` with its place in the ring declared (for a component made where its role is known)."""
    component.place = Place(role, int(sequence), name, tuple(after), tuple(before))
    return component


def compose(components: Sequence[Component]) -> list[Component]:
    """The components in ring order: by role, then by ``after``/``before`` within a role, then by declared
    sequence and name; the order they are given in decides nothing (but between two of one name). Raises
    :class:`~nexus.core.errors.BuildError` for an ``after``/``before`` cycle."""
    by_role: dict[int, list[tuple[int, Component]]] = {}
    for index, component in enumerate(components):
        by_role.setdefault(_ROLE_RANK[place_of(component).role], []).append((index, component))
    ordered: list[Component] = []
    for rank in sorted(by_role):
        ordered += _within_role(by_role[rank])
    return ordered


def _order_name(component: Component) -> str:
    return place_of(component).name or component.name


def _within_role(members: list[tuple[int, Component]]) -> list[Component]:
    """One role's components: each after every member it must follow (a topological sort: of those free to
    go next, the first by declared sequence, then by name)."""
    names = {index: _order_name(component) for index, component in members}
    # Two components of one name are refused when the loop is built, naming them; until then, as given.
    keys = {index: (place_of(component).sequence, names[index], index) for index, component in members}
    must_follow: dict[int, set[int]] = {index: set() for index, _ in members}
    for index, component in members:
        place = place_of(component)
        for other, other_name in names.items():
            if other == index:
                continue
            if other_name in place.after:
                must_follow[index].add(other)
            if other_name in place.before:
                must_follow[other].add(index)
    left = sorted(members, key=lambda member: keys[member[0]])
    out: list[Component] = []
    done: set[int] = set()
    while left:
        free = next((member for member in left if must_follow[member[0]] <= done), None)
        if free is None:
            cycle = ", ".join(sorted(names[index] for index, _ in left))
            raise BuildError(f"the ring's after/before declarations form a cycle among {cycle}")
        left.remove(free)
        done.add(free[0])
        out.append(free[1])
    return out
