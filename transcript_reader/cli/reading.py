"""Placeholder until its issue lands; replaced by the owner of this command."""

import click


@click.command("read")
def read_cmd() -> None:
    raise click.UsageError("not implemented yet")


@click.command("search")
def search_cmd() -> None:
    raise click.UsageError("not implemented yet")


@click.command("inspect")
def inspect_cmd() -> None:
    raise click.UsageError("not implemented yet")
