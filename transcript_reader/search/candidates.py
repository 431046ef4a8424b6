"""The stored items a literal query may match, by session, from the store's trigram index, at a cost
bound by the index's answer (not by the store's size).

A frequent word is the hard case: a quarter of a 1 GB home's items may hold ``file``. Reading each
candidate's row to learn its session and kind costs more than the index lookup itself (the rows hold the
item's text and JSON, so they are spread over most of the store's pages), so the session of an item is
taken from its id instead: a session's items are written in one transaction, in timeline order, so
they have consecutive ids, ascending with ``seq`` (the store's contract; checked here: the ranges of
ids must not overlap, else the rows are read). The kinds a search leaves out are removed by the ids an
index on ``items(kind)`` gives over the session's ids, when the store has one; otherwise, and for a
short answer, the candidates' rows are read.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from transcript_reader.model import Kind

#: The store's index on ``items(kind)``, used when present.
KIND_INDEX = "items_kind"
#: Sessions whose unwanted kinds are looked up one by one before all are read at once.
PER_SESSION = 16
#: Fewer candidates than this: their rows are read (cheaper than asking the kind index for every id of
#: the kinds left out).
READ_ROWS_BELOW = 20_000


def _joined(con: sqlite3.Connection, expr: str, kinds: list[str]) -> dict[int, list[int]]:
    """Candidates by reading their rows: ``{session: [item id, …] in seq order}``."""
    marks = ", ".join("?" * len(kinds))
    got: dict[int, list[tuple[int, int]]] = {}
    for sid, seq, iid in con.execute(
            f"SELECT i.session, i.seq, i.id FROM items_fts JOIN items i ON i.id = items_fts.rowid "
            f"WHERE items_fts MATCH ? AND i.kind IN ({marks})", (expr, *kinds)):
        got.setdefault(sid, []).append((seq, iid))
    return {sid: [iid for _seq, iid in sorted(v)] for sid, v in got.items()}


def id_ranges(con: sqlite3.Connection) -> list[tuple[int, int, int]] | None:
    """``(first item id, last item id, session)`` of every stored session with items, in id order, or
    None when two ranges overlap (then ids do not tell sessions apart). Read from the ``(session, seq)``
    index, two lookups a session."""
    rows = con.execute(
        "SELECT s.id, (SELECT id FROM items WHERE session = s.id ORDER BY seq LIMIT 1), "
        "(SELECT id FROM items WHERE session = s.id ORDER BY seq DESC LIMIT 1) FROM sessions s").fetchall()
    ranges = sorted((first, last, sid) for sid, first, last in rows if first is not None)
    for (f1, l1, _s1), (f2, _l2, _s2) in zip(ranges, ranges[1:]):
        if l1 < f1 or l1 >= f2:
            return None
    if ranges and ranges[-1][1] < ranges[-1][0]:
        return None
    return ranges


def _has_kind_index(con: sqlite3.Connection) -> bool:
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (KIND_INDEX,)).fetchone() \
        is not None


@dataclass(slots=True)
class Candidates:
    """The index's answer by session. With ``unwanted`` kinds, a session's list still holds items of
    those kinds: :meth:`of` removes them when the session is searched (one lookup in the kind index
    over the session's ids), so the first session's hits do not wait for every session's filtering."""

    by_session: dict[int, list[int]]
    unwanted: list[str] = field(default_factory=list)
    ranges: dict[int, tuple[int, int]] = field(default_factory=dict)
    asked: int = 0
    drop: set[int] | None = None

    def of(self, con: sqlite3.Connection, sid: int) -> list[int]:
        """Session ``sid``'s candidates of the wanted kinds, in seq order. The first
        :data:`PER_SESSION` sessions look their ids up in the kind index one by one (the first hits
        come at once); then every id of the unwanted kinds is read in one pass (cheaper in all)."""
        ids = self.by_session.get(sid, [])
        if not self.unwanted or not ids:
            return ids
        marks = ", ".join("?" * len(self.unwanted))
        self.asked += 1
        if self.drop is None and self.asked > PER_SESSION:
            self.drop = {r[0] for r in con.execute(
                f"SELECT id FROM items INDEXED BY {KIND_INDEX} WHERE kind IN ({marks})", self.unwanted)}
        if self.drop is not None:
            drop = self.drop
        else:
            first, last = self.ranges[sid]
            drop = {r[0] for r in con.execute(
                f"SELECT id FROM items INDEXED BY {KIND_INDEX} WHERE kind IN ({marks}) AND id BETWEEN ? AND ?",
                (*self.unwanted, first, last))}
        return [i for i in ids if i not in drop]


def candidates(con: sqlite3.Connection, expr: str, wanted: frozenset[Kind]) -> Candidates:
    """The items of ``wanted`` kinds the index selects for the FTS5 expression ``expr`` (a superset of
    the matches: see :mod:`.fold`), by session, each session's in seq order."""
    kinds = sorted(k.value for k in wanted)
    ids = [r[0] for r in con.execute("SELECT rowid FROM items_fts WHERE items_fts MATCH ? ORDER BY rowid", (expr,))]
    if not ids:
        return Candidates({})
    unwanted = sorted(k.value for k in Kind if k not in wanted)
    if unwanted and (len(ids) < READ_ROWS_BELOW or not _has_kind_index(con)):
        return Candidates(_joined(con, expr, kinds))
    ranges = id_ranges(con)
    if ranges is None:
        return Candidates(_joined(con, expr, kinds))
    out: dict[int, list[int]] = {}
    bounds: dict[int, tuple[int, int]] = {}
    for first, last, sid in ranges:
        lo = bisect_left(ids, first)
        hi = bisect_right(ids, last, lo)
        if hi > lo:
            out[sid] = ids[lo:hi]
            bounds[sid] = (first, last)
    return Candidates(out, unwanted, bounds)
