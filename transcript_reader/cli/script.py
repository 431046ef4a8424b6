"""Placeholder until its issue lands; replaced by the owner of this command."""

import click


@click.command("script")
def script_cmd() -> None:
    raise click.UsageError("not implemented yet")
