"""A listed session (``SessionEntry``) and the whole-read figures it may carry (``SessionStats``): what
``ls``, ``browse`` and the MCP listing show, built either from the session store's rows or from the
head and tail of a file. Kept apart from ``discovery`` so that ``render`` (which serialises a row)
needs nothing of the module that lists them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from transcript_reader.model import SessionInfo, TokenUsage
from transcript_reader.providers import for_format
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.sessions.session_homes import codex
from transcript_reader.timestamps import parse_time, session_duration


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
                   tokens=info.tokens if info.tokens is not None and info.tokens.source != "unknown" else None,
                   last_timestamp=info.last_timestamp, duration_s=info.duration_s, answered=answered)


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """One session file as ``ls`` lists it. ``name`` is the latest ``session_index.jsonl`` name;
    ``title`` is that name, else the first real user prompt. ``depth`` is 1 for a sub-agent shown
    under its parent (2 under a sub-agent, ...). ``parent_note`` says why a session that names a parent
    is top-level anyway: "not listed", "self" or "cycle" (see ``_nest``)."""

    path: str
    archived: bool
    size: int
    mtime_ns: int
    head: SessionHead
    tail: SessionTail = field(default_factory=SessionTail)
    name: str | None = None
    stats: SessionStats | None = None
    depth: int = 0
    parent_note: str | None = None
    # every file of the thread this row stands for, oldest first (a Codex thread continued in segment
    # files after a rewind, or resumed into a copy): the row is the newest, read as the whole thread
    thread_files: tuple[str, ...] = ()

    @property
    def session_id(self) -> str | None:
        if self.head.session_id:
            return self.head.session_id
        return codex().session_id_from_name(os.path.basename(self.path))  # type: ignore[no-any-return]

    @property
    def title(self) -> str | None:
        return self.name or self.head.title

    @property
    def started(self) -> datetime | None:
        return parse_time(self.head.timestamp) or codex().session_time_from_name(os.path.basename(self.path))

    @property
    def last_timestamp(self) -> str | None:
        if self.stats is not None and self.stats.last_timestamp:
            return self.stats.last_timestamp
        return self.tail.last_timestamp

    @property
    def duration_s(self) -> float | None:
        """Session start (head) to the last timestamp (tail), by ``timestamps.session_duration`` as ``inspect``
        and ``show`` measure it; the full read's figure only when the tail cannot be read (compressed
        files), so a row does not change once ``--stats`` ran."""
        start = self.head.timestamp or (self.started.isoformat() if self.started else None)
        seconds = session_duration(start, self.tail.last_timestamp)  # the one rule (timestamps.session_duration)
        if seconds:
            return seconds
        if self.stats is not None and self.stats.duration_s:
            return self.stats.duration_s
        return None  # early Rust files carry one timestamp only: no duration, not zero

    @property
    def tokens(self) -> TokenUsage | None:
        if self.stats is not None and self.stats.tokens is not None:
            return self.stats.tokens
        return self.tail.tokens

    @property
    def parent_id(self) -> str | None:
        return self.head.parent_session_id or self.head.forked_from_id

    @property
    def provider(self) -> str | None:
        """The provider whose format the file is in (None when its head could not be read)."""
        return for_format(self.head.format).name if self.head.format is not None else None
