"""The session store's schema and its connections: creating, checking and (when it is from another
version or broken) replacing the SQLite file. ``store`` is the API; this is the plumbing under it.

The store is derived: every row can be made again from the files. So there are no migrations. A file of
another ``STORE_VERSION`` (``PRAGMA user_version``), or one SQLite cannot read, is rebuilt from scratch
(an older version: its tables dropped in one transaction, so a reader never sees half of it; a broken
file: replaced). A file from a *newer* version is left alone and not used: a newer reader may still be
using it, and rebuilding it would make two versions undo each other's work.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from transcript_reader.sessions.fill import ITEM_COLUMNS, SESSION_COLUMNS, TOKEN_FIELDS, USAGE_COLUMNS
from transcript_reader.sessions.transactions import write_transaction

#: Bump when the schema or anything the reader derives into the rows changes: an older store is rebuilt.
STORE_VERSION = 5  # 2: usage accounting; 3: census figures per session; 4: the usage table (calls, tokens, bands,
# prices); 5: cache writes (and their 1-hour part) in the session and usage token columns

#: The FTS5 tokenizer of ``items_fts``: case-insensitive substrings of 3+ characters (what ``search``
#: matches), which ``unicode61``/``porter`` break (they split ``AssertionError:`` and drop punctuation).
FTS_TOKENIZE = "trigram"

#: Search removes the kinds it leaves out of a large index answer through this index
#: (``home_search.candidates.KIND_INDEX``).
ITEMS_KIND_INDEX = "CREATE INDEX IF NOT EXISTS items_kind ON items(kind)"

_TOKEN_INTEGERS = {f"{p}{f}" for p in ("tail_", "tokens_") for f in TOKEN_FIELDS if f != "source"}
_INTEGER = _TOKEN_INTEGERS | {"archived", "dev", "ino", "size", "mtime_ns", "read_ok", "turns", "commands", "commands_failed",
            "files_changed", "tests_passed", "tests_failed", "answered", "seq", "line", "exit_code",
            "tests_skipped", "calls", "input", "cached_input", "cache_write", "output", "reasoning", "total",
            "cache_write_1h"}


def _column(name: str) -> str:
    if name == "path":
        return "path TEXT UNIQUE NOT NULL"
    if name in ("dev", "ino", "size", "mtime_ns", "seq"):
        return f"{name} INTEGER NOT NULL"
    if name in ("duration_s", "usd"):
        return f"{name} REAL"
    if name == "item_json":
        return "item_json"  # TEXT, or BLOB when a store compresses it (see store.ITEM_JSON)
    return f"{name} {'INTEGER' if name in _INTEGER else 'TEXT'}"


SCHEMA = f"""
CREATE TABLE sessions (
  id INTEGER PRIMARY KEY,
  {(',' + chr(10) + '  ').join(_column(c) for c in SESSION_COLUMNS)}
);
CREATE INDEX sessions_thread ON sessions(thread_key);
CREATE TABLE items (
  id INTEGER PRIMARY KEY,
  session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  {(',' + chr(10) + '  ').join(_column(c) for c in ITEM_COLUMNS)},
  UNIQUE(session, seq)
);
CREATE INDEX items_kind ON items(kind);
CREATE VIRTUAL TABLE items_fts USING fts5(text, content='items', content_rowid='id', tokenize='{FTS_TOKENIZE}');
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE usage (
  session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  {(',' + chr(10) + '  ').join(_column(c) for c in USAGE_COLUMNS)}
);
CREATE INDEX usage_session ON usage(session);
CREATE TABLE census (
  session INTEGER PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  options TEXT NOT NULL,
  figures TEXT NOT NULL
);
"""


class StoreUnusable(Exception):
    """The store cannot be used here (read-only or full disk, a newer version, a broken file that
    could not be replaced): the caller reads the files instead. ``str()`` is the one-line notice."""


def connect(path: Path, *, readonly: bool = False, timeout: float = 5.0) -> sqlite3.Connection:
    """A connection with the store's settings: WAL (readers never wait for the writer and never see an
    uncommitted session), ``synchronous=NORMAL`` (a crash may lose the last commits, never corrupt),
    foreign keys on. ``readonly`` opens with ``mode=ro`` and never changes the journal mode."""
    if readonly:
        con = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=timeout,
                              isolation_level=None, check_same_thread=False)
    else:
        con = sqlite3.connect(path, timeout=timeout, isolation_level=None, check_same_thread=False)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=NORMAL")
        con.execute("PRAGMA journal_size_limit=67108864")
    con.execute("PRAGMA foreign_keys=ON")
    return con


def _tables(con: sqlite3.Connection) -> set[str]:
    return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}


def _create(con: sqlite3.Connection) -> None:
    """Drop whatever tables are there and create the current schema, in one transaction."""
    with write_transaction(con):
        if "items_fts" in _tables(con):
            con.execute("DROP TABLE items_fts")  # takes its shadow tables along
        for name in sorted(_tables(con)):
            if not name.startswith("sqlite_"):
                con.execute(f'DROP TABLE IF EXISTS "{name}"')
        for statement in SCHEMA.split(";"):
            if statement.strip():
                con.execute(statement)
        con.execute(f"PRAGMA user_version={STORE_VERSION}")


def _remove(path: Path) -> None:
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()


def _why(e: BaseException) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def odd_file(path: Path) -> str | None:
    """Why ``path`` (or its ``-wal``/``-shm``) must not be opened as a store: it exists and is not a
    regular file (a FIFO would block the open, a symlink may point anywhere); None when it is fine."""
    import stat

    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            continue
        except OSError as e:
            return f"{p}: {_why(e)}"
        if not stat.S_ISREG(st.st_mode):
            return f"{p} is not a regular file"
    return None


def open_writer(path: Path) -> tuple[sqlite3.Connection, str | None]:
    """The writer's connection to a current store at ``path`` (created, upgraded or replaced as needed;
    the caller holds the write lock), and the notice to show when it had to be rebuilt. Raises
    :class:`StoreUnusable`."""
    notice = None
    odd = odd_file(path)
    if odd is not None:
        raise StoreUnusable(f"session store not used: {odd}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise StoreUnusable(f"session store not used: cannot create {path.parent} ({_why(e)})") from None
    for attempt in (1, 2):
        try:
            con = connect(path)
            try:
                version = con.execute("PRAGMA user_version").fetchone()[0]
                if version > STORE_VERSION:
                    raise StoreUnusable(f"session store not used: {path} was made by a newer transcript-reader "
                                        f"(store version {version}, this one reads {STORE_VERSION})")
                if version != STORE_VERSION or not {"sessions", "items", "items_fts", "census", "usage"} <= _tables(con):
                    if version:
                        notice = (f"session store {path} is from an older version ({version} < {STORE_VERSION}): "
                                  "rebuilt from the session files")
                    _create(con)
                else:
                    # a store made before the index on items(kind) gets it in place (search leaves the
                    # kinds it does not search out through it; a rebuild would re-read every file)
                    con.execute(ITEMS_KIND_INDEX)
                return con, notice
            except BaseException:
                con.close()
                raise
        except StoreUnusable:
            raise
        except sqlite3.DatabaseError as e:
            if _disk_trouble(e) or attempt == 2:
                raise StoreUnusable(f"session store not used: {path}: {_why(e)}") from None
            # not a database, or a damaged one: the files are the truth, so start again from them
            notice = f"session store {path} was unreadable ({_why(e)}): rebuilt from the session files"
            try:
                _remove(path)
            except OSError as e2:
                raise StoreUnusable(f"session store not used: {path}: {_why(e2)}") from None
    raise AssertionError("unreachable")


def _disk_trouble(e: sqlite3.DatabaseError) -> bool:
    """A read-only or full disk, a directory we may not write: bypass, never delete the file."""
    text = str(e).lower()
    return any(w in text for w in ("readonly", "read-only", "disk is full", "unable to open", "disk i/o",
                                   "locked", "permission"))


def open_reader(path: Path) -> sqlite3.Connection | None:
    """A read-only connection to a current store, or None when there is none usable at ``path`` (no
    file yet, another version, unreadable)."""
    if not os.path.exists(path) or odd_file(path) is not None:
        return None
    try:
        con = connect(path, readonly=True)
    except sqlite3.Error:
        return None
    try:
        if con.execute("PRAGMA user_version").fetchone()[0] != STORE_VERSION:
            con.close()
            return None
        return con
    except sqlite3.Error:
        con.close()
        return None
