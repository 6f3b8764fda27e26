"""Newton's warnings while it loads a vehicle, passed on through the ``nexus`` logger.

Newton reports what it ignores or guesses in a file as Python warnings
(``NewtonWarning``) or on its own loggers. A user reads ``run.log`` and
``run.json``, which collect the ``nexus`` logger, so while Newton loads, both
kinds are caught and re-logged there at WARNING level, each once, naming the
file being loaded. Nothing Newton says is lost or printed only to a console.
"""

from __future__ import annotations

import logging
import warnings
from contextlib import contextmanager

log = logging.getLogger("nexus")


class _ToNexus(logging.Handler):
    """Forwards Newton's log records of WARNING and above to the ``nexus`` logger."""

    def __init__(self, source: str):
        super().__init__(level=logging.WARNING)
        self.source = source

    def emit(self, record: logging.LogRecord) -> None:
        log.warning("Newton, loading %s: %s", self.source, record.getMessage())


@contextmanager
def newton_messages_to_nexus(source: str):
    """Within the block, Newton's warnings (Python warnings and its loggers') go to the ``nexus`` logger."""
    newton_log = logging.getLogger("newton")
    handler = _ToNexus(source)
    propagate = newton_log.propagate
    newton_log.addHandler(handler)
    newton_log.propagate = False  # printed once, by the nexus logger's handlers
    caught: list = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)  # NewtonWarning among them, every time, not once per place
            yield
    finally:
        newton_log.removeHandler(handler)
        newton_log.propagate = propagate
        seen: set[str] = set()
        for warning in caught:
            text = str(warning.message)
            if text not in seen:
                seen.add(text)
                log.warning("Newton, loading %s: %s", source, text)
