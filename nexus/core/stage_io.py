"""The arguments a stage runs with: its buffers, bound once at build time."""

from __future__ import annotations

from typing import Any


class StageIO:
    """Maps a stage's declared signal names to their buffers.

    A device stage gets Warp arrays (a view for a leading-part read, a list of
    arrays for a list read). A host stage gets ports with ``read``/``write``.
    ``io["name"]`` and ``io.name`` both work; names with ``/`` need the former.
    """

    def __init__(self, stage_name: str, buffers: dict[str, Any], device: str, done: Any, finish,
                 unread: frozenset[str] = frozenset(), state_in: dict[str, Any] | None = None,
                 state_out: dict[str, Any] | None = None):
        self._stage_name = stage_name
        self._buffers = buffers
        self._unread = unread
        self.device = device
        #: The component's declared state (name -> array), as this stage reads it and as it leaves it.
        #: The loop binds the same arrays to both; see :mod:`nexus.core.state`.
        self.state_in: dict[str, Any] = state_in if state_in is not None else {}
        self.state_out: dict[str, Any] = self.state_in if state_out is None else state_out
        #: Device flag (``wp.int32``, shape (1,)) a finishing device stage sets to 1.
        self.done = done
        self._finish = finish

    def __getitem__(self, signal: str) -> Any:
        try:
            return self._buffers[signal]
        except KeyError:
            raise KeyError(
                f"stage '{self._stage_name}' did not declare signal '{signal}'; "
                f"it declared {sorted(self._buffers)}"
            ) from None

    def __getattr__(self, signal: str) -> Any:
        if signal.startswith("_"):
            raise AttributeError(signal)
        try:
            return self[signal]
        except KeyError as error:
            raise AttributeError(str(error)) from None

    def __contains__(self, signal: str) -> bool:
        return signal in self._buffers

    @property
    def unread(self) -> frozenset[str]:
        """This stage's outputs that no stage reads."""
        return self._unread

    def is_read(self, signal: str) -> bool:
        """False for an output of this stage that no stage reads: a writer may skip it."""
        return signal not in self._unread

    def finish(self) -> None:
        """End the run once the current tick completes (host stages)."""
        self._finish()
