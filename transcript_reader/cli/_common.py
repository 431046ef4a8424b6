"""Helpers shared by CLI commands. Owned by the terminal issue (#4), which makes session ids work."""

from __future__ import annotations


def resolve_path_arg(arg: str) -> str:
    """Turn a PATH argument into a file path. Issue #4 extends this to session ids, unique prefixes,
    ``last`` and ``last~N``; until then a path is taken as given."""
    return arg
