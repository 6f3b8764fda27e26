"""Public names that load their modules on first use (PEP 562), so that importing a package loads no Warp."""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_names(package: str, public: dict[str, str], namespace: dict) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose ``public`` names (name -> the module that defines
    it) load their module when first read; ``namespace`` is the package's ``globals()``."""

    def __getattr__(name: str):
        module = public.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(public))

    return __getattr__, __dir__
