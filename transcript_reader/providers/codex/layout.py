"""Where Codex keeps sessions under a ``$CODEX_HOME`` (codex-formats.md §1), and what a file's name says.

Live sessions in ``sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl``, archived ones flat in
``archived_sessions/``, either possibly compressed as ``.jsonl.zst`` (the plain file wins when both
exist), and the TypeScript CLI's flat ``sessions/rollout-<date>-<id>.json``. Thread names come from
``session_index.jsonl`` (append-only: the last entry for an id wins). The caller passes the home: the
library never reads the environment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import orjson

from transcript_reader.reading.files import open_regular

LIVE_DIR = "sessions"
ARCHIVE_DIR = "archived_sessions"
INDEX_FILE = "session_index.jsonl"

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
#: ``rollout-2026-11-30T17-59-09-<uuid>[_<rollout id>].jsonl`` and the TS CLI's ``rollout-2026-11-30-<uuid>.json``.
NAME = re.compile(
    r"^rollout-(?P<date>\d{4}-\d{2}-\d{2})(?:T(?P<time>\d{2}-\d{2}-\d{2}))?-(?P<id>" + _UUID + r")"
)


def session_id_from_name(name: str) -> str | None:
    """The session id a Codex file name carries, if any."""
    m = NAME.match(name)
    return m.group("id") if m else None


def name_time(name: str) -> datetime | None:
    m = NAME.match(name)
    if not m:
        return None
    t = (m.group("time") or "00-00-00").replace("-", ":")
    try:
        return datetime.fromisoformat(f"{m.group('date')}T{t}+00:00")
    except ValueError:
        return None


def is_session_file_name(name: str) -> bool:
    """Codex counts a file as a rollout when, without ``.zst``, it starts ``rollout-`` and ends
    ``.jsonl``; the TS CLI wrote ``rollout-….json``."""
    if not name.startswith("rollout-"):
        return False
    if name.endswith(".zst"):
        return name[:-4].endswith(".jsonl")
    return name.endswith((".jsonl", ".json"))


def iter_session_files(codex_home: str | os.PathLike[str], scope: str = "live") -> Iterator[tuple[str, bool]]:
    """``(path, archived)`` for every session file of the scope, the plain file winning over its
    ``.zst`` twin. Order is unspecified (the caller sorts by time). Paths are ``str``: the walk of a
    big home must not build a ``Path`` per file."""
    home = os.fspath(codex_home)
    roots: list[tuple[str, bool]] = []
    if scope in ("live", "all"):
        roots.append((os.path.join(home, LIVE_DIR), False))
    if scope in ("archived", "all"):
        roots.append((os.path.join(home, ARCHIVE_DIR), True))
    for root, archived in roots:
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                it = os.scandir(d)
            except (FileNotFoundError, NotADirectoryError, PermissionError):
                continue
            with it:
                entries = list(it)
            names = {e.name for e in entries}
            for e in entries:
                try:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                        continue
                except OSError:
                    continue
                if not is_session_file_name(e.name):
                    continue
                try:
                    if not e.is_file():  # a FIFO or device named like a rollout would block a read
                        continue
                except OSError:
                    continue
                if e.name.endswith(".zst") and e.name[:-4] in names:
                    continue  # plain wins (codex-rs/rollout/src/compression.rs)
                yield e.path, archived


def load_session_index(codex_home: str | os.PathLike[str]) -> dict[str, str]:
    """Thread names by session id; the last entry for an id wins, an empty name clears it. Lines that
    do not decode are skipped, and an index that is not a regular file (a FIFO, a directory) or cannot
    be read is ignored: the index only decorates the listing, it never hides a session."""
    names: dict[str, str] = {}
    fh = open_regular(Path(codex_home) / INDEX_FILE)
    if fh is None:
        return names
    try:
        with fh:
            for line in fh:
                try:
                    obj = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
                    continue
                name = obj.get("thread_name")
                if isinstance(name, str) and name.strip():
                    names[obj["id"]] = name.strip()
                else:
                    names.pop(obj["id"], None)
    except OSError:
        pass  # an I/O error mid-file: keep the names read so far
    return names
