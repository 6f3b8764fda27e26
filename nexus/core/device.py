"""Resolving the user's ``--device`` choice to a Warp device name."""

import warp as wp

from nexus.core import warp_setup
from nexus.core.errors import BuildError

DEVICE_CHOICES = ("auto", "cpu", "cuda")


def cuda_available() -> bool:
    """True when Warp sees at least one CUDA device."""
    warp_setup.quiet_init()
    return wp.get_cuda_device_count() > 0


def resolve_device(choice: str = "auto") -> str:
    """Map ``auto|cpu|cuda`` (or a Warp name such as ``cuda:1``) to a Warp device name.

    ``auto`` takes the first CUDA device when one is present and the CPU otherwise, quietly.
    Asking for CUDA on a machine without one is an error, never a silent fallback.
    """
    choice = (choice or "auto").strip().lower()
    if choice == "auto":
        return "cuda:0" if cuda_available() else "cpu"
    if choice == "cpu":
        return "cpu"
    if choice == "cuda" or choice.startswith("cuda:"):
        if not cuda_available():
            said = f" (Warp: {' '.join(warp_setup.held_back)})" if warp_setup.held_back else ""
            raise BuildError(
                f"--device {choice} was asked for, but Warp finds no CUDA device on this machine{said}; "
                "use --device cpu (or auto, which takes the GPU only when one is present)"
            )
        return "cuda:0" if choice == "cuda" else choice
    raise BuildError(f"unknown device '{choice}': choose one of {', '.join(DEVICE_CHOICES)}")
