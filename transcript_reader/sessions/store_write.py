"""The store's writes: one session replaced in one transaction, gone sessions removed, and the FTS index
kept in step without triggers.

``items_fts`` is an external-content FTS5 table over ``items.text``. There are no triggers: replacing a
session's items feeds FTS5 one bulk ``'delete'`` command per old row (``INSERT … SELECT 'delete', id,
text``, the old text read back from ``items``) and one bulk insert of the new rows, both inside the
session's transaction, so a reader sees the session before or after, never half of it (and never an
index that disagrees with ``items``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from transcript_reader.sessions.fill import ITEM_COLUMNS, SESSION_COLUMNS, USAGE_COLUMNS, SessionRows
from transcript_reader.sessions.transactions import write_transaction

_SET = ", ".join(f"{c}=?" for c in SESSION_COLUMNS)
_INSERT_SESSION = f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}) VALUES ({', '.join('?' * len(SESSION_COLUMNS))})"
_UPDATE_SESSION = f"UPDATE sessions SET {_SET} WHERE id=?"
_INSERT_ITEM = (f"INSERT INTO items (session, {', '.join(ITEM_COLUMNS)}) "
                f"VALUES (?, {', '.join('?' * len(ITEM_COLUMNS))})")
_INSERT_USAGE = (f"INSERT INTO usage (session, {', '.join(USAGE_COLUMNS)}) "
                 f"VALUES (?, {', '.join('?' * len(USAGE_COLUMNS))})")


def _drop_items(con: sqlite3.Connection, sid: int) -> None:
    con.execute("INSERT INTO items_fts(items_fts, rowid, text) SELECT 'delete', id, text FROM items WHERE session=?",
                (sid,))
    con.execute("DELETE FROM items WHERE session=?", (sid,))


def write_session(con: sqlite3.Connection, rows: SessionRows) -> int:
    """Replace (or add) the session at ``rows.session['path']`` with ``rows``, in one transaction;
    returns its ``sessions.id`` (kept when the path was stored before). Items that did not change (an
    appended session keeps every item it had) are left as they are, with their FTS entries: only the
    changed, added and removed rows are written and re-indexed, so an append costs about its new items."""
    values = [rows.session[c] for c in SESSION_COLUMNS]
    with write_transaction(con):
        old = con.execute("SELECT id FROM sessions WHERE path=?", (rows.session["path"],)).fetchone()
        if old is not None:
            sid = int(old[0])
            con.execute(_UPDATE_SESSION, (*values, sid))
            con.execute("DELETE FROM census WHERE session=?", (sid,))  # the census counted the old version
            _replace_items(con, sid, rows.items)
            con.execute("DELETE FROM usage WHERE session=?", (sid,))
        else:
            cur = con.execute(_INSERT_SESSION, values)
            sid = int(cur.lastrowid or 0)
            if rows.items:
                con.executemany(_INSERT_ITEM, ((sid, *r) for r in rows.items))
                con.execute("INSERT INTO items_fts(rowid, text) SELECT id, text FROM items WHERE session=?", (sid,))
        if rows.usage:
            con.executemany(_INSERT_USAGE, ((sid, *r) for r in rows.usage))
    return sid


_TEXT_AT = ITEM_COLUMNS.index("text")
_SELECT_OLD = f"SELECT id, {', '.join(ITEM_COLUMNS)} FROM items WHERE session=?"
_UPDATE_ITEM = f"UPDATE items SET {', '.join(f'{c}=?' for c in ITEM_COLUMNS)} WHERE id=?"


def _replace_items(con: sqlite3.Connection, sid: int, new: list[tuple[Any, ...]]) -> None:
    """The items of session ``sid`` made equal to ``new``, writing only the rows that differ."""
    old = {r[1]: r for r in con.execute(_SELECT_OLD, (sid,))}
    updates: list[tuple[Any, ...]] = []
    inserts: list[tuple[Any, ...]] = []
    for r in new:
        o = old.pop(r[0], None)
        if o is None:
            inserts.append(r)
        elif o[1:] != r:
            updates.append(((o[0], o[1 + _TEXT_AT]), r))
    gone = [(o[0], o[1 + _TEXT_AT]) for o in old.values()]
    stale = gone + [u[0] for u in updates]
    if stale:
        con.executemany("INSERT INTO items_fts(items_fts, rowid, text) VALUES ('delete', ?, ?)", stale)
    if gone:
        con.executemany("DELETE FROM items WHERE id=?", [(g[0],) for g in gone])
    if updates:
        con.executemany(_UPDATE_ITEM, [(*r, key[0]) for key, r in updates])
        con.executemany("INSERT INTO items_fts(rowid, text) VALUES (?, ?)",
                        [(key[0], r[_TEXT_AT]) for key, r in updates])
    for r in inserts:
        cur = con.execute(_INSERT_ITEM, (sid, *r))
        con.execute("INSERT INTO items_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, r[_TEXT_AT]))


def remove_sessions(con: sqlite3.Connection, ids: Iterable[int]) -> int:
    """Remove these sessions (files gone) and their items and usage, in one transaction; returns how many."""
    ids = list(ids)
    if not ids:
        return 0
    with write_transaction(con):
        for sid in ids:
            _drop_items(con, sid)
            con.execute("DELETE FROM usage WHERE session=?", (sid,))
            con.execute("DELETE FROM sessions WHERE id=?", (sid,))
    return len(ids)


def set_meta(con: sqlite3.Connection, **values: Any) -> None:
    con.executemany("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    [(k, str(v)) for k, v in values.items()])
