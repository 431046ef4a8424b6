"""The documentation cannot drift from the commands: every subcommand is shown in the README and has a
help text (house style, after sqlite-utils' test_docs)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from transcript_reader.cli import COMMANDS, LazyGroup, cli

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_in_the_readme(name: str) -> None:
    assert re.search(rf"transcript-reader {re.escape(name)}\b", README), f"README never shows `transcript-reader {name}`"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help(name: str) -> None:
    assert isinstance(cli, LazyGroup)
    with click.Context(cli) as ctx:
        command = cli.get_command(ctx, name)
        assert command is not None
        text = command.get_help(ctx)
    first = (command.help or "").strip().splitlines()
    assert first and first[0], f"`{name}` has no help text"
    assert "Usage:" in text
