"""``--shards K|auto``: a count of processes, or ``auto`` (:class:`~nexus.runtime.config.RunConfig`'s ``shards``).

Its own click type, since the option takes a word besides numbers; the help
and the default come from the field, as every other flight option's.
"""

from __future__ import annotations

from dataclasses import fields

import click

from nexus.runtime.config import AUTO_SHARDS, RunConfig
from nexus.vocab.settings import help_of

#: The most processes ``--shards`` takes (the field's maximum).
MOST_SHARDS = int(next(f for f in fields(RunConfig) if f.name == "shards").metadata["maximum"])


class ShardCount(click.ParamType):
    """A whole number from 0 to :data:`MOST_SHARDS`, or ``auto``."""

    name = "K|auto"

    def convert(self, value, param, ctx):
        if value == AUTO_SHARDS or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        try:
            count = int(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r}: give a whole number of processes (0: one per core) or {AUTO_SHARDS}", param, ctx)
        if not 0 <= count <= MOST_SHARDS:
            self.fail(f"{count}: give 0 to {MOST_SHARDS} processes (0: one per core) or {AUTO_SHARDS}", param, ctx)
        return count


def shards_option():
    """The click option ``--shards`` (value in ``shards``)."""
    f = next(f for f in fields(RunConfig) if f.name == "shards")
    return click.option("--shards", "shards", type=ShardCount(), default=f.default, show_default=True,
                        help=help_of(f))
