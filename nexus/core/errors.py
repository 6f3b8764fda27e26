"""The errors Nexus raises, so callers can tell a bad build from a failed run."""


class NexusError(Exception):
    """Base of every error Nexus raises on purpose.

    ``reason`` is the short slug a run records as its ``exit_reason`` when this
    error ends it; subclasses name their own (``"build-error"``, ``"px4-timeout"``).
    """

    reason = "error"


class BuildError(NexusError):
    """The ring cannot be built: raised before any stage runs.

    Every message names what is at fault (component, stage, signal, file or
    prim) and, where there are two ends, both of them, and says how to fix it.
    """

    reason = "build-error"


class CaptureError(BuildError):
    """A segment could not be captured into a graph; names the stage that broke it."""


class RunError(NexusError):
    """A stage failed while the ring was running; names the stage."""
