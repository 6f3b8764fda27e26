"""Public names that load their modules on first use (PEP 562), so that importing a package loads no Warp."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence


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


def import_once(modules: Sequence[str]) -> Callable[[], None]:
    """A function that imports ``modules``, in order, the first time it is called and does nothing after: how a
    registry whose entries register themselves on import (controllers, drawn parameters) loads its own only
    when it is first read. It counts as done before the imports, so a module that reads the registry while
    it is being imported does not start them again."""
    done = []

    def load() -> None:
        if not done:
            done.append(True)
            for module in modules:
                importlib.import_module(module)

    return load
