"""What a cross-session search gives: each session's hits, each file's turn, and how the search ran.

These types stand below both the search and its process pool, so that neither imports the other to
name them (the pool runs a search's task without knowing the search).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from transcript_reader.errors import TranscriptError
from transcript_reader.model import AnyItem, Kind


@dataclass(frozen=True, slots=True)
class StoredItem:
    """An item as the session store holds it: what a hit shows of it (its kind, line and time) and
    ``data``, the item exactly as ``render.item_to_dict`` gives it (the store keeps that JSON), so a
    hit from the store is shown and serialised as a hit from the reader is, without reading the file.

    The stored value (``raw``, read in the search's snapshot of the store) is decoded only when
    ``data`` is asked for: the text output shows the kind, line and time alone, and decompressing
    and parsing every hit's JSON was a large share of a frequent word's search."""

    kind: Kind
    line: int
    timestamp: str | None
    turn_id: str | None
    raw: Any
    decode: Callable[[Any], str]

    @property
    def data(self) -> dict[str, Any]:
        import orjson

        out: dict[str, Any] = orjson.loads(self.decode(self.raw))
        return out


@dataclass(frozen=True, slots=True)
class Hit:
    """One matching item and the excerpt of its text centred on the match (``api.search``'s match
    with no context): the item from the reader, or as the store holds it."""

    item: AnyItem | StoredItem
    excerpt: str


def item_dict(item: AnyItem | StoredItem) -> dict[str, Any]:
    """A hit's item as JSON (``render.item_to_dict``'s shape, whichever way it was found)."""
    if isinstance(item, StoredItem):
        return item.data
    from transcript_reader.projections.render import item_to_dict

    return item_to_dict(item)


@dataclass(frozen=True, slots=True)
class SessionHits:
    """The matches of one session (``total`` None when the reading stopped at the cap), or the error
    that made it unreadable."""

    path: str
    matches: tuple[Hit, ...] = ()
    total: int | None = 0
    truncated: bool = False
    error: TranscriptError | None = None


@dataclass(frozen=True, slots=True)
class Searched:
    """One file's turn in a search: its hits (None: skipped unread)."""

    path: str
    hits: SessionHits | None


@dataclass(slots=True)
class SearchStats:
    """How a search ran: ``method`` is ``store`` (the session store answered; ``stored`` sessions from
    it, ``read`` from their files), ``scan`` (the byte pre-filter), ``index`` or ``read`` (every file read: a
    regex, or a query without letters or digits)."""

    method: str
    sessions: int = 0
    stored: int = 0
    skipped: int = 0
    read: int = 0
    failed: int = 0
    hits: int = 0
    notes: list[str] = field(default_factory=list)
