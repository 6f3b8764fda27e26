"""How rendering can fail while a run flies, each with the run's ``exit_reason``."""

from __future__ import annotations

from nexus.core.errors import RunError


class RenderPeerDied(RunError):
    """The render peer's process ended (crashed, killed) while the run needed a frame."""

    reason = "render-peer-died"


class RenderPeerTimeout(RunError):
    """The render peer did not deliver a frame within the time-out."""

    reason = "render-peer-timeout"
