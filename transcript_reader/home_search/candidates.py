"""The stored items a literal query may match, by session, from the store's trigram index, at a cost
bound by the index's answer (not by the store's size).

A frequent word is the hard case: a quarter of a 1 GB home's items may hold ``file``. Reading each
candidate's row to learn its session and kind costs more than the index lookup itself (the rows hold the
item's text and JSON, so they are spread over most of the store's pages), so the session of an item is
taken from its id instead: a session's items are written in timeline order, so their ids ascend with
``seq`` (the store's contract), in runs of consecutive ids: one when the session was written at once,
one more for each refresh that appended to it. The runs are found from the ``(session, seq)`` index
(:func:`id_ranges`); if they overlap, the candidates' rows are read instead. The kinds a search leaves out are removed by the ids an
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


class _Gap(Exception):
    """A session's seqs are not 0..n-1 without gaps: the ids cannot be trusted to tell sessions apart."""


def _runs(con: sqlite3.Connection, sid: int, s0: int, i0: int, s1: int, i1: int) -> list[tuple[int, int]]:
    """The runs of consecutive ids of session ``sid`` (its seqs ``s0..s1``, their ids ``i0..i1``): one
    when nothing was rewritten, one more for each refresh that appended items (their ids come after
    every other session's); each break found by bisection over seq."""
    def id_at(seq: int) -> int:
        got = con.execute("SELECT id FROM items WHERE session = ? AND seq = ?", (sid, seq)).fetchone()
        if got is None:
            raise _Gap
        return int(got[0])

    out: list[tuple[int, int]] = []
    while i1 - i0 != s1 - s0:
        lo, hi = s0, s1  # id_at(lo) is on the run that starts at s0, id_at(hi) is not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if id_at(mid) - i0 == mid - s0:
                lo = mid
            else:
                hi = mid
        out.append((i0, i0 + lo - s0))
        s0, i0 = hi, id_at(hi)
    out.append((i0, i1))
    return out


def id_ranges(con: sqlite3.Connection) -> list[tuple[int, int, int]] | None:
    """``(first item id, last item id, session)`` of every run of consecutive ids of every stored
    session, in id order, or None when they do not tell sessions apart (two runs overlap, a session's
    seqs have a gap). Read from the ``(session, seq)`` index: four lookups a session, a few more for a
    session appended to since it was first stored."""
    rows = con.execute(
        "SELECT s.id, (SELECT seq FROM items WHERE session = s.id ORDER BY seq LIMIT 1), "
        "(SELECT id FROM items WHERE session = s.id ORDER BY seq LIMIT 1), "
        "(SELECT seq FROM items WHERE session = s.id ORDER BY seq DESC LIMIT 1), "
        "(SELECT id FROM items WHERE session = s.id ORDER BY seq DESC LIMIT 1) FROM sessions s").fetchall()
    ranges: list[tuple[int, int, int]] = []
    try:
        for sid, s0, i0, s1, i1 in rows:
            if s0 is not None:
                ranges.extend((a, b, sid) for a, b in _runs(con, sid, s0, i0, s1, i1))
    except _Gap:
        return None
    ranges.sort()
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
    ranges: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
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
            drop = set()
            for first, last in self.ranges[sid]:
                drop.update(r[0] for r in con.execute(
                    f"SELECT id FROM items INDEXED BY {KIND_INDEX} WHERE kind IN ({marks}) AND id BETWEEN ? AND ?",
                    (*self.unwanted, first, last)))
        return [i for i in ids if i not in drop]


#: The first sessions searched ask the index for their own items only (a query bounded by the session's
#: ids): the first hits are printed without waiting for the index's whole answer.
EARLY = 4


def session_candidates(con: sqlite3.Connection, expr: str, kinds: list[str], sid: int) -> list[int] | None:
    """Session ``sid``'s items of ``kinds`` the index selects for ``expr``, in seq order, asked for
    that session's runs of ids only; None when its seqs have a gap (the ids cannot be trusted)."""
    first = con.execute(
        "SELECT (SELECT seq FROM items WHERE session = ?1 ORDER BY seq LIMIT 1), "
        "(SELECT id FROM items WHERE session = ?1 ORDER BY seq LIMIT 1), "
        "(SELECT seq FROM items WHERE session = ?1 ORDER BY seq DESC LIMIT 1), "
        "(SELECT id FROM items WHERE session = ?1 ORDER BY seq DESC LIMIT 1)", (sid,)).fetchone()
    if first is None or first[0] is None:
        return []
    try:
        runs = _runs(con, sid, *first)
    except _Gap:
        return None
    marks = ", ".join("?" * len(kinds))
    got: list[tuple[int, int]] = []
    for lo, hi in runs:
        got += con.execute(
            f"SELECT i.seq, i.id FROM items_fts JOIN items i ON i.id = items_fts.rowid WHERE items_fts MATCH ? "
            f"AND items_fts.rowid BETWEEN ? AND ? AND i.session = ? AND i.kind IN ({marks})",
            (expr, lo, hi, sid, *kinds)).fetchall()
    return [iid for _seq, iid in sorted(got)]


class Lazy:
    """The index's answer for ``expr``, asked for as the search goes: for each of the first
    :data:`EARLY` sessions searched, that session's own (:func:`session_candidates`); then the whole
    answer at once (:func:`candidates`), which costs less in all than a query per session."""

    def __init__(self, expr: str, wanted: frozenset[Kind]) -> None:
        self.expr = expr
        self.wanted = wanted
        self.kinds = sorted(k.value for k in wanted)
        self.asked = 0
        self.whole: Candidates | None = None

    def of(self, con: sqlite3.Connection, sid: int) -> list[int]:
        if self.whole is None and self.asked < EARLY:
            self.asked += 1
            got = session_candidates(con, self.expr, self.kinds, sid)
            if got is not None:
                return got
        if self.whole is None:
            self.whole = candidates(con, self.expr, self.wanted)
        return self.whole.of(con, sid)


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
    bounds: dict[int, list[tuple[int, int]]] = {}
    for first, last, sid in ranges:  # in id order: a session's runs, and so its ids, come in seq order
        lo = bisect_left(ids, first)
        hi = bisect_right(ids, last, lo)
        if hi > lo:
            out.setdefault(sid, []).extend(ids[lo:hi])
            bounds.setdefault(sid, []).append((first, last))
    return Candidates(out, unwanted, bounds)
