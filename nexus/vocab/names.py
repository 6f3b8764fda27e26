"""Parameter names: the one sentence for a name nobody knows, and the look-up a lower layer is handed.

Every reader of parameter names (a variation file, a sweep axis, ``nexus optimize --params``) refuses an
unknown name with :func:`unknown_name`'s sentence, with the same "did you mean" wherever it was written. The
whole table of a vehicle's names is built high up (:mod:`nexus.runtime.params`); a layer below it (the
worlds' draws) is handed a :data:`VariationNames` look-up instead of reaching up for the table.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable

from nexus.vocab.drawn import renamed

#: ``name -> the variation parameter it stands for`` (another name of one); raises a
#: :class:`~nexus.core.errors.BuildError` with the sentence for a name no variation file may give.
VariationNames = Callable[[str], str]


def unknown_name(name: str, known: Iterable[str], vehicle: str | None = None) -> str:
    """The one sentence for a name no reader knows, with the closest known names.

    A ``"<prim path> <attribute>"`` of a prim that has parameters is compared on its attribute with that
    prim's, namespace left out (the shared path and ``nexus:`` would make every attribute look close).
    ``vehicle`` names the vehicle in the pointer to ``nexus params`` (None: no vehicle named).
    A name a drawn parameter went by before (:attr:`nexus.vocab.drawn.Drawn.formerly`) gets its new name.
    """
    new = renamed(name)
    if new is not None:
        unit = f" [{new.unit}]" if new.unit and new.unit != "-" else ""
        return f"parameter {name!r} was renamed {new.name!r} ({new.doc}{unit}); write {new.name} instead"
    known = list(known)
    prim, _, attribute = name.partition(" ")
    same_prim = {_last(n.partition(" ")[2]): n for n in known if attribute and n.partition(" ")[0] == prim}
    if same_prim:
        close = [same_prim[a] for a in difflib.get_close_matches(_last(attribute), list(same_prim), n=3, cutoff=0.6)]
    else:
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    command = f"nexus params --vehicle {vehicle}" if vehicle is not None else "nexus params"
    return f"parameter {name!r} is unknown;{hint} `{command}` lists every name and what reads it"


def _last(attribute: str) -> str:
    """An attribute's name without its namespaces (``timeConstantUp`` of ``nexus:motor:timeConstantUp``)."""
    return attribute.rpartition(":")[2]


__all__ = ["VariationNames", "unknown_name"]
