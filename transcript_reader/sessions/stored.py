"""Listing rows from the session store: each home's store brought in step with its files, then one query
for the rows. A file the store could not take (another process holds the write lock, a read-only or
full disk, a refresh cut short) is listed from its head and tail instead, as without a store: a row is
never stale and never missing."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from transcript_reader.model import Format, TokenUsage, UsageRow
from transcript_reader.providers import Provider, Scope
from transcript_reader.providers.head import SessionHead, SessionTail
from transcript_reader.sessions.entry import SessionEntry, SessionStats
from transcript_reader.sessions.fill import HEAD_FIELDS, STATS_FIELDS, TOKEN_FIELDS, FileId
from transcript_reader.sessions.store import Notice, Progress, RefreshStats, Store, open_store, refresh, walk
from transcript_reader.usage.accounting import SUMMED

if TYPE_CHECKING:
    from transcript_reader.usage.stored_prices import StoredPrice

_FORMATS = {f.value: f for f in Format}
_COLUMNS = ("path", "size", "mtime_ns", "dev", "ino", *(f"head_{f}" for f in HEAD_FIELDS), "tail_last_timestamp",
            *(f"tail_{f}" for f in TOKEN_FIELDS), "read_ok", *STATS_FIELDS, *(f"tokens_{f}" for f in TOKEN_FIELDS))
_QUERY = f"SELECT {', '.join(_COLUMNS)} FROM sessions"
_NH = len(HEAD_FIELDS)
_NT = len(TOKEN_FIELDS)
_NS = len(STATS_FIELDS)
_HEAD_AT = 5
# positions stored_entries relies on: the head starts with its format, the stats end with ``answered``
assert HEAD_FIELDS[0] == "format" and STATS_FIELDS[6:] == ("last_timestamp", "duration_s", "answered")


Stored = tuple[tuple[int, int, int, int], SessionHead, SessionTail, SessionStats | None]


def stored_entries(con: sqlite3.Connection, paths: list[str] | None = None) -> dict[str, Stored]:
    """path -> (identity, head, tail, whole-read figures) of every stored session (or of ``paths``), in
    one query. Each row is cut into its records by position (a warm ``ls`` of 10,000 sessions builds
    them all: keyword arguments and per-row helpers cost a third of its time)."""
    out: dict[str, Stored] = {}
    rows = con.execute(_QUERY) if paths is None else con.execute(
        f"{_QUERY} WHERE path IN (SELECT value FROM json_each(?))", (json.dumps(paths),))
    formats, head_of, tail_of, tokens_of, stats_of = _FORMATS, SessionHead, SessionTail, TokenUsage, SessionStats
    h0, h1, t0 = _HEAD_AT, _HEAD_AT + _NH, _HEAD_AT + _NH
    k0 = t0 + 1
    k1 = r0 = k0 + _NT
    s0 = r0 + 1
    s1 = u0 = s0 + _NS
    for row in rows:
        fmt = row[h0]
        head = head_of(None if fmt is None else formats.get(fmt), *row[h0 + 1:h1])
        tail = tail_of(row[t0], None if row[k0] is None else tokens_of(*row[k0:k1]))
        stats = None
        if row[r0]:
            tok = None if row[u0] is None else tokens_of(*row[u0:])
            answered = row[s1 - 1]
            stats = stats_of(*row[s0:s0 + 6], tok, row[s0 + 6], row[s0 + 7],
                             None if answered is None else bool(answered))  # type: ignore[call-arg]
        out[row[0]] = ((row[3], row[4], row[1], row[2]), head, tail, stats)
    return out


def _in_scope(archived: bool, scope: str) -> bool:
    return scope == Scope.ALL or (archived if scope == Scope.ARCHIVED else not archived)


def list_stored(sources: list[tuple[Provider, Path]], scope: str, store_dir: Path, *, workers: int,
                progress: Progress | None, notice: Notice | None,
                from_file: Callable[[list[tuple[Provider, str, bool, os.stat_result]]], list[SessionEntry]],
                names: dict[str, str]) -> tuple[list[SessionEntry], set[str], list[RefreshStats]]:
    """Every session file of ``sources`` in ``scope`` as a row (no filter yet), its whole-read figures
    attached; the walked paths; what each refresh did. ``from_file`` lists the files the store could
    not give (read from their head and tail)."""
    entries: list[SessionEntry] = []
    seen: set[str] = set()
    done: list[RefreshStats] = []
    for provider, home in sources:
        if not home.is_dir():
            continue  # no home, no sessions: and no store to create for it
        store = open_store(home, cache_dir=store_dir, provider=provider.name, notice=notice)
        try:
            fids, odd = walk(store, Scope.ALL)
            rows = _rows(store)
            walked = {f.path for f in fids}
            if any(rows.get(f.path, _NONE)[0] != f.key for f in fids) or any(p not in walked for p in rows):
                stats = refresh(store, files=fids, workers=workers, progress=progress)
                done.append(stats)
                pending = set(stats.pending)
                if rows and len(stats.written) < 200:  # a few files changed: fetch only their rows
                    rows.update(_rows(store, stats.written))
                else:
                    rows = _rows(store)
            else:
                pending = set()  # warm: nothing changed, no lock taken, nothing written
            direct: list[tuple[Provider, str, bool, os.stat_result]] = []
            for fid in fids:
                if not _in_scope(fid.archived, scope):
                    continue
                seen.add(fid.path)
                got = rows.get(fid.path) if fid.path not in pending else None
                if got is None or got[0] != fid.key:
                    try:
                        direct.append((provider, fid.path, fid.archived, os.stat(fid.path)))
                    except OSError:
                        pass  # gone since the walk
                    continue
                entries.append(_entry(fid, got, names))
            for path, archived, st in odd:
                if _in_scope(archived, scope):
                    seen.add(path)
                    direct.append((provider, path, archived, st))
            entries.extend(from_file(direct))
        finally:
            store.close()
    return entries, seen, done


_NONE: Stored = ((-1, -1, -1, -1), SessionHead(format=None), SessionTail(), None)


def _rows(store: Store, paths: list[str] | None = None) -> dict[str, Stored]:
    con = store.reader()
    if con is None:
        return {}
    try:
        return stored_entries(con, paths)
    except sqlite3.DatabaseError:
        return {}


def _readable(sources: list[tuple[Provider, Path]],
              store_dir: Path) -> Iterator[tuple[Provider, Store, sqlite3.Connection]]:
    """Each home's store that can be read, with its read-only connection, open while the caller holds it.
    A home that is not there, or whose store cannot be read, is left out: its sessions are read from the
    files."""
    for provider, home in sources:
        if not home.is_dir():
            continue
        with open_store(home, cache_dir=store_dir, provider=provider.name) as store:
            con = store.reader()
            if con is not None:
                yield provider, store, con


def _entry(fid: FileId, got: Stored, names: dict[str, str]) -> SessionEntry:
    _key, head, tail, stats = got
    size, mtime_ns = fid.size, fid.mtime_ns
    e = SessionEntry(path=fid.path, archived=fid.archived, size=size, mtime_ns=mtime_ns, head=head, tail=tail,
                     stats=stats)
    if not names:
        return e
    sid = e.session_id
    name = names.get(sid) if sid else None
    if name is not None:
        e = SessionEntry(path=fid.path, archived=fid.archived, size=size, mtime_ns=mtime_ns, head=head, tail=tail,
                         stats=stats, name=name)
    return e


def read_stored(sources: list[tuple[Provider, Path]], store_dir: Path) -> dict[str, Stored]:
    """The rows the homes' stores hold, as they are (read-only: nothing refreshed, nothing written). A
    caller that opens each file itself (the MCP server's root policy) uses a row only for the very file
    version it opened (same device, inode, size and mtime)."""
    out: dict[str, Stored] = {}
    for _provider, _store, con in _readable(sources, store_dir):
        with contextlib.suppress(sqlite3.DatabaseError):
            out.update(stored_entries(con))
    return out


def stored_info(sources: list[tuple[Provider, Path]], store_dir: Path, path: str | os.PathLike[str]) -> dict | None:
    """``inspect``'s ``info`` of the file at ``path`` (``render.info_to_dict``) as a home's store holds
    it, or None: then read the file. The store answers only for the very file version it read (same
    device, inode, size and mtime), read whole without error, and only when the file reads alone: no
    other file of its thread, neither in the store nor now on disk (a segment added or removed since
    changes how the file reads without touching it). Text the store had to make storable (a lone
    surrogate, stored as U+FFFD) is read again from the file, so the answer is always a fresh read's."""
    import stat as _stat

    try:
        st = os.stat(path)
    except OSError:
        return None
    if not _stat.S_ISREG(st.st_mode):
        return None
    names = list(dict.fromkeys((os.path.abspath(path), os.path.realpath(path))))
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    for provider, _store, con in _readable(sources, store_dir):
        try:
            row = con.execute("SELECT dev, ino, size, mtime_ns, read_ok, info_json, thread_key FROM sessions "
                              "WHERE path IN (SELECT value FROM json_each(?))", (json.dumps(names),)).fetchone()
            if row is None or tuple(row[:4]) != identity or not row[4] or not row[5] or "\ufffd" in row[5]:
                continue
            if row[6] is not None and con.execute("SELECT count(*) FROM sessions WHERE thread_key=?",
                                                  (row[6],)).fetchone()[0] != 1:
                return None
        except sqlite3.DatabaseError:
            continue
        links = getattr(provider, "thread_links", None)
        if links is not None:
            try:
                before, after = links(Path(path))
            except OSError:
                return None
            if before or after:
                return None
        info: dict = json.loads(row[5])
        info["path"] = str(Path(path))
        return info
    return None


#: One stored session's usage: its identity ``(size, mtime_ns)``, its ``usage`` rows (empty: the file
#: records no usage) and their stored prices (None: priced under other price data, price them again).
StoredUsage = tuple[tuple[int, int], tuple[UsageRow, ...], "tuple[StoredPrice, ...] | None"]

_USAGE_QUERY = ("SELECT s.path, s.size, s.mtime_ns, u.model, u.day, u.tier, u.calls, u.input, u.cached_input, "
                "u.cache_write, u.output, u.reasoning, u.total, u.cache_write_1h, u.bands, u.usd, u.price_source, "
                "u.price_date, u.price_reason "
                "FROM sessions s LEFT JOIN usage u ON u.session = s.id WHERE s.read_ok = 1 ORDER BY s.id, u.rowid")


def stored_usage(sources: list[tuple[Provider, Path]], store_dir: Path, *, key: str | None = None,
                 refresh_prices: bool = False) -> dict[str, StoredUsage]:
    """path -> the usage the homes' stores hold for every session they read whole (one query per home),
    with the stored prices when the store's price key is ``key`` (else None: the caller prices the rows;
    ``refresh_prices`` first lets a refresh price them again in the store). A caller uses a path's rows
    only for the file version it lists (same size and mtime): any other is read from the file."""
    from transcript_reader.usage.stored_prices import StoredPrice, stored_key, stored_row

    out: dict[str, StoredUsage] = {}
    for _provider, store, con in _readable(sources, store_dir):
        current = key is not None and stored_key(con) == key
        if key is not None and not current and refresh_prices:
            refresh(store, [])  # takes the write lock and prices the stored rows again, reads no file
            again = store.reader()
            if again is None:
                continue
            con = again
            current = stored_key(con) == key
        got: dict[str, tuple[tuple[int, int], list[UsageRow], list[StoredPrice]]] = {}
        try:
            for (path, size, mtime_ns, model, day, tier, calls, i, c, w, o, r, t, h, bands, usd, source,
                 date, reason) in con.execute(_USAGE_QUERY):
                entry = got.get(path)
                if entry is None:
                    entry = got[path] = ((size, mtime_ns), [], [])
                if calls is not None:
                    entry[1].append(stored_row(model, day, tier, calls, (i, c, w, o, r, t, h), bands, SUMMED))
                    entry[2].append(StoredPrice(usd, source, date, reason))
        except sqlite3.DatabaseError:
            continue  # a broken store: every session of this home is read from its file
        out.update((p, (ident, tuple(rows), tuple(prices) if current else None))
                   for p, (ident, rows, prices) in got.items())
    return out
