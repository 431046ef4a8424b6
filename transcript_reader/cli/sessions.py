"""Session discovery and rendering commands (ls, show, export). Owned by issue #4."""

from __future__ import annotations

import click


@click.command("default", hidden=True)
@click.pass_context
def default_cmd(ctx: click.Context) -> None:
    click.echo(ctx.find_root().get_help())


@click.command("ls")
def ls_cmd() -> None:
    raise click.UsageError("not implemented yet")


@click.command("show")
def show_cmd() -> None:
    raise click.UsageError("not implemented yet")


@click.command("export")
def export_cmd() -> None:
    raise click.UsageError("not implemented yet")
