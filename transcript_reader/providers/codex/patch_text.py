"""Per-file diff text of a patch, as Codex recorded it, kept bounded.

``FileChange.diff`` shows what a patch did to one file. Codex records it in three places, in order of
authority: the ``unified_diff`` (or ``content``) of ``patch_apply_end.changes`` / an ``item_completed``
FileChange record, else the apply_patch text the model sent (top-level ``apply_patch`` calls and the
patch literals of an ``exec`` script), whose per-file hunk is cut out here. ``exec_grammar.parse_patch``
counts lines but keeps no text, so the hunk split lives here, in a dozen lines, rather than widening the
grammar's model.

A diff is capped at ``MAX_DIFF_CHARS`` per file so one huge generated file cannot grow an item without
bound; a cut diff ends with a line that says how much was left out (never silently shortened).
"""

from __future__ import annotations

import re
from typing import Any

from transcript_reader.model import FileChange

__all__ = ["MAX_DIFF_CHARS", "cap_diff", "content_diff", "diff_counts", "file_changes", "patch_hunks"]

#: Longest diff text kept per file (characters); the rest is cut and the cut is stated.
MAX_DIFF_CHARS = 64 * 1024

_HEADER = re.compile(r"^\s*\*\*\* (Add File|Delete File|Update File): ?(.*?)\s*$")
_MOVE = re.compile(r"^\s*\*\*\* Move to: ?")
_END = re.compile(r"^\s*\*\*\* End Patch\s*$")


def cap_diff(diff: str | None, limit: int = MAX_DIFF_CHARS) -> str | None:
    """``diff`` cut to ``limit`` characters at a line end, with a closing line naming what was cut."""
    if diff is None or len(diff) <= limit:
        return diff
    cut = diff.rfind("\n", 0, limit)
    keep = diff[: cut + 1] if cut > 0 else diff[:limit] + "\n"
    return f"{keep}[… diff cut: {len(diff) - len(keep)} more characters not kept …]\n"


def content_diff(content: str | None, op: str) -> str | None:
    """A recorded whole-file ``content`` (an added or deleted file) as diff lines (``+``/``-``), so
    every ``FileChange.diff`` reads the same way whatever Codex recorded; capped like any diff."""
    if not content:
        return None
    sign = "-" if op == "delete" else "+"
    return cap_diff("".join(sign + ln + "\n" for ln in _lines(content)))


def _lines(text: str) -> list[str]:
    """A file's lines as a patch counts them: split at ``\n`` only (``str.splitlines`` also splits at form
    feeds, ``\x1c``-``\x1e``, ``\x85`` and U+2028, which a source file may hold inside a line)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln.removesuffix("\r") for ln in lines]


def diff_counts(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff, counted in C. A ``---``/``+++`` line is a file header only
    before the first ``@@`` hunk; inside a hunk it is content (a removed ``-- SQL comment`` or ``---``
    line, an added ``++i;``). Codex's diffs start at ``@@``."""
    if diff.startswith("@@"):
        body = diff
    else:
        at = diff.find("\n@@")
        if at >= 0:
            body = diff[at + 1:]
        else:  # no hunk header: skip a leading file header only
            lines = diff.split("\n")
            k = 0
            while k < len(lines) and lines[k].startswith(("--- ", "+++ ", "diff --git ", "index ")):
                k += 1
            body = "\n".join(lines[k:])
    joined = "\n" + body.replace("\r\n", "\n")
    return joined.count("\n+"), joined.count("\n-")


def patch_hunks(text: str | None) -> dict[str, str]:
    """Path -> the body lines under that path's header in an apply_patch text (``+`` lines of an
    added file; the ``@@`` hunks of an updated one). A deleted file has no body and no entry; a path
    named twice gets both bodies. Tolerant like the grammar: a malformed patch gives what it shows."""
    out: dict[str, list[str]] = {}
    if not text:
        return {}
    cur: list[str] | None = None
    for line in text.splitlines():
        if "***" not in line:
            # most lines are hunk body: the three markers all contain "***", so none can match here (one
            # substring test instead of three regex matches a line: patch_hunks 2x faster)
            if cur is not None:
                cur.append(line)
            continue
        m = _HEADER.match(line)
        if m is not None:
            if m.group(1) == "Delete File" or not m.group(2):
                cur = None
            else:
                cur = out.setdefault(m.group(2), [])
            continue
        if cur is None or _MOVE.match(line):
            continue
        if _END.match(line):
            cur = None
            continue
        cur.append(line)
    return {p: cap_diff("\n".join(body) + "\n") or "" for p, body in out.items() if any(b.strip() for b in body)}


_OPS = frozenset({"add", "delete", "update"})


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def file_changes(changes: Any) -> tuple[FileChange, ...]:
    """``changes`` of patch_apply_begin/end, an ``item_completed`` FileChange record or a ``codex exec``
    protocol stream: path -> {type, unified_diff|content, move_path} (0.40-era events nest as
    {"update": {...}} instead of a ``type`` tag), or a list of {path, kind, …}. One owner for every
    format that writes it, so an added file has its content as its diff wherever it was recorded."""
    out: list[FileChange] = []
    if isinstance(changes, dict):
        items = list(changes.items())
    elif isinstance(changes, list):
        items = [(c.get("path"), c) for c in changes if isinstance(c, dict)]
    else:
        return ()
    for path, ch in items:
        if not isinstance(path, str) or not isinstance(ch, dict):
            continue
        op: Any = ch.get("type") or ch.get("kind")
        body = ch
        move_to = _str(ch.get("move_path"))
        if isinstance(op, dict):  # list form {path, kind: {type, move_path}} (app-server v2)
            move_to = _str(op.get("move_path")) or move_to
            op = op.get("type")
        if op is None and len(ch) == 1 and next(iter(ch)) in _OPS:
            # the 0.40-era externally tagged form {"update": {...}}; only an op names that one key
            op, inner = next(iter(ch.items()))
            body = inner if isinstance(inner, dict) else {}
            move_to = _str(body.get("move_path"))
        op = op if isinstance(op, str) else "update"
        diff = _str(body.get("unified_diff")) or _str(body.get("diff"))
        content = _str(body.get("content"))
        added = removed = 0
        if diff is not None:
            added, removed = diff_counts(diff)
        elif content is not None:
            n = len(_lines(content))
            if op == "add":
                added = n
            elif op == "delete":
                removed = n
        out.append(FileChange(path=path, op=op, move_to=move_to, added=added, removed=removed,
                              diff=cap_diff(diff) if diff is not None else content_diff(content, op)))
    return tuple(out)
