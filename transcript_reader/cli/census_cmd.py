"""Placeholder until its issue lands; replaced by the owner of this command."""

import click


@click.command("census")
def census_cmd() -> None:
    raise click.UsageError("not implemented yet")
