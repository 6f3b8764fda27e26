"""``nexus params``: every name a vehicle's parameters go by, with unit, bounds and what reads it."""

from __future__ import annotations

import json

import click

from nexus.commands.options import LaterOptions, later, plugin_option
from nexus.core.errors import BuildError
from nexus.runtime.params import parameters

#: The table's columns: heading -> how a row fills it.
COLUMNS = ("name", "aliases", "unit", "bounds", "read by")


def rows(vehicle: str, reader: str | None = None) -> list[dict]:
    """One dict per parameter of ``vehicle`` (only those ``reader`` reads, when given), in the resolver's order."""

    table = parameters(vehicle)
    return [{"name": entry.name, "aliases": list(entry.aliases), "kind": entry.kind, "unit": entry.unit,
             "bounds": entry.bounds, "read_by": list(entry.readers), "sets": list(entry.targets), "doc": entry.doc,
             "owner": entry.owner}
            for entry in table.entries if reader is None or entry.read_by(reader)]


def table_lines(found: list[dict]) -> list[str]:
    """The rows as aligned text: name, aliases, unit, bounds, readers (a shared parameter then says what it sets,
    a drawn one which part takes it)."""
    cells = [list(COLUMNS)]
    for row in found:
        sets = f"; sets {', '.join(row['sets'])}" if row["kind"] == "shared" else ""
        sets += f"; drawn into {row['owner']}" if row["owner"] else ""
        cells.append([row["name"], ", ".join(row["aliases"]) or "-", row["unit"] or "-", row["bounds"],
                      ", ".join(row["read_by"]) + sets])
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS) - 1)]
    return ["  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1] for line in cells]


@click.command(cls=LaterOptions)
@click.option("--vehicle", default=None, help="A shipped vehicle's name or a USD file [default: run's default vehicle].")
@click.option("--reader", type=click.Choice(["sweep", "variation", "gradient"]), default=None,
              help="Only the names this reader takes: a sweep axis, a variation file, a gradient (nexus optimize).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per parameter instead of a table.")
@later(lambda: [plugin_option()])
def params(vehicle: str | None, reader: str | None, as_json: bool, plugins: tuple[str, ...]) -> None:
    """List every parameter name of a vehicle: unit, bounds and what reads it (sweep, variation, gradient).

    A name is its canonical "<prim path> <attribute>" (a vector's component as
    "[i]"), a variation draw's own name, a RunConfig field, or an alias
    (mass, pid.kp_z, rotor1.kt, esc.tau_up). Sweep files, variation files and
    nexus optimize --params all resolve names through this one table.
    A module given with --plugin adds the drawn parameters it declares.
    """

    try:
        found = rows(vehicle, reader)
    except BuildError as error:
        raise click.UsageError(str(error)) from None
    if as_json:
        for row in found:
            click.echo(json.dumps(row))
        return
    for line in table_lines(found):
        click.echo(line.rstrip())
