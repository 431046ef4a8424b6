"""The session store: built from the reader's own objects, refreshed by file identity, equal to a fresh
read of the files after every change."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import orjson
import pytest

from tests import sessions_home as H
from transcript_reader.api import Transcript
from transcript_reader.errors import SessionNotFoundError
from transcript_reader.projections import search_text
from transcript_reader.render import entry_to_dict, item_to_dict
from transcript_reader.sessions import discovery as D
from transcript_reader.sessions.store import open_store, refresh, store_path, walk
from transcript_reader.sessions.store_schema import STORE_VERSION


@pytest.fixture()
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def _cache(home: H.FakeHome) -> Path:
    return home.home.parent / "cache"


def listing(home: H.FakeHome, **kw: object) -> list[dict[str, object]]:
    """``ls --all --all-projects`` rows from the store."""
    return [entry_to_dict(e) for e in D.list_sessions(home.home, scope=D.Scope.ALL, store_dir=_cache(home),
                                                       **kw)]  # type: ignore[arg-type]


def fresh(home: H.FakeHome) -> list[dict[str, object]]:
    """The same rows from a fresh read of the files, no store: head and tail, and every whole read."""
    return [entry_to_dict(e) for e in D.list_sessions(home.home, scope=D.Scope.ALL, with_stats=True)]


def test_the_store_holds_every_item_as_the_reader_yields_it(home: H.FakeHome) -> None:
    store = open_store(home.home, cache_dir=_cache(home))
    stats = refresh(store)
    assert stats.read == stats.files > 5 and not stats.pending
    con = store.reader()
    assert con is not None
    assert con.execute("PRAGMA user_version").fetchone()[0] == STORE_VERSION
    rows = dict(store.current())
    assert set(rows) == {f.path for f in walk(store)[0]}
    path = str(home.file_of(H.CODE_MODE))
    got = con.execute("SELECT seq, kind, line, text, item_json FROM items WHERE session=? ORDER BY seq",
                      (rows[path],)).fetchall()
    items = list(Transcript(path).items())
    assert [r[0] for r in got] == list(range(len(items)))
    for (_seq, kind, line, text, js), item in zip(got, items, strict=True):
        assert (kind, line, text) == (item.kind.value, item.line, search_text(item))
        assert orjson.loads(js) == orjson.loads(orjson.dumps(item_to_dict(item)))
    # the FTS index answers from the same rows
    hits = con.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH '\"calc.py\"'").fetchone()[0]
    like = con.execute("SELECT count(*) FROM items WHERE text LIKE '%calc.py%'").fetchone()[0]
    assert hits == like > 0


def test_ls_from_the_store_equals_a_fresh_read_of_the_files(home: H.FakeHome) -> None:
    assert listing(home) == fresh(home)
    assert listing(home) == fresh(home)  # warm: nothing read again


def test_append_rewrite_rename_and_delete_are_followed(home: H.FakeHome) -> None:
    listing(home)
    store = open_store(home.home, cache_dir=_cache(home))
    p = home.file_of(H.PYTEST)
    with p.open("a", encoding="utf-8") as fh:  # an appended (unreadable) line
        fh.write('{"timestamp":"2026-11-26T18:00:00.000Z","type":"event_msg","payload":{"type":"agent_message",'
                 '"message":"late"}}\n')
    gone = home.file_of(H.EARLY)
    gone.unlink()
    moved = home.file_of(H.V130)
    moved.rename(moved.with_name(moved.name.replace(".jsonl", "-x.jsonl")))
    assert listing(home) == fresh(home)
    stats = refresh(store)
    assert stats.read == 0 and stats.removed == 0  # the listing's refresh did it all
    assert str(gone) not in dict(store.current())


def test_one_store_per_home_under_the_cache_dir(home: H.FakeHome, tmp_path: Path) -> None:
    listing(home)
    assert (_cache(home) / store_path(_cache(home), home.home).name).exists()
    assert store_path(_cache(home), home.home) != store_path(_cache(home), tmp_path)


def test_a_corrupt_store_is_rebuilt_with_a_notice(home: H.FakeHome) -> None:
    path = store_path(_cache(home), home.home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"this is not a database" * 100)
    notes: list[str] = []
    assert listing(home, notice=notes.append) == fresh(home)
    assert len(notes) == 1 and "rebuilt" in notes[0]


def test_an_old_schema_is_rebuilt(home: H.FakeHome) -> None:
    path = store_path(_cache(home), home.home)
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE sessions (path TEXT)")
    con.execute("INSERT INTO sessions VALUES ('x')")
    con.execute(f"PRAGMA user_version={STORE_VERSION - 1 or 0}")
    con.commit()
    con.close()
    notes: list[str] = []
    assert listing(home, notice=notes.append) == fresh(home)


def test_a_newer_store_is_left_alone_and_the_files_are_read(home: H.FakeHome) -> None:
    path = store_path(_cache(home), home.home)
    path.parent.mkdir(parents=True)
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version={STORE_VERSION + 1}")
    con.commit()
    con.close()
    notes: list[str] = []
    rows = listing(home, notice=notes.append)
    assert len(notes) == 1 and "newer" in notes[0]
    assert [r["path"] for r in rows] == [r["path"] for r in fresh(home)]
    assert all(r["stats"] is None for r in rows)  # read from heads and tails: no figure invented


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only directory")
def test_a_read_only_cache_dir_bypasses_the_store(home: H.FakeHome) -> None:
    cache = _cache(home)
    cache.mkdir()
    cache.chmod(0o555)
    try:
        notes: list[str] = []
        rows = listing(home, notice=notes.append)
        assert [r["path"] for r in rows] == [r["path"] for r in fresh(home)]
        assert notes and "not used" in notes[0]
    finally:
        cache.chmod(0o755)


def test_a_session_id_in_two_files_is_an_error_naming_both(home: H.FakeHome) -> None:
    src = home.file_of(H.PYTEST)
    copy = home.home / "archived_sessions" / src.name
    copy.write_bytes(src.read_bytes())
    with pytest.raises(SessionNotFoundError, match="ambiguous") as err:
        D.resolve_session(H.PYTEST, home.home)
    assert str(src) in str(err.value) and str(copy) in str(err.value)
