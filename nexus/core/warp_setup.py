"""Warp's start-up settings for Nexus: quiet unless asked, initialized once.

On a machine without an NVIDIA driver, Warp's native start-up prints "Warp
CUDA warning: Could not find or load the NVIDIA CUDA driver" on stderr on
every command, ``--device cpu`` included. That line is news only to someone
who asked for CUDA, so it is held back here and kept in :data:`held_back`;
:func:`nexus.core.device.resolve_device` puts it into its error when
``--device cuda`` finds no GPU. Anything else Warp prints passes through.
"""

from __future__ import annotations

import os
import sys
import tempfile

import warp as wp

#: The marker of the start-up line that is held back.
CUDA_DRIVER_MISSING = "Could not find or load the NVIDIA CUDA driver"
#: What Warp printed at start-up and Nexus held back (the missing-driver line), in order.
held_back: list[str] = []


def _is_initialized() -> bool:
    return getattr(wp._src.context, "runtime", None) is not None


def quiet_init() -> None:
    """``wp.init()``, holding back the missing-driver line Warp's native code writes to stderr."""
    if _is_initialized():
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no usable file descriptor 2: let Warp print as it likes
        wp.init()
        return
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            wp.init()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        text = captured.read().decode("utf-8", errors="replace")
    for line in text.splitlines(keepends=True):
        if CUDA_DRIVER_MISSING in line:
            held_back.append(line.strip())
        else:
            sys.stderr.write(line)
    sys.stderr.flush()


def init_warp(verbose: bool = False) -> None:
    """Initialize Warp; below ``verbose`` only its warnings and errors are printed."""
    wp.config.log_level = wp.LOG_INFO if verbose else wp.LOG_WARNING
    quiet_init()
