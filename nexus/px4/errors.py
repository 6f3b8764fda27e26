"""How a PX4 run can fail, each with the slug a run records as its ``exit_reason``.

Every one is a :class:`RunError` (PX4 failed while the ring ran), except a busy
port, which is found while the ring is built. ``reason`` lets scripts tell the
cases apart without parsing the message.
"""

from __future__ import annotations

from nexus.core.errors import BuildError, RunError


class LinkError(RunError):
    """The PX4 link failed: base of the errors below."""

    reason = "px4-link"


class PortBusyError(LinkError, BuildError):
    """The TCP port PX4 connects to could not be listened on."""

    reason = "px4-port-busy"


class ConnectTimeoutError(LinkError):
    """PX4 did not connect in time."""

    reason = "px4-no-connection"


class LinkClosedError(LinkError):
    """PX4 closed the connection, or it broke."""

    reason = "px4-disconnected"


class NoAnswerError(LinkError):
    """PX4 connected but never sent a usable HIL_ACTUATOR_CONTROLS."""

    reason = "px4-no-answer"


class AnswerTimeoutError(LinkError):
    """In lockstep, PX4 sent nothing for the tick within the answer timeout."""

    reason = "px4-timeout"


class WrongStampsError(LinkError):
    """In lockstep, PX4 answered, but never with the time of the tick it was sent."""

    reason = "px4-wrong-stamps"


class BadActuatorsError(RunError):
    """PX4's answers held non-finite controls for too many ticks in a row."""

    reason = "px4-bad-actuators"


class CommandRefusedError(RunError):
    """PX4 answered a mission command with a result other than accepted."""

    reason = "px4-command-refused"


class CommandUnacknowledgedError(RunError):
    """PX4 never confirmed or never acknowledged a mission command."""

    reason = "px4-command-unacknowledged"


class WrongAirframeError(LinkError):
    """PX4 runs an airframe of another kind than the vehicle (a multirotor's flying a plane)."""

    reason = "px4-wrong-airframe"
