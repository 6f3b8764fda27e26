"""A component: a named part of the vehicle that declares stages."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from nexus.core.stage import Stage

if TYPE_CHECKING:
    from nexus.core.build_context import BuildContext
    from nexus.core.ring import Place
    from nexus.core.spec import Spec
    from nexus.core.taped import ExternalCopies


class Component:
    """Base class for everything that takes part in the tick.

    ``name`` is the component's prim path (or any unique name). ``connections``
    maps an input signal to the writer this component takes it from, a
    component name or the prim an output belongs to: the USD relationship
    ``nexus:inputs:<signal>``. Subclasses override :meth:`stages` and, to
    allocate their own state once before capture, :meth:`prepare`.

    A component declares itself once in its class's :attr:`spec` (parameters,
    ports, state; see :mod:`nexus.core.spec`). With a spec that names a stage,
    the default :meth:`stages` is that one stage, running :meth:`run` on the
    spec's inputs and outputs.
    """

    #: The declaration of this kind of component; None for ad-hoc components (tests, tools).
    spec: ClassVar[Spec | None] = None
    #: Where its stages go among those of their kind (:class:`nexus.core.ring.Place`, declared where the
    #: component joins a flight: :func:`nexus.core.ring.placed`); None: the default role.
    place: Place | None = None

    def __init__(self, name: str, connections: Mapping[str, str] | None = None):
        if not name:
            raise ValueError("a component needs a non-empty name")
        self.name = name
        self.connections: dict[str, str] = dict(connections or {})

    def stages(self) -> list[Stage]:
        """The stages this component runs each tick; must not be empty."""
        spec = self.spec
        if spec is None or spec.stage is None:
            return []
        return [Stage(spec.stage, spec.kind, self.run, reads=self.reads(), writes=self.writes(), host=spec.host)]

    def reads(self) -> tuple:
        """The spec's inputs as :class:`~nexus.core.signals.Read` declarations for this instance."""
        return tuple(port.read(self) for port in (self.spec.all_inputs if self.spec else ()))

    def writes(self) -> tuple:
        """The spec's outputs as :class:`~nexus.core.signals.Write` declarations for this instance."""
        return tuple(port.write(self) for port in (self.spec.all_outputs if self.spec else ()))

    def run(self, io) -> None:  # pragma: no cover - a component with a spec stage overrides it
        raise NotImplementedError(f"{type(self).__name__} declares stage '{self.spec.stage}' but no run()")

    def external_state(self) -> dict[str, Any]:
        """Arrays of state this component keeps outside the engine's store (a physics solver's own
        state), by name: a snapshot of the tick state copies them too. Empty by default."""
        return {}

    def tick_copies(self) -> ExternalCopies | None:
        """For a taped run (:class:`~nexus.core.taped.TickCopies`): the copies per tick of the state this
        component keeps outside the engine's declared state, or None when it keeps none (the default)."""
        return None

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
