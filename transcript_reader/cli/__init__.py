"""The ``transcript-reader`` command line: thin presentation over the library.

Subcommands live in their own modules and are imported only when used, so ``transcript-reader ls``
does not pay for tree-sitter or the MCP SDK.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

#: command name -> "module:attribute" (a click.Command)
COMMANDS: dict[str, str] = {
    "read": "transcript_reader.cli.reading:read_cmd",
    "search": "transcript_reader.cli.search_cmd:search_cmd",
    "inspect": "transcript_reader.cli.reading:inspect_cmd",
    "script": "transcript_reader.cli.script:script_cmd",
    "ls": "transcript_reader.cli.sessions:ls_cmd",
    "show": "transcript_reader.cli.show:show_cmd",
    "export": "transcript_reader.cli.export_cmd:export_cmd",
    "mcp": "transcript_reader.cli.mcp_cmd:mcp_cmd",
    "census": "transcript_reader.cli.census_cmd:census_cmd",
    "browse": "transcript_reader.cli.browse_cmd:browse_cmd",
    "store": "transcript_reader.cli.store_cmd:store_cmd",
    "usage": "transcript_reader.cli.usage_cmd:usage_cmd",
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use. ``--help`` lists each with its whole
    first sentence (click cuts summaries to the room left on an 80-column line)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None and not cmd.hidden:
                rows.append((name, cmd.get_short_help_str(limit=200)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = importlib.import_module(module_name)
        command: click.Command = getattr(module, attr)
        return command


@click.group(cls=LazyGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120})
@click.version_option(package_name="transcript-reader")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Read OpenAI Codex CLI transcripts: what the agent was asked, ran, changed and answered."""
    if ctx.invoked_subcommand is None:
        # No arguments: the latest session of the current project, else the bundled example (labelled).
        from transcript_reader.cli import show

        ctx.invoke(show.default_cmd)


def main(argv: list[str] | None = None) -> Any:
    # what click prints by itself (--help, --version) runs outside every command's guard (``--help > /dev/full``)
    from transcript_reader.cli._common import exit_on_output_failure

    return exit_on_output_failure(lambda: cli.main(args=argv, prog_name="transcript-reader"))
