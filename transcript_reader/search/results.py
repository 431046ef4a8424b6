"""What a cross-session search gives: each session's hits, each file's turn, and how the search ran.

These types stand below both the search and its process pool, so that neither imports the other to
name them (the pool runs a search's task without knowing the search).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from transcript_reader.errors import TranscriptError
from transcript_reader.model import SearchMatch


@dataclass(frozen=True, slots=True)
class SessionHits:
    """The matches of one session (``total`` None when the reading stopped at the cap), or the error
    that made it unreadable."""

    path: str
    matches: tuple[SearchMatch, ...] = ()
    total: int | None = 0
    truncated: bool = False
    error: TranscriptError | None = None


@dataclass(frozen=True, slots=True)
class Searched:
    """One file's turn in a search: its hits (None: skipped unread) and its scan-cache entry."""

    path: str
    hits: SessionHits | None
    entry: list[Any] | None = None


@dataclass(slots=True)
class SearchStats:
    """How a search ran: ``method`` is ``scan`` (the byte pre-filter), ``index`` or ``read`` (every file
    read: a regex, or a query without letters or digits)."""

    method: str
    sessions: int = 0
    skipped: int = 0
    read: int = 0
    failed: int = 0
    hits: int = 0
    notes: list[str] = field(default_factory=list)
