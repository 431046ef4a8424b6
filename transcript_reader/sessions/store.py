"""The session store: one SQLite file per home holding every derived cross-session fact, so that ``ls``,
``browse``, the MCP listing, the census and search read each transcript once, not once per question.

Contract (what other modules may rely on; columns may be added, these names stay):

- ``sessions(id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, dev, ino, size, mtime_ns, …)``: one row per
  session file of the home (live and archived), with the file's identity, its head and tail as a
  listing reads them (``head_*``, ``tail_*``), and the figures of the whole read (``turns``, ``commands``,
  ``tokens_*``, ``info_json`` = ``render.info_to_dict`` …; NULL when unknown, never 0). ``read_ok`` is 0
  when the reader rejected the file (``read_error`` says why; then it has no items).
- ``items(id INTEGER PRIMARY KEY, session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, kind, line, turn, timestamp, command, cwd, exit_code, executed, files, test_result,
  tests_passed, tests_failed, tests_skipped, framework, tool, text, item_json, UNIQUE(session, seq))``:
  every item of ``Transcript(path).items()`` in order (``seq`` = its index). ``text`` is exactly
  ``projections.search_text(item)`` (a lone surrogate becomes U+FFFD: SQLite stores UTF-8 only);
  ``item_json`` is ``render.item_to_dict(item)`` as compact JSON: TEXT, or a zstd BLOB made with the
  store's trained dictionary (``store_pack``; about 6x smaller); :meth:`Store.item_json` decodes both.
- ``usage(session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, model, day, tier, calls,
  input, cached_input, cache_write, output, reasoning, total)``: the session's ``SessionInfo.usage`` (one
  row per model x day x tier, as the accounting in ``transcript_reader.usage`` summed it) and each row's
  price (``usd``, ``price_source``, ``price_date``, ``price_reason``: ``usage.stored_prices``, whose key in
  ``meta`` says which price data); no rows when the file records no usage (unknown: ``tokens_*`` is NULL
  too), never a row of zeros.
- ``items_kind``: an index on ``items(kind)`` (search leaves out the kinds a query does not ask for).
- ``census(session PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE, options, figures)``: the
  census figures of the session's file version (``census.figures.figures_to_state`` as JSON) for the
  census options named in ``options``; deleted whenever the session's rows are written again, so a row
  that exists is the current version's.
- ``items_fts``: FTS5, ``content='items', content_rowid='id'``, tokenizer ``trigram``, over ``text``; kept
  in step by the writer (no triggers: see ``store_write``).
- A session's rows change in one transaction; readers (``Store.reader``, ``mode=ro``) see a session whole.
- :func:`open_store`, :func:`refresh`, :meth:`Store.reader`, :meth:`Store.current` are the API.

Refresh compares each file's identity (device, inode, size, mtime_ns) with the stored one and reads
again only what differs (and the other files of a changed file's thread: a segment changes how its base
reads); files gone from the home leave the store. One writer at a time (an ``flock`` on
``<store>.lock``, dropped by the OS if the process dies); a refresh that cannot take the lock, or a store
that cannot be used (read-only or full disk, a newer version), reports the changed files as ``pending``
and the caller reads those from the files. Nothing here prints: notices and progress go to callbacks.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_reader.providers import Scope
from transcript_reader.providers import get as get_provider
from transcript_reader.sessions.fill import ITEM_COLUMNS, FileId, SessionRows, read_rows
from transcript_reader.sessions.store_pack import Packer, decoder
from transcript_reader.sessions.store_schema import StoreUnusable, open_reader, open_writer
from transcript_reader.sessions.store_write import remove_sessions, set_meta, write_session

_JSON_AT = ITEM_COLUMNS.index("item_json")

#: A first build of at least this many files, or bytes, is announced (it reads every session once).
BIG_FILES = 300
BIG_BYTES = 200 * 1024 * 1024

#: Fewer changed files than this are read in this process (forking a pool costs more than it saves).
MIN_POOL = 8

Notice = Callable[[str], None]
Progress = Callable[[int, int], None]


def store_path(cache_dir: str | os.PathLike[str], home: str | os.PathLike[str]) -> Path:
    """The store of ``home`` in ``cache_dir``: one file per home, named by a digest of its resolved path."""
    key = hashlib.sha1(str(Path(home).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return Path(cache_dir) / f"store-{key}.sqlite"


@dataclass
class RefreshStats:
    """What a refresh did. ``pending``: files whose rows are not (or no longer) in the store, because
    the store could not be written (``busy``: another process holds the write lock; ``unusable``: see
    ``notices``) or the refresh was stopped; the caller reads them from the files."""

    files: int = 0
    unchanged: int = 0
    read: int = 0
    failed: int = 0
    removed: int = 0
    pending: list[str] = field(default_factory=list)
    #: the files read and written by this refresh
    written: list[str] = field(default_factory=list)
    busy: bool = False
    unusable: bool = False
    first_build: bool = False
    seconds: float = 0.0
    notices: list[str] = field(default_factory=list)


class Store:
    """One home's store file. Cheap to create: nothing is opened until asked."""

    def __init__(self, path: Path, home: Path | None, provider: str, notice: Notice | None = None) -> None:
        self.path = path
        self.home = home
        self.provider = provider
        self._notice = notice
        self._reader: sqlite3.Connection | None = None

    def notice(self, text: str, stats: RefreshStats | None = None) -> None:
        if stats is not None:
            stats.notices.append(text)
        if self._notice is not None:
            self._notice(text)

    def reader(self) -> sqlite3.Connection | None:
        """A read-only connection for queries (one per store object, reused), or None when there is no
        usable store (none built yet, another version, unreadable): then read the files."""
        if self._reader is None:
            self._reader = open_reader(self.path)
        return self._reader

    def current(self) -> Iterator[tuple[str, int]]:
        """``(path, sessions.id)`` of every session the store holds."""
        con = self.reader()
        if con is None:
            return
        try:
            yield from con.execute("SELECT path, id FROM sessions ORDER BY path")
        except sqlite3.DatabaseError:
            return

    def item_json(self) -> Callable[[str | bytes], str]:
        """The decoder of ``items.item_json`` values (plain JSON text, or zstd with the store's
        dictionary: ``store_pack``): ``json.loads(store.item_json()(value))`` is ``render.item_to_dict``."""
        con = self.reader()
        if con is None:
            return lambda v: v if isinstance(v, str) else bytes(v).decode("utf-8")
        return decoder(con)

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(home_or_path: str | os.PathLike[str], *, cache_dir: str | os.PathLike[str] | None = None,
               provider: str = "codex", notice: Notice | None = None) -> Store:
    """The store of a home (``cache_dir`` given: ``store_path(cache_dir, home)``) or the store file
    ``home_or_path`` itself (a ``.sqlite`` path; then :func:`refresh` needs explicit paths)."""
    p = Path(home_or_path)
    if cache_dir is not None:
        return Store(store_path(cache_dir, p), p, provider, notice)
    if p.suffix == ".sqlite" or not p.is_dir():
        return Store(p, None, provider, notice)
    raise ValueError("open_store: a home needs the cache_dir its store lives in")


def store_readers(homes: Mapping[str, Path], cache_dir: str | os.PathLike[str]) -> list[sqlite3.Connection]:
    """Read-only connections to the stores of ``homes`` (provider name -> home) that exist and can be
    read, for a cross-session search; a home that is not there, or whose store is missing, of another
    version or unreadable, gives none (its sessions are then read from their files). The caller closes
    them."""
    out = []
    for name, home in homes.items():
        if home.is_dir():
            con = open_store(home, cache_dir=cache_dir, provider=name).reader()
            if con is not None:
                out.append(con)
    return out


def thread_key(provider: Any, path: str) -> str | None:
    """The thread a file belongs to, from its name (a Codex thread's segments share the thread id)."""
    sid = provider.session_id_from_name(os.path.basename(path))
    return sid.lower() if sid else None


def walk(store: Store, scope: str = Scope.ALL) -> tuple[list[FileId], list[tuple[str, bool, os.stat_result]]]:
    """The home's session files with their identity, and the ones that are not regular files (a FIFO:
    never read, listed with an error by the caller)."""
    if store.home is None:
        return [], []
    provider = get_provider(store.provider)
    out: list[FileId] = []
    odd: list[tuple[str, bool, os.stat_result]] = []
    for path, archived in provider.session_files(store.home, scope):
        try:
            st = os.stat(path)
        except OSError:
            continue  # vanished between listing and stat (a session being archived)
        if stat.S_ISREG(st.st_mode):
            out.append(FileId.of(path, store.provider, archived, st))
        else:
            odd.append((path, archived, st))
    return out, odd


class _Lock:
    """The write lock: an exclusive ``flock`` on ``<store>.lock`` (released by the OS if we die)."""

    def __init__(self, path: Path) -> None:
        self.path = path.with_name(path.name + ".lock")
        self.fd: int | None = None

    def acquire(self, wait_s: float) -> bool:
        try:
            import fcntl
        except ImportError:  # no flock here: SQLite's own locking still keeps the file whole
            return True
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # O_NONBLOCK and O_NOFOLLOW: a FIFO or a symlink put in its place never blocks nor redirects us
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                              | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError:
            return True  # a read-only directory: opening the store will say so
        if not stat.S_ISREG(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            self.fd = None
            return True  # not a lock file: opening the store decides
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(self.fd)
                    self.fd = None
                    return False
                time.sleep(0.05)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing drops the flock
            self.fd = None


def _stored(con: sqlite3.Connection) -> dict[str, tuple[int, tuple[int, int, int, int], str | None]]:
    """path -> (id, identity, thread key), in one query (never a lookup per file)."""
    return {r[0]: (r[1], (r[2], r[3], r[4], r[5]), r[6])
            for r in con.execute("SELECT path, id, dev, ino, size, mtime_ns, thread_key FROM sessions")}


def plan(stored: dict[str, tuple[int, tuple[int, int, int, int], str | None]], fids: list[FileId],
         complete: bool, given: Iterable[str] = ()) -> tuple[list[FileId], list[int]]:
    """``(to read, ids to remove)``: files whose identity differs from the stored one (and every file of
    the thread of a changed or removed one), and rows whose file is gone."""
    provider_keys: dict[str, str | None] = {}
    walked = {f.path: f for f in fids}
    changed = [f for f in fids if (s := stored.get(f.path)) is None or s[1] != f.key]
    if complete:
        gone = [p for p in stored if p not in walked]
    else:
        gone = [p for p in given if p in stored and p not in walked]
    dirty = {stored[p][2] for p in gone if stored[p][2]}
    for f in changed:
        provider_keys[f.path] = key = thread_key(get_provider(f.provider), f.path)
        if key:
            dirty.add(key)
    if dirty:
        seen = {f.path for f in changed}
        for f in fids:
            if f.path in seen:
                continue
            key = stored[f.path][2] if f.path in stored else thread_key(get_provider(f.provider), f.path)
            if key in dirty:
                changed.append(f)
    return changed, [stored[p][0] for p in gone]


def _read_one(job: tuple[FileId, str | None]) -> SessionRows:
    fid, key = job
    return read_rows(fid, key)


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the parent (which stops the pool and keeps what was written): a worker's
    own KeyboardInterrupt would print a traceback per process."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _results(jobs: list[tuple[FileId, str | None]], workers: int) -> Iterator[SessionRows]:
    """The rows of each job, as they are ready: in a pool of worker processes when there are enough
    (forked, or from a fork server when this process runs other threads: see ``reading.processes``)."""
    import sys

    if workers > 1 and len(jobs) >= MIN_POOL and sys.platform.startswith("linux"):
        from transcript_reader.reading.processes import worker_context

        ctx = worker_context(preload=("transcript_reader.sessions.store",))
        pool = ctx.Pool(min(workers, len(jobs)), initializer=_ignore_sigint)
        try:
            # biggest files first: the pool is not left waiting on one large file at the end
            order = sorted(jobs, key=lambda j: -j[0].size)
            yield from pool.imap_unordered(_read_one, order, chunksize=1)
            pool.close()
        finally:
            pool.terminate()
            pool.join()
        return
    for job in jobs:
        yield _read_one(job)


def refresh(store: Store, paths: Iterable[str] | None = None, *, workers: int = 1,
            progress: Progress | None = None, lock_wait: float = 0.0,
            files: list[FileId] | None = None) -> RefreshStats:
    """Bring the store in step with the files: the whole home (``paths`` None; ``files`` is its walk when
    the caller has it already), or only ``paths``. Each changed file is read whole (``workers``
    processes) and written in its own transaction; ``progress(done, total)`` follows the reads. Ctrl-C
    keeps every session already written; the next refresh reads the rest."""
    t0 = time.monotonic()
    stats = RefreshStats()
    given: list[str] = []
    if paths is None:
        fids = files if files is not None else walk(store)[0]
    else:
        given = [os.fspath(p) for p in paths]
        fids = []
        for p in given:
            with contextlib.suppress(OSError):
                st = os.stat(p)
                if stat.S_ISREG(st.st_mode):
                    fids.append(FileId.of(p, store.provider, "archived_sessions" in Path(p).parts, st))
    stats.files = len(fids)
    lock = _Lock(store.path)
    if not lock.acquire(lock_wait):
        stats.busy = True
        return _pending_from_reader(store, fids, stats, t0)
    try:
        try:
            con, note = open_writer(store.path)
        except StoreUnusable as e:
            stats.unusable = True
            store.notice(str(e), stats)
            stats.pending = [f.path for f in fids]
            return stats
        if note:
            store.notice(note, stats)
        try:
            _refresh_locked(store, con, fids, paths is None, given, workers, progress, stats)
        finally:
            con.close()
        store.close()  # a reader opened before sees the new rows on its next query anyway; reopen cleanly
    finally:
        lock.release()
    stats.seconds = time.monotonic() - t0
    return stats


def _pending_from_reader(store: Store, fids: list[FileId], stats: RefreshStats, t0: float) -> RefreshStats:
    con = store.reader()
    stored = {}
    if con is not None:
        with contextlib.suppress(sqlite3.DatabaseError):
            stored = _stored(con)
    changed, _gone = plan(stored, fids, False)
    stats.pending = [f.path for f in changed]
    stats.unchanged = len(fids) - len(changed)
    stats.seconds = time.monotonic() - t0
    return stats


def _prices_in_step(store: Store, con: sqlite3.Connection, stats: RefreshStats) -> None:
    """Stored rows priced by other price data or rules are priced again (``usage.stored_prices``)."""
    from transcript_reader.usage.stored_prices import price_key, reprice, stored_key

    key = price_key()
    if stored_key(con) != key:
        try:
            reprice(con, key)
        except sqlite3.DatabaseError as e:
            store.notice(f"session store prices not updated: {store.path}: {e}", stats)


def _refresh_locked(store: Store, con: sqlite3.Connection, fids: list[FileId], complete: bool, given: list[str],
                    workers: int, progress: Progress | None, stats: RefreshStats) -> None:
    stored = _stored(con)
    _prices_in_step(store, con, stats)
    changed, gone = plan(stored, fids, complete, given)
    stats.unchanged = len(fids) - len(changed)
    try:
        stats.removed = remove_sessions(con, gone)
    except sqlite3.DatabaseError as e:
        store.notice(f"session store not updated: {store.path}: {e}", stats)
        stats.unusable = True
        stats.pending = [f.path for f in changed]
        return
    if not changed:
        return
    stats.first_build = not stored
    size = sum(f.size for f in changed)
    if not stored and (len(changed) >= BIG_FILES or size >= BIG_BYTES):
        store.notice(f"indexing {len(changed)} sessions ({size / 1e6:,.0f} MB) into the session store "
                     f"{store.path}: once; later runs read only what changed", stats)
    packer = Packer(con)
    keys = {f.path: thread_key(get_provider(f.provider), f.path) for f in changed}
    jobs = [(f, keys[f.path]) for f in changed]
    left = {f.path for f in changed}
    done = 0
    try:
        for rows in _results(jobs, workers):
            path = rows.session["path"]
            if (rows.session["head_error"] or "").startswith("cannot read"):
                # unreadable now (permissions): not stored, since a chmod leaves the identity as it was;
                # the caller lists it from the file, with its error
                if path in stored:
                    with contextlib.suppress(sqlite3.DatabaseError):
                        remove_sessions(con, [stored[path][0]])
                done += 1
                continue
            try:
                if rows.items:
                    rows.items = packer.pack_rows(rows.items, _JSON_AT)
                write_session(con, rows)
            except sqlite3.DatabaseError as e:  # a full disk, say: stop writing, the caller reads the rest
                store.notice(f"session store not updated: {store.path}: {e}", stats)
                stats.unusable = True
                break
            left.discard(path)
            stats.written.append(path)
            done += 1
            stats.read += 1
            stats.failed += 0 if rows.session["read_ok"] or rows.session["head_format"] is None else 1
            if progress is not None:
                progress(done, len(jobs))
        with contextlib.suppress(sqlite3.DatabaseError):
            set_meta(con, home=str(store.home), provider=store.provider, refreshed=time.time())
    finally:
        stats.pending = sorted(left)
