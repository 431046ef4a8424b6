"""Plain readings of ``codex exec --json`` values, shared by both protocols' event readers: the
command line a stream prints, file changes."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any

from exec_grammar.shell import posix_split, unwrap_command, wrapped_command
from transcript_reader.model import FileChange

_SIMPLE_WRAPPED = re.compile(r"^((?:/\S*/)?(?:bash|sh|zsh|dash|ksh)) (-lc|-c) '([^'\\]*)'$")
_NEEDS_SHLEX = re.compile(r"[\\'\"#]")


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def as_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def json_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


def split_shell_command(command: str) -> tuple[str, tuple[str, ...] | None]:
    """The command a person would type, and the argv, from the stream's shell-quoted command string.

    ``codex exec`` prints an argv joined with shell quoting (``bash -lc 'ls && cat calc.py'``); the
    inner script of a ``<shell> -lc|-c <script>`` argv is what the rollout shows as the command.
    """
    argv: tuple[str, ...]
    simple = _SIMPLE_WRAPPED.match(command)
    if simple is not None:  # fast path: `bash -lc '<script without quotes>'`
        argv = (simple.group(1), simple.group(2), simple.group(3))
        return simple.group(3), argv
    if not _NEEDS_SHLEX.search(command):
        argv = tuple(command.split())
    else:
        words = posix_split(command)  # shlex.split, in linear time (seconds on a 1 MB heredoc)
        if words is None:
            return unwrap_command(command), None
        argv = tuple(words)
    inner = wrapped_command(argv)
    if inner is not None:
        return inner, argv
    # a Windows command line (``"C:\\...\\pwsh.exe" -Command "dir"``) quotes without backslash escapes,
    # which the POSIX split above ate: exec_grammar.shell splits it the Windows way
    unwrapped = unwrap_command(command)
    if unwrapped != command.strip():
        return unwrapped, argv
    return shlex.join(argv), argv


def thread_changes(changes: object) -> tuple[FileChange, ...]:
    if not isinstance(changes, list):
        return ()
    out: list[FileChange] = []
    for change in changes:
        if not isinstance(change, dict):
            continue
        path = as_str(change.get("path")) or ""
        kind = change.get("kind")
        move_to = as_str(change.get("move_path"))
        if isinstance(kind, dict):  # tolerate a tagged kind {"type": "update", "move_path": …}
            move_to = as_str(kind.get("move_path")) or move_to
            kind = kind.get("type")
        # the stream names the file and how, never its diff: the line counts are unknown
        out.append(FileChange(path=path, op=as_str(kind) or "update", move_to=move_to, added=None, removed=None))
    return tuple(out)


class Malformed(Exception):
    """A known event whose shape is wrong (becomes an unreadable line)."""


@dataclass(slots=True)
class OpenItem:
    """An item (thread stream) or a call (protocol stream) seen starting but not yet completed: its
    last event's data."""

    data: dict[str, Any]
