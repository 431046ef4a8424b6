"""The listing's ``text`` filter: the sessions whose items hold a text, each row with its first hits.

It is the cross-session search of the CLI (:func:`transcript_reader.home_search.search_sessions`): the
session stores answer for every session they hold as the file is now, and only the others are read.
The server opens the stores read-only (``ls`` and ``browse`` keep them in step); without a store every
listed file is read, within the call's time budget.

A listing cut by the budget never reads as a proven absence: it says ``searched_all: false`` and gives
the cursor to go on from.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from transcript_reader.mcp.policy import ServerConfig, homes

#: Hits shown per session, and the characters of each excerpt: enough to tell which session to read.
HITS_PER_SESSION = 3
EXCERPT_CHARS = 300


@dataclass
class TextMatches:
    """The groups (a session and its sub-agents) with a hit, in listing order, up to ``limit`` + 1 (one
    more tells that a next page exists); each matching file's hits; the files that could not be
    searched; whether every group was searched, and when not (the time budget ran out first) the
    index of the group after which the next page starts: the last one searched whole or shown (-1:
    none)."""

    groups: list[list[Any]] = field(default_factory=list)
    hits: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    searched_all: bool = True
    unreadable: list[dict[str, str]] = field(default_factory=list)
    resume: int = -1


def _stores(config: ServerConfig, provider: str) -> list[Any]:
    """Read connections to the session stores of the homes listed (none without a store directory, or
    for a home whose store is missing, of another version or unreadable: those files are read)."""
    if config.store_dir is None:
        return []
    from transcript_reader.sessions.store import store_readers

    return store_readers(homes(config, provider), config.store_dir)


def match_groups(groups: Sequence[list[Any]], text: str, limit: int, config: ServerConfig, provider: str,
                 deadline: float) -> TextMatches:
    """Search the groups' files in order until ``limit`` + 1 groups hold ``text`` (case-insensitive
    substring, as ``search``), or the deadline passes."""
    from transcript_reader.home_search import SearchStats, search_sessions

    owner: dict[str, int] = {}
    for g, group in enumerate(groups):
        for entry in group:
            owner[entry.path] = g
    found = TextMatches()
    kept: set[int] = set()
    done = [0]
    order = [e.path for group in groups for e in group]
    stores = _stores(config, provider)

    def advance() -> None:
        done[0] += 1

    def over() -> bool:
        return time.monotonic() > deadline or len(kept) > limit

    try:
        results = search_sessions(order, text, max_matches=HITS_PER_SESSION, max_chars_per_match=EXCERPT_CHARS,
                                  count_all=False, stores=stores, stats=SearchStats("read"), progress=advance,
                                  cancelled=over)
        for res in results:
            if res.error is not None:
                found.unreadable.append({"path": res.path, "error": str(res.error)})
                continue
            kept.add(owner[res.path])
            found.hits[res.path] = [_hit(m) for m in res.matches]
    finally:
        for con in stores:
            con.close()
    n = done[0]  # the files are searched in order: order[:n] were searched
    found.searched_all = n >= len(order) or len(kept) > limit
    if not found.searched_all:
        found.resume = max(owner[order[n]] - 1, max(kept, default=-1))
    found.groups = [list(groups[g]) for g in sorted(kept)]
    return found


def _hit(match: Any) -> dict[str, Any]:
    item = match.item
    return {"line": item.line, "kind": item.kind.value, "timestamp": item.timestamp, "excerpt": match.excerpt}
