"""The errors ``nexus plot`` and ``nexus view`` raise on bad input (exit status 2, no traceback)."""

from __future__ import annotations

from nexus.core.errors import BuildError
from nexus.runtime.run_folder import RunFolderError

__all__ = ["RunFolderError", "UlogError", "ViewerError"]


class UlogError(BuildError):
    """``--ulog FILE`` is not a ULog, lacks the topics the report needs, or was logged on another flight."""

    reason = "bad-ulog"


class ViewerError(BuildError):
    """The viewer cannot serve: its port is taken or its address is not this machine's."""

    reason = "bad-viewer"
