"""``nexus --help`` imports no command module (and so no Warp or Newton); each command loads alone, and the
help line the group's table shows for it is the command's own."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from nexus.cli import COMMANDS, main
from nexus.commands.px4 import SUBCOMMANDS

#: Every table of lazily loaded commands: (the group, its table).
TABLES = [(main, COMMANDS), (main.commands["px4"], SUBCOMMANDS)]
#: The modules a table names, which ``nexus --help`` must not import.
COMMAND_MODULES = sorted({target.partition(":")[0] for _, table in TABLES for target, _ in table.values()})


def imported_after(args: list[str]) -> set[str]:
    """The modules a fresh Python holds after ``nexus ARGS`` (its help: exit status 0)."""
    code = ("import json, sys\n"
            "from nexus.cli import main\n"
            f"try:\n    main({args!r}, prog_name='nexus')\n"
            "except SystemExit as stop:\n    assert stop.code in (0, None), stop.code\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def test_help_imports_no_command_module_and_no_warp():
    modules = imported_after(["--help"])
    assert not modules & {"warp", "newton", "torch"}, sorted(modules & {"warp", "newton", "torch"})
    assert not modules & set(COMMAND_MODULES), sorted(modules & set(COMMAND_MODULES))


def test_a_command_help_imports_that_command_alone():
    modules = imported_after(["run", "--help"])
    assert modules & set(COMMAND_MODULES) == {"nexus.commands.run"}


def test_px4_help_imports_no_subcommand():
    modules = imported_after(["px4", "--help"])
    assert modules & set(COMMAND_MODULES) == {"nexus.commands.px4"}


@pytest.mark.parametrize("group, table", TABLES, ids=["nexus", "nexus px4"])
def test_each_table_help_is_the_commands_own(group, table):
    for name, (target, help_line) in table.items():
        command = group.commands[name]
        assert isinstance(command, click.Command), target
        assert command.name == name, f"{target} is named {command.name!r}, the table says {name!r}"
        assert help_line == command.get_short_help_str(10**6), (
            f"nexus.cli's table has another help line for {name!r} than {target}: copy the command's")


def test_every_command_module_is_in_a_table():
    from pathlib import Path

    folder = Path(__file__).parents[1] / "nexus" / "commands"
    helpers = {"__init__", "exits", "options", "lazy_group", "world_of"}
    modules = {f"nexus.commands.{p.stem}" for p in folder.glob("*.py") if p.stem not in helpers}
    assert modules == set(COMMAND_MODULES)
