"""``nexus schema``: write or check the USD schema files generated from the component specs."""

from __future__ import annotations

import sys

import click

from nexus.commands.exits import EXIT_FAILED


@click.command()
@click.option("--write", "write", is_flag=True, help="Regenerate the schema files from the component specs.")
@click.option("--check", "check", is_flag=True, help="Exit 1, naming them, when the schema files are stale.")
def schema(write: bool, check: bool) -> None:
    """Generate the USD schema files (generatedSchema.usda, plugInfo.json, components.json) from the specs."""
    from nexus.schemas import generate

    if write == check:
        raise click.UsageError("give one of --write or --check")
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
