"""What the session store holds of one file: its rows, made from the reader's own model objects only.

:func:`read_rows` reads one session file the way every other command reads it (the provider's head and
tail reader, then ``api.Transcript``: items and ``SessionInfo``) and turns what it got into plain rows,
one table at a time (:func:`session_row`, :func:`item_row`). Nothing here decodes a transcript: a figure
the store holds is a figure the reader computed, so the store and a fresh read can only agree.

Rows are plain tuples and dicts: worker processes build them and send them to the one writer, and
pickling a tuple is several times cheaper than pickling a frozen dataclass. To store another table
(as ``usage`` was added), add its rows to :class:`SessionRows` in :func:`read_rows` and its insert in
``store_write``; nothing else changes.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Executed,
    Format,
    Kind,
    PatchItem,
    SessionInfo,
    ShellCommand,
    TestResult,
    TestRun,
    TokenUsage,
    ToolCallItem,
    UserMessage,
)
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.sessions.entry import SessionStats
from transcript_reader.usage.stored_prices import PRICE_COLUMNS

HEAD_FIELDS = tuple(f.name for f in fields(SessionHead))
#: Every field of :class:`~transcript_reader.model.TokenUsage`, in its order (the store rebuilds it by position).
TOKEN_FIELDS = tuple(f.name for f in fields(TokenUsage))
STATS_FIELDS = ("turns", "commands", "commands_failed", "files_changed", "tests_passed", "tests_failed",
                "last_timestamp", "duration_s", "answered")

#: Columns of ``sessions`` filled from a read (``id`` is the store's), in this order.
SESSION_COLUMNS: tuple[str, ...] = (
    "path", "provider", "archived", "dev", "ino", "size", "mtime_ns", "thread_key",
    *(f"head_{f}" for f in HEAD_FIELDS),
    "tail_last_timestamp", *(f"tail_{f}" for f in TOKEN_FIELDS),
    "read_ok", "read_error",
    *STATS_FIELDS, *(f"tokens_{f}" for f in TOKEN_FIELDS),
    "format", "version", "models", "first_timestamp", "run_status", "run_error", "info_json",
)

#: Columns of ``usage`` filled from a read: one row per ``SessionInfo.usage`` row (model, day, tier), the
#: token fields of :class:`~transcript_reader.model.TokenUsage`, its prompt-size ``bands`` (JSON, NULL when
#: not known), and the row's price
#: (``usage.stored_prices``; ``session`` is the session's ``id``).
USAGE_COLUMNS: tuple[str, ...] = ("model", "day", "tier", "calls", "input", "cached_input", "cache_write", "output",
                                  "reasoning", "total", "cache_write_1h", "bands", *PRICE_COLUMNS)

#: Columns of ``items`` filled from a read (``id`` is the store's, ``session`` the session's ``id``).
ITEM_COLUMNS: tuple[str, ...] = (
    "seq", "kind", "line", "turn", "timestamp", "command", "cwd", "exit_code", "executed", "files",
    "test_result", "tests_passed", "tests_failed", "tests_skipped", "framework", "tool", "text", "item_json",
)


@dataclass(slots=True)
class FileId:
    """Where a file is and which version of it: the store's refresh key."""

    path: str
    provider: str
    archived: bool
    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str, provider: str, archived: bool, st: os.stat_result) -> FileId:
        return cls(path, provider, archived, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (self.dev, self.ino, self.size, self.mtime_ns)


@dataclass(slots=True)
class SessionRows:
    """Everything the store keeps of one file version: its ``sessions`` row (a dict by column), its
    ``items`` rows (tuples in :data:`ITEM_COLUMNS` order) and its ``usage`` rows (:data:`USAGE_COLUMNS`;
    none when the file records no usage: unknown, never a row of zeros)."""

    session: dict[str, Any]
    items: list[tuple[Any, ...]] = field(default_factory=list)
    usage: list[tuple[Any, ...]] = field(default_factory=list)


class Tally:
    """The whole-read figures ``ls`` shows, counted over the items as they stream by (the one count:
    the store's fill and a direct read both use it)."""

    __slots__ = ("answered", "commands", "failed", "files", "passed_t", "failed_t")

    def __init__(self) -> None:
        self.commands = self.failed = self.passed_t = self.failed_t = 0
        self.files: set[str] = set()
        self.answered: bool | None = None

    def add(self, item: AnyItem) -> None:
        if isinstance(item, UserMessage):
            self.answered = False
        elif isinstance(item, AssistantMessage):
            if item.final and self.answered is not None:
                self.answered = True
        elif isinstance(item, ShellCommand):
            if item.executed is Executed.NO:
                return  # a command that never ran is not one the session ran
            self.commands += 1
            if item.exit_code not in (None, 0):
                self.failed += 1
        elif isinstance(item, PatchItem):
            if item.success is not False:
                self.files.update(fc.move_to or fc.path for fc in item.files)
        elif isinstance(item, TestRun):
            if item.result is TestResult.PASS:
                self.passed_t += 1
            elif item.result is TestResult.FAIL:
                self.failed_t += 1

    def stats(self, info: SessionInfo) -> SessionStats:
        return SessionStats.from_info(info, commands=self.commands, commands_failed=self.failed,
                                      files_changed=len(self.files), tests_passed=self.passed_t,
                                      tests_failed=self.failed_t, answered=self.answered)


def compute_stats(path: str | os.PathLike[str] | Any) -> SessionStats:
    """Read a whole session once (streaming) for the figures the head cannot give."""
    from transcript_reader.api import Transcript

    t = Transcript(path)
    tally = Tally()
    for item in t.items():
        tally.add(item)
    return tally.stats(t.info())


def safe_text(s: str) -> str:
    """``s`` as SQLite can store it: a lone surrogate (a ``\\ud800`` escape in the JSON a transcript
    holds) cannot be encoded as UTF-8 and becomes U+FFFD; any other text is kept exactly."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def item_json(item: AnyItem) -> bytes:
    """The item as ``render`` serialises it (what a search hit shows), as compact JSON bytes."""
    from transcript_reader.projections.render import item_to_json

    return item_to_json(item)


def _files_of(item: AnyItem) -> str | None:
    if isinstance(item, PatchItem):
        return safe_text(json.dumps([fc.move_to or fc.path for fc in item.files], ensure_ascii=False))
    return None


def item_row(seq: int, item: AnyItem, pack: Any = None) -> tuple[Any, ...]:
    """One ``items`` row (:data:`ITEM_COLUMNS`); ``pack`` compresses the item's JSON (None: kept plain)."""
    from transcript_reader.projections import search_text

    kind = item.kind
    command = cwd = tool = framework = test_result = None
    exit_code = passed = failed = skipped = None
    executed = getattr(item, "executed", None)
    if kind is Kind.SHELL_COMMAND:
        assert isinstance(item, ShellCommand)
        command, cwd, exit_code, tool = item.command, item.cwd, item.exit_code, item.tool
    elif kind is Kind.TEST_RUN:
        assert isinstance(item, TestRun)
        command, exit_code, framework = item.command, item.exit_code, item.framework
        test_result, passed, failed, skipped = item.result.value, item.passed, item.failed, item.skipped
    elif kind is Kind.TOOL_CALL:
        assert isinstance(item, ToolCallItem)
        tool = item.name
    elif kind is Kind.PATCH:
        tool = getattr(item, "tool", None)
    elif kind is Kind.STDIN_WRITE:
        exit_code = getattr(item, "exit_code", None)
    data = item_json(item)
    return (seq, kind.value, item.line, item.turn_id, item.timestamp,
            None if command is None else safe_text(command), None if cwd is None else safe_text(cwd), exit_code,
            executed.value if executed is not None else None, _files_of(item), test_result, passed, failed, skipped,
            framework, None if tool is None else safe_text(tool), safe_text(search_text(item)),
            pack(data) if pack is not None else data.decode("utf-8"))


def _tokens(prefix: str, t: TokenUsage | None) -> dict[str, Any]:
    return {f"{prefix}{f}": (getattr(t, f) if t is not None else None) for f in TOKEN_FIELDS}


def session_row(fid: FileId, thread_key: str | None, head: SessionHead, tail: SessionTail,
                info: SessionInfo | None, stats: SessionStats | None, error: str | None) -> dict[str, Any]:
    """The ``sessions`` row of a file version: its identity, its head and tail (what a listing reads),
    and, when the whole read succeeded, the figures of that read (``inspect``'s, ``ls --stats``')."""
    from transcript_reader.projections.render import info_to_dict

    row: dict[str, Any] = {"path": fid.path, "provider": fid.provider, "archived": int(fid.archived),
                           "dev": fid.dev, "ino": fid.ino, "size": fid.size, "mtime_ns": fid.mtime_ns,
                           "thread_key": thread_key}
    for f in HEAD_FIELDS:
        v = getattr(head, f)
        row[f"head_{f}"] = v.value if isinstance(v, Format) else (safe_text(v) if isinstance(v, str) else v)
    row["tail_last_timestamp"] = tail.last_timestamp
    row.update(_tokens("tail_", tail.tokens))
    row["read_ok"] = int(stats is not None)
    row["read_error"] = error
    for f in STATS_FIELDS:
        v = getattr(stats, f) if stats is not None else None
        row[f] = int(v) if isinstance(v, bool) else v
    row.update(_tokens("tokens_", stats.tokens if stats is not None else None))
    if info is not None:
        row.update(format=info.format.value, version=info.version, models=json.dumps(list(info.models)),
                   first_timestamp=info.first_timestamp, run_status=info.run_status, run_error=info.run_error,
                   info_json=safe_text(json.dumps(info_to_dict(info), ensure_ascii=False)))
    else:
        row.update(format=None, version=None, models=None, first_timestamp=None, run_status=None, run_error=None,
                   info_json=None)
    return row


def usage_rows(info: SessionInfo) -> list[tuple[Any, ...]]:
    """The ``usage`` rows of a whole read: ``info.usage`` as it stands (the accounting's rows), each
    with its price (priced here, from the whole row, so a report need not price it again)."""
    from transcript_reader.usage.stored_prices import bands_json, price_of

    return [(None if r.model is None else safe_text(r.model), r.day, r.tier, r.calls, r.tokens.input,
             r.tokens.cached_input, r.tokens.cache_write, r.tokens.output, r.tokens.reasoning, r.tokens.total,
             r.tokens.cache_write_1h, bands_json(r.bands), *price_of(r, info.format)) for r in info.usage]


def read_rows(fid: FileId, thread_key: str | None, pack: Any = None) -> SessionRows:
    """Read one file whole, as the reader reads it, into the store's rows. Never raises for a file the
    reader rejects or cannot open: its row then records why (``read_error``), with no figures, and is
    not read again until the file changes."""
    from transcript_reader.api import Transcript
    from transcript_reader.errors import TranscriptError
    from transcript_reader.providers import get as get_provider
    from transcript_reader.sessions.head_reads import read_head_tail

    path = Path(fid.path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise OSError("not a regular file")
    except OSError as e:
        head = SessionHead(format=None, error=f"cannot read: {getattr(e, 'strerror', None) or e}")
        return SessionRows(session_row(fid, thread_key, head, SessionTail(), None, None, head.error))
    head, tail = read_head_tail(get_provider(fid.provider), path)
    items: list[tuple[Any, ...]] = []
    usage: list[tuple[Any, ...]] = []
    info = stats = None
    error = None
    if head.format is not None:
        try:
            t = Transcript(path)
            tally = Tally()
            for seq, item in enumerate(t.items()):
                tally.add(item)
                items.append(item_row(seq, item, pack))
            info = t.info()
            stats = tally.stats(info)
            usage = usage_rows(info)
        except (TranscriptError, OSError, ValueError) as e:
            error, items, usage = f"{type(e).__name__}: {e}", [], []
        except Exception as e:  # noqa: BLE001 - a reader bug in one file costs that file's figures only
            error, items, usage = f"{type(e).__name__}: {e}", [], []
    return SessionRows(session_row(fid, thread_key, head, tail, info, stats, error and safe_text(error)), items,
                       usage)
