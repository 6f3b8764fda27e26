"""A component: a named part of the vehicle that declares stages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nexus.core.build_context import BuildContext
    from nexus.core.stage import Stage


class Component:
    """Base class for everything that takes part in the tick.

    ``name`` is the component's prim path (or any unique name). ``connections``
    maps an input signal to the writer this component takes it from, a
    component name or the prim an output belongs to: the USD relationship
    ``nexus:inputs:<signal>``. Subclasses override :meth:`stages` and, to
    allocate their own state once before capture, :meth:`prepare`.
    """

    def __init__(self, name: str, connections: Mapping[str, str] | None = None):
        if not name:
            raise ValueError("a component needs a non-empty name")
        self.name = name
        self.connections: dict[str, str] = dict(connections or {})

    def stages(self) -> list[Stage]:
        """The stages this component runs each tick; must not be empty."""
        return []

    def prepare(self, ctx: BuildContext) -> None:
        """Allocate private device state. Called once, after the signal buffers
        exist and before any stage runs or is captured."""

    def check_end(self) -> None:
        """Called once when a run reaches its end without an error (its duration, or a stage's
        "done"): raise a :class:`~nexus.core.errors.NexusError` if the run did not do what this
        component was there for (e.g. an autopilot that never answered), so it cannot pass as a
        success."""

    def close(self) -> None:
        """Release what the component holds outside Warp (sockets, files) when the run ends."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
