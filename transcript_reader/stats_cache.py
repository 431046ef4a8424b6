"""Whole-read figures of listed sessions (``ls --stats``), computed on request and kept in a small JSON
cache keyed by ``(path, size, mtime_ns)``, so a file that has not changed is never read twice; the
cache also keeps each file version's head and tail, so a warm ``ls`` opens no session file."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields

from transcript_reader.files import JsonCache
from transcript_reader.model import Format, SessionInfo, TokenUsage
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.source import Descriptor

_HEAD_FIELDS = tuple(f.name for f in fields(SessionHead))
_TOKEN_FIELDS = tuple(f.name for f in fields(TokenUsage))
_FORMAT_AT = _HEAD_FIELDS.index("format")
#: Formats by value (an ``Enum`` call per cached row cost more than the rest of reading it).
_FORMATS = {f.value: f for f in Format}


@dataclass(frozen=True, slots=True)
class SessionStats:
    """Figures that need a whole read of the session (computed on request, then cached): derived from
    that read's :class:`~transcript_reader.model.SessionInfo` (``turns``, ``tokens``,
    ``last_timestamp``, ``duration_s``: :meth:`from_info`, the one place they are copied) and from a
    tally of its items (commands, files changed, tests, whether the last turn was answered). A cached
    row is this small record, not the whole ``SessionInfo``: ``ls`` keeps one per session."""

    turns: int = 0
    commands: int = 0
    commands_failed: int = 0
    files_changed: int = 0
    tests_passed: int = 0
    tests_failed: int = 0
    tokens: TokenUsage | None = None
    last_timestamp: str | None = None
    duration_s: float | None = None
    #: whether the session's last turn ended with a final answer (None: no turn, or computed by an
    #: older version of this cache); ``browse`` flags a session that stopped without one
    answered: bool | None = None

    @classmethod
    def from_info(cls, info: SessionInfo, *, commands: int = 0, commands_failed: int = 0, files_changed: int = 0,
                  tests_passed: int = 0, tests_failed: int = 0, answered: bool | None = None) -> SessionStats:
        """The figures of a whole read: what ``info`` holds, and the item tally given."""
        return cls(turns=info.turns, commands=commands, commands_failed=commands_failed,
                   files_changed=files_changed, tests_passed=tests_passed, tests_failed=tests_failed,
                   tokens=info.tokens,
                   last_timestamp=info.last_timestamp, duration_s=info.duration_s, answered=answered)


def head_row(head: SessionHead, tail: SessionTail) -> list[object]:
    """``[head fields, [last timestamp, token fields]]``: a head and tail as plain JSON-ready lists, field
    by field (not ``dataclasses.asdict``, a deep copy per row), the form the cache keeps and listing
    workers send back."""
    h: list[object] = [getattr(head, f) for f in _HEAD_FIELDS]
    h[_FORMAT_AT] = head.format.value if head.format is not None else None
    tok = tail.tokens
    return [h, [tail.last_timestamp, [getattr(tok, f) for f in _TOKEN_FIELDS] if tok else None]]


def head_from_row(row: list[object]) -> tuple[SessionHead, SessionTail] | None:
    """The head and tail :func:`head_row` wrote, or None when the row is not one (an older cache)."""
    try:
        h, t = row
        if not isinstance(h, list) or len(h) != len(_HEAD_FIELDS) or not isinstance(t, list) or len(t) != 2:
            return None
        fmt = h[_FORMAT_AT]
        if fmt is not None:
            h = h.copy()
            h[_FORMAT_AT] = _FORMATS[fmt]
        ts, tok = t
        return SessionHead(*h), SessionTail(last_timestamp=ts, tokens=TokenUsage(*tok) if isinstance(tok, list) else None)
    except (TypeError, ValueError, KeyError):
        return None


class StatsCache(JsonCache):
    """Whole-read figures of sessions, stored as one small JSON file, keyed by path and valid only
    while the file's size and mtime_ns are unchanged (a growing live session is recomputed)."""

    VERSION = 4  # 4: tokens summed per call (docs/usage.md), cache_write kept apart; 3: heads as field lists

    KEY = "entries"

    def get(self, path: str, size: int, mtime_ns: int) -> SessionStats | None:
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            return None
        s = e.get("stats")
        if not isinstance(s, dict):
            return None
        try:
            tok = s.get("tokens")
            return SessionStats(**{**s, "tokens": TokenUsage(**tok) if isinstance(tok, dict) else None})
        except TypeError:
            return None

    def put(self, path: str, size: int, mtime_ns: int, stats: SessionStats) -> None:
        e = self._fresh(path, size, mtime_ns)
        e["stats"] = asdict(stats)
        self._dirty = True

    def _fresh(self, path: str, size: int, mtime_ns: int) -> dict[str, object]:
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            e = {"size": size, "mtime_ns": mtime_ns}
            self._entries[path] = e
        return e

    def get_head(self, path: str, size: int, mtime_ns: int) -> tuple[SessionHead, SessionTail] | None:
        """The head and tail read earlier from this very file version, if any."""
        e = self._entries.get(path)
        if not isinstance(e, dict) or e.get("size") != size or e.get("mtime_ns") != mtime_ns:
            return None
        h, t = e.get("head"), e.get("tail")
        return head_from_row([h, t]) if isinstance(h, list) and isinstance(t, list) else None

    def put_head(self, path: str, size: int, mtime_ns: int, head: SessionHead, tail: SessionTail) -> None:
        e = self._fresh(path, size, mtime_ns)
        e["head"], e["tail"] = head_row(head, tail)
        self._dirty = True

    def prune(self, keep: set[str]) -> None:
        """Forget files that are gone (only called after a listing of the whole home)."""
        for path in [p for p in self._entries if p not in keep]:
            del self._entries[path]
            self._dirty = True


def compute_stats(path: str | os.PathLike[str] | Descriptor) -> SessionStats:
    """Read a whole session once (issue #3's reader, streaming) for the figures the head cannot give."""
    from transcript_reader.api import Transcript
    from transcript_reader.model import (
        AssistantMessage,
        Executed,
        PatchItem,
        ShellCommand,
        TestResult,
        TestRun,
        UserMessage,
    )

    t = Transcript(path)
    commands = failed = passed_t = failed_t = 0
    files: set[str] = set()
    answered: bool | None = None
    for item in t.items():
        if isinstance(item, UserMessage):
            answered = False
        elif isinstance(item, AssistantMessage):
            if item.final and answered is not None:
                answered = True
        elif isinstance(item, ShellCommand):
            if item.executed is Executed.NO:
                continue  # a command that never ran is not one the session ran
            commands += 1
            if item.exit_code not in (None, 0):
                failed += 1
        elif isinstance(item, PatchItem):
            if item.success is not False:
                files.update(fc.move_to or fc.path for fc in item.files)
        elif isinstance(item, TestRun):
            if item.result is TestResult.PASS:
                passed_t += 1
            elif item.result is TestResult.FAIL:
                failed_t += 1
    return SessionStats.from_info(t.info(), commands=commands, commands_failed=failed, files_changed=len(files),
                                  tests_passed=passed_t, tests_failed=failed_t, answered=answered)
