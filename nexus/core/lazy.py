"""The one place Nexus imports a module by its name: public names that load their modules on first use
(PEP 562, so that importing a package loads no Warp), registries that load their own entries when first read,
and ``module:attr`` targets (a command, a component class).

import-linter sees only ``import`` statements; a module named in a string is invisible to it. So every such
name goes through this module, and ``tests/test_loader_strings.py`` checks each string a table hands it: the
module exists and sits in a layer the table's own module may import (``pyproject.toml``'s layers contract).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from types import ModuleType


def load_module(name: str) -> ModuleType:
    """The module ``name`` (dotted), imported on first use; ImportError as :func:`importlib.import_module`."""
    return importlib.import_module(name)


def load_attribute(target: str):
    """The object a ``"module:attr"`` target names (``attr`` may be dotted: ``Class.method``)."""
    module, _, attr = target.partition(":")
    value = load_module(module)
    for part in attr.split(".") if attr else ():
        value = getattr(value, part)
    return value


def lazy_names(package: str, public: dict[str, str], namespace: dict) -> tuple[Callable, Callable]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` whose ``public`` names (name -> the module that defines
    it) load their module when first read; ``namespace`` is the package's ``globals()``."""

    def __getattr__(name: str):
        module = public.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(load_module(module), name)
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
                load_module(module)

    return load
