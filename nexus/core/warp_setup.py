"""Warp's start-up settings for Nexus: quiet unless asked, initialized once.

Warp prints a banner when it starts and a "Module ... load" line for every
module it loads, on standard output. Nexus lowers Warp's log level to
warnings when it is imported (the command line and the Python API alike),
unless ``NEXUS_VERBOSE=1`` is set in the environment, ``nexus -v`` is given,
or :func:`set_verbose` is called; a log level set before Nexus is imported is
left as it was.

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

#: The environment variable that keeps Warp's info lines (banner, module loads): ``NEXUS_VERBOSE=1``.
VERBOSE_ENV = "NEXUS_VERBOSE"
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


def verbose_from_environment() -> bool:
    """True when ``NEXUS_VERBOSE`` asks for Warp's info lines (1, true, yes or on)."""
    return os.environ.get(VERBOSE_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def set_verbose(on: bool = True) -> None:
    """Show (``on``) or hide Warp's info lines: its start-up banner and a line per module it loads."""
    wp.config.log_level = wp.LOG_INFO if on else wp.LOG_WARNING


def init_warp(verbose: bool = False) -> None:
    """Initialize Warp; below ``verbose`` (or ``NEXUS_VERBOSE=1``) only its warnings and errors are printed."""
    set_verbose(verbose or verbose_from_environment())
    quiet_init()


# Imported with Nexus: Warp's default level (info) is lowered to warnings unless NEXUS_VERBOSE asks for it.
if wp.config.log_level == wp.LOG_INFO and not verbose_from_environment():
    set_verbose(False)
