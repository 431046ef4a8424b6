"""What a provider reads from the ends of a session file without reading the whole of it: the session
head (``ls`` rows, session resolution) and the tail (last timestamp, last cumulative token usage).
Shared by every provider (``Provider.read_head`` / ``read_tail``)."""

from __future__ import annotations

from dataclasses import dataclass

from transcript_reader.model import Format, TokenUsage

#: The first prompt kept for titles and ``--grep`` (whitespace collapsed).
TITLE_CHARS = 1000


def session_title(prompt: str) -> str:
    """A session's title from its first real prompt: whitespace collapsed, cut to ``TITLE_CHARS``. The
    one rule, for the head a listing reads and for the full read's ``SessionInfo.title``."""
    return " ".join(prompt.split())[:TITLE_CHARS]


@dataclass(frozen=True, slots=True)
class SessionHead:
    """Session metadata read from the head of a file. ``title`` is the first real user prompt
    (harness context skipped), whitespace collapsed and cut to ``TITLE_CHARS``."""

    format: Format | None
    session_id: str | None = None
    timestamp: str | None = None
    cwd: str | None = None
    originator: str | None = None
    cli_version: str | None = None
    source: str | None = None
    parent_session_id: str | None = None
    forked_from_id: str | None = None
    agent_nickname: str | None = None
    model: str | None = None
    title: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SessionTail:
    """What the last ``TAIL_BYTES`` tell: the last timestamp and the last cumulative token usage
    (``None`` when the tail holds no ``token_count`` with usage: then only a full read knows)."""

    last_timestamp: str | None = None
    tokens: TokenUsage | None = None
