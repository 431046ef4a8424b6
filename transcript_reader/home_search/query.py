"""A cross-session query, checked once: its pattern (Python's case-insensitive ``re``, the one
definition of a match whichever way the search runs), the kinds it searches, its limits."""

from __future__ import annotations

import re
from collections.abc import Iterable

from transcript_reader.errors import InvalidArgumentError
from transcript_reader.model import Kind


def compile_query(query: str, regex: bool) -> re.Pattern[str]:
    """The pattern of ``query``: a case-insensitive substring, or (``regex``) a regular expression."""
    if not query:
        raise InvalidArgumentError("empty query")
    try:
        return re.compile(query if regex else re.escape(query), re.IGNORECASE)
    except re.error as e:
        raise InvalidArgumentError(f"invalid regex: {e}") from None


def wanted_kinds(kinds: Iterable[str]) -> frozenset[Kind]:
    """The kinds searched: those named, or the timeline's (what ``show`` shows by default)."""
    from transcript_reader.projections import _TIMELINE, parse_kinds

    return parse_kinds(kinds) or _TIMELINE


def check_limits(**limits: int) -> None:
    for name, v in limits.items():
        if not isinstance(v, int) or v < 0:
            raise InvalidArgumentError(f"{name} must be a non-negative integer, got {v!r}")
