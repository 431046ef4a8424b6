"""Reading a transcript's timestamps, and the one rule for how long a session lasted.

ISO-8601 text is parsed here only: listings, the terminal's times, exports and durations all agree on
what a timestamp without an offset means (UTC) and on which unreadable ones are unknown (None).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime


def parse_time(value: str | None) -> datetime | None:
    """An ISO-8601 timestamp as an aware datetime, UTC when it names no offset (None when absent or
    unreadable): the one reading of a transcript's timestamps for listings, terminal times and exports.
    Remembered: a listing asks for each row's start three times (filter, sort, duration)."""
    if not value:
        return None
    return _parse_time(value)


@functools.lru_cache(maxsize=1 << 15)
def _parse_time(value: str) -> datetime | None:
    try:
        dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def session_start(recorded: str | None, first_line: str | None) -> str | None:
    """Where a session's duration starts: the earlier of the start the agent recorded (Codex writes its
    ``session_meta`` a moment after the time it holds) and the first timestamped line (Claude Code's
    session fields ride on later lines than its first)."""
    if not recorded or not first_line:
        return recorded or first_line

    try:
        earlier = (datetime.fromisoformat(recorded.replace("Z", "+00:00"))
                   <= datetime.fromisoformat(first_line.replace("Z", "+00:00")))
    except (ValueError, TypeError):
        return first_line
    return recorded if earlier else first_line


def session_duration(start: str | None, end: str | None) -> float | None:
    """The one rule for how long a session lasted, in seconds (to the millisecond), shared by ``ls``,
    the browser, ``show``, ``inspect`` and the MCP tools: from the session's start, as the agent recorded
    it or its first timestamped line, whichever is earlier (:func:`session_start`; Codex's
    ``session_meta`` time is what ``ls`` shows as the session's), to its last timestamped line. None when either is unknown or unreadable, or the
    end comes before the start (a clock that went back proves no duration)."""
    if not start or not end:
        return None
    try:
        t0 = datetime.fromisoformat(start.replace("Z", "+00:00"))
        t1 = datetime.fromisoformat(end.replace("Z", "+00:00"))
        seconds = (t1 - t0).total_seconds()
    except (ValueError, TypeError, OverflowError):  # unreadable, or one naive and one aware
        return None
    return round(seconds, 3) if seconds >= 0 else None
