"""``nexus schema``: list the Nexus API schemas' attributes, or write or check the USD schema files generated
from the component specs."""

from __future__ import annotations

import json
import sys

import click

from nexus.commands.exits import EXIT_FAILED

#: The listing's columns, in order; the attribute's doc follows them, unaligned.
COLUMNS = ("attribute", "type", "unit", "default", "allowed", "from")


def pick(entries, names: tuple[str, ...]):
    """The entries ``names`` name (``NexusWindAPI``, any case, or its short form ``wind``), in the order given;
    a name that matches none is a usage error listing the schemas."""
    if not names:
        return list(entries)
    by_name = {}
    for entry in entries:
        full = entry.spec.schema
        by_name[full.lower()] = entry
        by_name[full[len("Nexus"):-len("API")].lower()] = entry
    unknown = [name for name in names if name.lower() not in by_name]
    if unknown:
        known = ", ".join(sorted(entry.spec.schema for entry in entries))
        raise click.UsageError(f"no API schema named {', '.join(unknown)}; the schemas are: {known}")
    return [by_name[name.lower()] for name in names]


def listing_lines(schemas: list[dict]) -> list[str]:
    """The listing as text: per schema a heading line, its doc, an aligned table of attributes, its relationships."""
    lines: list[str] = []
    for item in schemas:
        what = ("abstract base, applied through the schemas that build on it" if item["abstract"]
                else f"component {item['component']}" if item["component"] else "declares data, builds no stage")
        bases = f"; builds on {', '.join(item['bases'])}" if item["bases"] else ""
        lines += [f"{item['schema']} ({what}{bases})", f"  {item['doc']}"]
        if item["attributes"]:
            cells = [list(COLUMNS)] + [[a["name"], a["type"], a["unit"], a["default"], a["allowed"], a["from"]]
                                       for a in item["attributes"]]
            docs = [""] + [a["doc"] for a in item["attributes"]]
            widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
            for row, doc in zip(cells, docs):
                lines.append(("  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + doc)
                             .rstrip())
        for relation in item["relationships"]:
            lines.append(f"  rel {relation['name']} ({relation['kind']}): {relation['doc']}")
        lines.append("")
    return lines


@click.command()
@click.option("--list", "listing", is_flag=True,
              help="List every API schema's attributes: type, unit, default, allowed values, doc (the default).")
@click.option("--api", "apis", multiple=True, metavar="NAME",
              help="List only this schema (NexusWindAPI, or wind); repeatable.")
@click.option("--json", "as_json", is_flag=True, help="The listing as one JSON object per schema.")
@click.option("--write", "write", is_flag=True, help="Regenerate the schema files from the component specs.")
@click.option("--check", "check", is_flag=True, help="Exit 1, naming them, when the schema files are stale.")
def schema(listing: bool, apis: tuple[str, ...], as_json: bool, write: bool, check: bool) -> None:
    """List the Nexus API schemas' attributes, or generate the USD schema files (generatedSchema.usda,
    plugInfo.json, components.json) from the component specs.

    With no option (or --list) it prints each schema a prim can apply, with
    every attribute's USD type, unit, default and allowed values, and its
    relationships. --write regenerates the files; --check exits 1 when they
    are stale.
    """
    from nexus.schemas import catalog, generate, listing as schema_listing  # noqa: PLC0415  (reason: `nexus schema --help` loads no Warp)

    if sum((listing or bool(apis) or as_json, write, check)) > 1:
        raise click.UsageError("give one of --list (with --api, --json), --write or --check")
    if not (write or check):
        found = schema_listing.describe(pick(catalog.discover(), apis))
        if as_json:
            for item in found:
                click.echo(json.dumps(item))
            return
        for line in listing_lines(found)[:-1]:
            click.echo(line)
        return
    folder = generate.FOLDER
    if write:
        changed = generate.write(folder)
        if changed:
            click.echo(f"wrote {', '.join(changed)} in {folder}")
        else:
            click.echo(f"the schema files in {folder} were up to date; nothing changed")
        return
    stale = generate.stale_files(folder)
    if stale:
        click.echo(f"stale schema files in {folder}: {', '.join(stale)}; run `nexus schema --write` "
                   "(they are generated from the component specs)", err=True)
        sys.exit(EXIT_FAILED)
    click.echo(f"the schema files in {folder} match the component specs")
