"""The errors ``nexus plot`` and ``nexus view`` raise on bad input (exit status 2, no traceback)."""

from __future__ import annotations

from nexus.core.errors import BuildError


class RunFolderError(BuildError):
    """RUN is not a run folder ``nexus run`` wrote, or its record cannot be shown (empty, unreadable)."""

    reason = "bad-run"


class UlogError(BuildError):
    """``--ulog FILE`` is not a ULog, lacks the topics the report needs, or was logged on another flight."""

    reason = "bad-ulog"


class ViewerError(BuildError):
    """The viewer cannot serve: its port is taken or its address is not this machine's."""

    reason = "bad-viewer"
