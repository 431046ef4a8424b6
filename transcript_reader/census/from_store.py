"""The census through the session store: files of a home are counted once, and later censuses take
their figures from the home's store (table ``census``) instead of reading them again.

A file's census figures are what :func:`census.file.census_file` gives for it (computed by the same
workers, with the same options), kept per session in its home's store. The store deletes them whenever
it writes the session again (the file changed, or another file of its thread did), and the census
brings each home's store in step first (``sessions.store.refresh``: the build, on every worker), so a
stored row is always the current file version's: figures from the store equal figures from the files.
Files outside every home, a store that cannot be used, or ``--rows`` (script rows are not stored):
counted from the files, as without a store.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from pathlib import Path

from transcript_reader.census.figures import Figures, figures_from_state, figures_to_state
from transcript_reader.census.file import CensusOptions
from transcript_reader.census.walk import FileJob
from transcript_reader.sessions.store import Notice, Progress, Store, open_store, refresh
from transcript_reader.sessions.transactions import write_transaction


def options_key(options: CensusOptions) -> str:
    """The options a stored figure was counted with (a figure counted without cross-checks is not one
    counted with them)."""
    return json.dumps({"cross_check": options.cross_check})


def _under(path: str, home: Path) -> bool:
    return path.startswith(str(home).rstrip(os.sep) + os.sep)


class CensusStore:
    """The stores of the homes the census files live in."""

    def __init__(self, homes: dict[str, Path], store_dir: Path, options: CensusOptions,
                 notice: Notice | None = None) -> None:
        self.options = options
        self.key = options_key(options)
        self.stores: list[Store] = [open_store(home, cache_dir=store_dir, provider=name, notice=notice)
                                    for name, home in homes.items() if home.is_dir()]

    def _store_of(self, path: str) -> Store | None:
        return next((s for s in self.stores if s.home is not None and _under(path, s.home)), None)

    def refresh(self, jobs: list[FileJob], workers: int,
                progress: Callable[[Store], Progress | None] | None = None) -> None:
        """Bring every store that holds one of ``jobs`` in step with its home (a first build reads
        every session of the home, with ``workers`` processes)."""
        used = {id(s) for j in jobs if (s := self._store_of(j.path)) is not None}
        for store in self.stores:
            if id(store) in used:
                refresh(store, workers=workers, progress=progress(store) if progress else None, lock_wait=30.0)
        self.stores = [s for s in self.stores if id(s) in used]

    def split(self, jobs: list[FileJob]) -> tuple[Figures, list[FileJob], int]:
        """``(figures of the jobs the stores answer for, the jobs left to count, how many answered)``."""
        total = Figures()
        stored: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        for store in self.stores:
            con = store.reader()
            if con is None:
                continue
            with contextlib.suppress(sqlite3.DatabaseError):
                stored.update((r[0], ((r[1], r[2], r[3], r[4]), r[5])) for r in con.execute(
                    "SELECT s.path, s.dev, s.ino, s.size, s.mtime_ns, c.figures FROM census c "
                    "JOIN sessions s ON s.id = c.session WHERE c.options = ?", (self.key,)))
        left: list[FileJob] = []
        answered = 0
        for job in jobs:
            got = stored.get(job.path)
            if got is not None and got[0] == _identity(job.path):
                total.merge(figures_from_state(json.loads(got[1])))
                answered += 1
            else:
                left.append(job)
        return total, left, answered

    def save(self, per_file: Iterable[tuple[str, Figures]]) -> int:
        """Keep each file's figures in its home's store, for the file version the store holds (one
        transaction per store; nothing is kept when another process holds the write lock). Returns
        how many were kept."""
        from transcript_reader.sessions.store import _Lock
        from transcript_reader.sessions.store_schema import StoreUnusable, open_writer

        by_store: dict[int, list[tuple[str, Figures]]] = {}
        for path, fig in per_file:
            store = self._store_of(path)
            if store is not None and not fig.interrupted:
                by_store.setdefault(id(store), []).append((path, fig))
        kept = 0
        for store in self.stores:
            todo = by_store.get(id(store))
            if not todo:
                continue
            lock = _Lock(store.path)
            if not lock.acquire(5.0):
                continue
            try:
                try:
                    con, _note = open_writer(store.path)
                except StoreUnusable:
                    continue
                try:
                    kept += _save(con, todo, self.key)
                except sqlite3.DatabaseError:
                    pass  # a full disk, say: the next census counts these files again
                finally:
                    con.close()
            finally:
                lock.release()
            store.close()
        return kept

    def close(self) -> None:
        for s in self.stores:
            s.close()


def _identity(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _save(con: sqlite3.Connection, todo: list[tuple[str, Figures]], key: str) -> int:
    ids = {r[0]: (r[1], (r[2], r[3], r[4], r[5])) for r in con.execute(
        "SELECT path, id, dev, ino, size, mtime_ns FROM sessions WHERE path IN (SELECT value FROM json_each(?))",
        (json.dumps([p for p, _f in todo]),))}
    rows = []
    for path, fig in todo:
        got = ids.get(path)
        # only for the version the store holds (a file that changed while it was counted is not kept)
        if got is not None and got[1] == _identity(path):
            rows.append((got[0], key, json.dumps(figures_to_state(fig))))
    with write_transaction(con):
        con.executemany("INSERT INTO census(session, options, figures) VALUES (?, ?, ?) "
                        "ON CONFLICT(session) DO UPDATE SET options=excluded.options, figures=excluded.figures", rows)
    return len(rows)
