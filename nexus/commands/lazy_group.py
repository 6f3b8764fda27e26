"""A click group whose commands load their modules when first used: ``nexus --help`` imports none of them.

The group holds a table, name -> (``"module:attr"``, the one-line help ``--help`` shows), so listing the
commands costs no import; ``nexus run ...`` (or ``nexus run --help``) imports :mod:`nexus.commands.run` alone.
A test (``tests/test_cli_lazy.py``) checks that each table help is the command's own short help.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping

import click

from nexus.core.lazy import load_attribute

#: A lazy group's table: command name -> ("module:attr" of the click command, its one-line help).
CommandTable = Mapping[str, tuple[str, str]]


class LazyCommands(MutableMapping):
    """A group's ``commands``: the table's names (each loaded on first read) and any command added as an object.

    ``name in commands`` and iterating load nothing; ``commands[name]`` loads that command's module."""

    def __init__(self, table: CommandTable):
        self.table = dict(table)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            if name not in self.table:
                raise KeyError(name)
            self.loaded[name] = load_attribute(self.table[name][0])
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        self.table.pop(name, None)
        self.loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self.table or name in self.loaded

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self.table, *self.loaded]))

    def __len__(self) -> int:
        return len(set(self.table) | set(self.loaded))

    def short_help(self, name: str, limit: int) -> str:
        """The help line ``--help`` shows for ``name``: the table's (no import) until the command is loaded."""
        if name in self.loaded:
            return self.loaded[name].get_short_help_str(limit)
        return click.Command(name, help=self.table[name][1]).get_short_help_str(limit)  # cut as click cuts it


class LazyGroup(click.Group):
    """A group built from a :data:`CommandTable` (``lazy=``): ``--help`` lists the table without importing."""

    def __init__(self, *args, lazy: CommandTable | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        commands = LazyCommands(lazy or {})
        commands.loaded.update(self.commands)
        self.commands = commands

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = [name for name in self.list_commands(ctx)
                 if name in self.commands.table or not self.commands[name].hidden]
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        with formatter.section("Commands"):
            formatter.write_dl([(name, self.commands.short_help(name, limit)) for name in names])
