"""An optional full-text index for cross-session search: SQLite FTS5 (trigram) over every item's text,
in a file the caller names (the CLI keeps it in the user's cache directory). Never required: a search
without it scans the files (``search.scan``), and a file the index does not hold as it is now (new,
grown, rewritten: size or mtime changed) is scanned too.

The index only *selects files*: the hits still come from the full reader, so a search through the
index returns exactly the scan's hits (``tests/test_search_index.py``). It is built from the items the
reader gives (their search text, every kind, case-folded), so, unlike the byte scan, it already holds
what the reader derives (decoded escapes, framework names, notices). A query's letter-and-digit runs of
three or more characters become trigrams, all of which a candidate file must hold; a query without
such a run cannot use the index, and the search scans.

Rows are whole items grouped up to :data:`ROW_CHARS`, so a large session never becomes one huge row, and
each item's trigrams stay in one row. Re-indexing a changed file drops its rows from the ``rows`` table
(the contentless FTS table keeps their postings until :meth:`SearchIndex.compact` rebuilds it).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from transcript_reader.errors import TranscriptError
from transcript_reader.search.derive import fold

#: Characters of item text per index row (whole items).
ROW_CHARS = 1 << 20
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, size INTEGER NOT NULL,
                                 mtime_ns INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS rows(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS rows_file ON rows(file_id);
CREATE VIRTUAL TABLE IF NOT EXISTS grams USING fts5(body, content='', tokenize='trigram case_sensitive 1',
                                                    detail='none');
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
"""
VERSION = "1"


def query_trigrams(query: str) -> list[str]:
    """The trigrams every item matching ``query`` holds (of its ASCII letter-and-digit runs)."""
    grams: dict[str, None] = {}
    for run in re.split(r"[^a-z0-9]+", query.lower()):
        if run.isascii():
            for i in range(len(run) - 2):
                grams[run[i:i + 3]] = None
    return list(grams)


class SearchIndex:
    """The index in the SQLite file ``path`` (created when missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path))
        self.db.executescript(_SCHEMA)
        got = self.db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
        if got is None:
            self.db.execute("INSERT INTO meta VALUES('version', ?)", (VERSION,))
            self.db.commit()
        elif got[0] != VERSION:
            self.db.close()
            self.path.unlink()
            self.__init__(path)  # type: ignore[misc]

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _known(self) -> dict[str, tuple[int, int, int]]:
        return {p: (i, s, m) for i, p, s, m in self.db.execute("SELECT id, path, size, mtime_ns FROM files")}

    def stale(self, paths: Iterable[str]) -> list[str]:
        """The paths the index does not hold as they are now."""
        known = self._known()
        out = []
        for p in paths:
            k = known.get(p)
            try:
                st = os.stat(p)
            except OSError:
                out.append(p)
                continue
            if k is None or (k[1], k[2]) != (st.st_size, st.st_mtime_ns):
                out.append(p)
        return out

    def update(self, paths: Iterable[str], progress: Callable[[str], None] | None = None) -> int:
        """Index every path that is new or changed (by size and mtime); returns how many were read.
        A file the reader cannot read is left out (a search scans it)."""
        from transcript_reader.api import Transcript
        from transcript_reader.projections import search_text

        known = self._known()
        n = 0
        for p in self.stale(paths):
            if progress is not None:
                progress(p)
            try:
                st = os.stat(p)
                rows: list[str] = []
                buf: list[str] = []
                size = 0
                for it in Transcript(p).items():
                    t = search_text(it)
                    if not t:
                        continue
                    buf.append(fold(t))
                    size += len(t)
                    if size >= ROW_CHARS:
                        rows.append("\n".join(buf))
                        buf, size = [], 0
                if buf:
                    rows.append("\n".join(buf))
            except (TranscriptError, OSError):
                continue
            old = known.get(p)
            with self.db:
                if old is not None:
                    self.db.execute("DELETE FROM rows WHERE file_id=?", (old[0],))
                    self.db.execute("DELETE FROM files WHERE id=?", (old[0],))
                cur = self.db.execute("INSERT INTO files(path, size, mtime_ns) VALUES(?, ?, ?)",
                                      (p, st.st_size, st.st_mtime_ns))
                fid = cur.lastrowid
                for body in rows:
                    rid = self.db.execute("INSERT INTO rows(file_id) VALUES(?)", (fid,)).lastrowid
                    self.db.execute("INSERT INTO grams(rowid, body) VALUES(?, ?)", (rid, body))
            n += 1
        return n

    def candidates(self, paths: Iterable[str], query: str) -> tuple[set[str], list[str]] | None:
        """``(files the index says may hold a hit, files it does not hold as they are now)`` among
        ``paths``, or None when the query has no trigram to look up."""
        grams = query_trigrams(query)
        if not grams:
            return None
        paths = list(paths)
        stale = set(self.stale(paths))
        match = " AND ".join(f'"{g}"' for g in grams)
        hit = {p for (p,) in self.db.execute(
            "SELECT DISTINCT f.path FROM grams JOIN rows r ON r.id = grams.rowid JOIN files f ON f.id = r.file_id "
            "WHERE grams MATCH ?", (match,))}
        return {p for p in paths if p in hit and p not in stale}, [p for p in paths if p in stale]

    def compact(self) -> None:
        """Drop the postings of rows no file holds any more (rebuilds the FTS table from nothing: every
        file is read again by the next :meth:`update`)."""
        with self.db:
            self.db.execute("DELETE FROM files")
            self.db.execute("DELETE FROM rows")
            self.db.execute("INSERT INTO grams(grams) VALUES('delete-all')")  # contentless: drops everything
        self.db.execute("VACUUM")
