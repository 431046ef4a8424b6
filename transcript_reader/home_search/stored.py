"""Cross-session search answered from the session store (``transcript_reader.sessions.store``), with
exactly the hits the full reader gives each file (:func:`transcript_reader.home_search.files.search_one`):
the same items, excerpts and order, the same per-session cap and totals.

The store holds every item of every session with its search text (``items.text`` =
``projections.search_text(item)``) and the item as ``render`` serialises it (``items.item_json``), and
an FTS5 ``trigram`` index over the text. A search never reads a file the store holds as it is now:

- a literal query with a piece of three or more characters (:mod:`.fold`) asks the index for candidate
  items, then matches each candidate's stored text with the query's own Python pattern (the index
  folds case as SQLite does, the pattern as Python does: the pieces make the index's answer a superset,
  the pattern decides);
- a shorter query, a regex, or a query whose every character folds differently, scans the stored text
  of the sessions' items (still no file read).

A session is read from its file, exactly as before the store, when the store does not hold it as it is
now (not stored, or its device, inode, size or mtime changed since: a file written after the refresh),
when the reader rejected it (the error is the reader's), or when its stored text may differ from the
reader's: SQLite keeps UTF-8 only, so a lone surrogate in a transcript is stored as U+FFFD; a session
whose matching text holds U+FFFD (for a regex: any of its searched text) is read from the file, and a
query holding U+FFFD or a surrogate is searched in the files. A store that fails mid-search (a
``sqlite3.DatabaseError``) leaves the remaining sessions to their files, with a note.
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from transcript_reader.home_search.candidates import Candidates
from transcript_reader.home_search.candidates import candidates as select
from transcript_reader.home_search.fold import exact as fold_exact
from transcript_reader.home_search.fold import match_expression
from transcript_reader.home_search.results import Hit, SearchStats, SessionHits, StoredItem
from transcript_reader.model import Kind

#: Candidate items fetched per query (SQLite allows 32,766 bound values; far fewer keep a query short).
BATCH = 500
#: What SQLite stores for a lone surrogate.
REPLACEMENT = "\ufffd"


@dataclass(frozen=True, slots=True)
class _Held:
    """A session the store holds as the file is now: its store (index into the connections) and id."""

    store: int
    sid: int


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def held_sessions(stores: Sequence[sqlite3.Connection], paths: Iterable[str]) -> dict[str, _Held | None]:
    """The paths of ``paths`` some store holds as the file is now (same device, inode, size, mtime):
    None for a file the reader rejected (the store has its error, not its items). One query per store
    (the whole table, not one query per path)."""
    rows: dict[str, tuple[int, int, tuple[int, int, int, int], Any]] = {}
    for n, con in enumerate(stores):
        for sid, path, dev, ino, size, mtime_ns, read_ok in con.execute(
                "SELECT id, path, dev, ino, size, mtime_ns, read_ok FROM sessions"):
            rows.setdefault(path, (n, sid, (dev, ino, size, mtime_ns), read_ok))
    out: dict[str, _Held | None] = {}
    for p in paths:
        got = rows.get(p)
        if got is None:
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue  # the reader reports it
        if _identity(st) == got[2]:
            out[p] = _Held(got[0], got[1]) if got[3] else None
    return out


def usable_query(query: str) -> bool:
    """Whether the store's text can answer ``query``: not when it holds U+FFFD or a surrogate (the
    store holds U+FFFD where a transcript held a lone surrogate)."""
    return REPLACEMENT not in query and not any(0xD800 <= ord(c) < 0xE000 for c in query)


_COLUMNS = "id, seq, kind, line, timestamp, turn, text"


def _rows_of(con: sqlite3.Connection, sid: int, kinds: list[str],
             candidates: list[int] | None) -> Iterator[tuple[Any, ...]]:
    """The session's searched items in seq order: the candidates only (ids in seq order), or (None)
    every item of the kinds."""
    if candidates is None:
        marks = ", ".join("?" * len(kinds))
        yield from con.execute(f"SELECT {_COLUMNS} FROM items WHERE session=? AND kind IN ({marks}) ORDER BY seq",
                               (sid, *kinds))
        return
    for at in range(0, len(candidates), BATCH):
        ids = candidates[at:at + BATCH]
        yield from sorted(con.execute(f"SELECT {_COLUMNS} FROM items WHERE id IN ({', '.join('?' * len(ids))})",
                                      ids), key=lambda r: r[1])


Decode = Callable[[Any], str]


def _item(con: sqlite3.Connection, row: tuple[Any, ...], decode: Decode) -> StoredItem:
    iid, _seq, kind, line, timestamp, turn, _text = row
    (data,) = con.execute("SELECT item_json FROM items WHERE id=?", (iid,)).fetchone()
    return StoredItem(Kind(kind), line, timestamp, turn, data, decode)


def session_hits(con: sqlite3.Connection, path: str, sid: int, pattern: re.Pattern[str], kinds: list[str],
                 candidates: list[int] | None, *, regex: bool, exact: bool, max_matches: int,
                 max_chars_per_match: int, count_all: bool, decode: Decode) -> SessionHits | None:
    """One stored session's hits, as :func:`~transcript_reader.home_search.files.search_one` gives them for its
    file; None when the stored text may differ from the reader's there (U+FFFD: read the file).
    ``exact``: every candidate matches (:func:`.fold.exact`), so only the kept ones are read and the
    others counted. ``decode``: the store's ``item_json`` decoder (``sessions.store_pack.decoder``:
    plain JSON text, or zstd with the store's dictionary)."""
    from transcript_reader.projections import centred_excerpt

    if exact and candidates is not None:
        kept = exact_hits(con, path, sid, pattern, kinds, candidates, max_matches=max_matches,
                          max_chars_per_match=max_chars_per_match, count_all=count_all, decode=decode)
        if kept is not False:
            return kept
    matches: list[Hit] = []
    total = 0
    for row in _rows_of(con, sid, kinds, candidates):
        text = row[6]
        if regex and REPLACEMENT in text:
            return None
        m = pattern.search(text)
        if m is None:
            continue
        total += 1
        if len(matches) < max_matches:
            if REPLACEMENT in text:
                return None
            matches.append(Hit(_item(con, row, decode), centred_excerpt(text, m.start(), m.end(), max_chars_per_match)))
        elif not count_all:
            return SessionHits(path, tuple(matches), None, True)
    return SessionHits(path, tuple(matches), total, total > len(matches))


def exact_hits(con: sqlite3.Connection, path: str, sid: int, pattern: re.Pattern[str], kinds: list[str],
               candidates: list[int], *, max_matches: int, max_chars_per_match: int,
               count_all: bool, decode: Decode) -> SessionHits | None | Literal[False]:
    """:func:`session_hits` when every candidate matches: the first ``max_matches`` read, the rest
    counted. False when a candidate read does not match after all (the caller then checks them all)."""
    from transcript_reader.projections import centred_excerpt

    matches: list[Hit] = []
    for row in _rows_of(con, sid, kinds, candidates[:max_matches]):
        text = row[6]
        m = pattern.search(text)
        if m is None:
            return False
        if REPLACEMENT in text:
            return None
        matches.append(Hit(_item(con, row, decode), centred_excerpt(text, m.start(), m.end(), max_chars_per_match)))
    if len(matches) < min(max_matches, len(candidates)):
        return False
    if len(candidates) > max_matches and not count_all:
        return SessionHits(path, tuple(matches), None, True)
    return SessionHits(path, tuple(matches), len(candidates), len(candidates) > len(matches))


def search_stored(stores: Sequence[sqlite3.Connection], paths: Iterable[str], pattern: re.Pattern[str],
                  query: str, *, regex: bool, wanted: frozenset[Kind], max_matches: int, max_chars_per_match: int,
                  count_all: bool, stats: SearchStats, read_file: Callable[[str, bool], SessionHits | None],
                  progress: Callable[[], None] | None = None, cancelled: Callable[[], bool] | None = None,
                  on_match: Callable[[str, Hit], None] | None = None) -> Iterator[SessionHits]:
    """The hits of ``pattern`` in each of ``paths`` that has any (or an error), in the order given: from
    the store each session it holds as it is now, through ``read_file(path, prefilter)`` each other one
    (the reader; None when the pre-filter skipped the file; a file the store knows the reader rejects
    is read without it, so that its error is always reported, as the reader reports it). ``on_match`` sees a stored session's
    matches when the session is done (a stored session takes milliseconds), a read file's as found."""
    paths = list(paths)
    kinds = sorted(k.value for k in wanted)
    stats.method = "store"
    held: dict[str, _Held | None] = {}
    exact = not regex and fold_exact(query)
    snapshots: list[sqlite3.Connection] = []
    candidates: list[Candidates | None] = []
    decoders: list[Decode] = []
    try:
        try:
            for con in stores:
                con.execute("BEGIN")  # one snapshot: a refresh committing meanwhile is not seen half
                snapshots.append(con)
            held = held_sessions(stores, paths)
            from transcript_reader.sessions.store_pack import decoder

            decoders = [decoder(con) for con in stores]
            expr = None if regex else match_expression(query)
            for con in stores:
                candidates.append(None if expr is None else select(con, expr, wanted))
        except sqlite3.DatabaseError as e:
            held = {}
            stats.notes.append(f"session store not used ({str(e).splitlines()[0] if str(e) else type(e).__name__}): "
                               "every session read from its file")
        for path in paths:
            if cancelled is not None and cancelled():
                return
            stats.sessions += 1
            res: SessionHits | None = None
            h = held.get(path)
            rejected = h is None and path in held
            stored = False
            if h is not None:
                con = stores[h.store]
                found = candidates[h.store]
                try:
                    cands = None if found is None else found.of(con, h.sid)
                    if cands is not None and not cands:
                        res, stored = SessionHits(path), True
                    else:
                        res = session_hits(con, path, h.sid, pattern, kinds, cands,
                                           regex=regex, exact=exact, max_matches=max_matches,
                                           max_chars_per_match=max_chars_per_match, count_all=count_all,
                                           decode=decoders[h.store])
                        stored = res is not None
                except sqlite3.DatabaseError as e:
                    held = {}
                    stats.notes.append(f"session store failed ({str(e).splitlines()[0]}): the remaining sessions "
                                       "read from their files")
                if res is not None and on_match is not None:
                    for m in res.matches:
                        on_match(path, m)
            if stored:
                stats.stored += 1
            else:
                res = read_file(path, not rejected)
                if res is None:
                    stats.skipped += 1
                else:
                    stats.read += 1
            if progress is not None:
                progress()
            if res is None:
                continue
            if res.error is not None:
                stats.failed += 1
                yield res
            elif res.matches:
                stats.hits += len(res.matches)
                yield res
    finally:
        for con in snapshots:
            try:
                con.execute("COMMIT")
            except sqlite3.Error:
                pass
