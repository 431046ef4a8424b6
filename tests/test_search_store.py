"""Cross-session search from the session store (``transcript_reader.home_search.stored``) gives exactly what
the full reader gives each file: the same sessions, items, excerpts, order, per-session caps and totals,
for literal queries (through the trigram index), short ones and regexes (a scan of the stored text),
any kinds, counting or capped. A property test compares both over random homes and queries; the other
tests pin each way the store steps aside (a file changed since it was stored, text SQLite cannot keep,
a broken store)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_search import _ALPHABET, _write, rollouts
from transcript_reader import api
from transcript_reader.errors import TranscriptError
from transcript_reader.home_search import SearchStats, compile_query, item_dict, search_sessions
from transcript_reader.home_search.files import plan, search_one
from transcript_reader.home_search.files import search_sessions as search_files
from transcript_reader.projections import search_text

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = int(os.environ.get("SEARCH_STORE_EXAMPLES", "25"))
FIXTURES = [str(p) for p in sorted((ROOT / "fixtures").rglob("*.jsonl")) if "golden" not in p.name]


def build_store(paths: Iterable[str], db: Path) -> sqlite3.Connection:
    """A store of ``paths`` built through the session store's own API, opened for reading."""
    try:
        from transcript_reader.sessions.store import open_store, refresh
    except ImportError:
        return _contract_store(paths, db)
    store = open_store(db)
    refresh(store, list(paths))
    con = store.reader()
    assert con is not None
    return con


def _contract_store(paths: Iterable[str], db: Path) -> sqlite3.Connection:
    from transcript_reader.projections.render import item_to_dict

    con = sqlite3.connect(db, isolation_level=None)
    con.executescript("""
    CREATE TABLE sessions(id INTEGER PRIMARY KEY, path TEXT UNIQUE, dev, ino, size, mtime_ns, read_ok);
    CREATE TABLE items(id INTEGER PRIMARY KEY, session INTEGER, seq INTEGER, kind TEXT, line INTEGER, turn,
                       timestamp, text TEXT, item_json TEXT, UNIQUE(session, seq));
    CREATE VIRTUAL TABLE items_fts USING fts5(text, content='items', content_rowid='id', tokenize='trigram');
    """)

    def safe(t: str) -> str:
        try:
            t.encode("utf-8")
            return t
        except UnicodeEncodeError:
            return t.encode("utf-8", "surrogatepass").decode("utf-8", "replace")

    for p in paths:
        st_ = os.stat(p)
        try:
            items = list(api.Transcript(p).items())
            ok = 1
        except TranscriptError:
            items, ok = [], 0
        sid = con.execute("INSERT INTO sessions(path, dev, ino, size, mtime_ns, read_ok) VALUES (?,?,?,?,?,?)",
                          (p, st_.st_dev, st_.st_ino, st_.st_size, st_.st_mtime_ns, ok)).lastrowid
        for n, it in enumerate(items):
            con.execute("INSERT INTO items(session, seq, kind, line, turn, timestamp, text, item_json) "
                        "VALUES (?,?,?,?,?,?,?,?)", (sid, n, it.kind.value, it.line, it.turn_id, it.timestamp,
                                                     safe(search_text(it)),
                                                     json.dumps(item_to_dict(it), ensure_ascii=True)))
    con.execute("INSERT INTO items_fts(rowid, text) SELECT id, text FROM items")
    return con


def _norm(res: Any) -> tuple[Any, ...]:
    return (res.path, [(m.item.kind, m.item.line, m.item.timestamp, item_dict(m.item), m.excerpt) for m in res.matches],
            res.total, res.truncated, None if res.error is None else str(res.error))


def truth(paths: list[str], query: str, *, regex: bool = False, kinds: tuple[str, ...] = (), max_matches: int = 5,
          count_all: bool = True) -> list[tuple[Any, ...]]:
    """What a fresh full read gives: each file read whole by the reader, in order."""
    wanted, _ = plan(query, regex=regex, kinds=kinds)
    pattern = compile_query(query, regex)
    out = []
    for p in paths:
        r = search_one(p, pattern, wanted, max_matches=max_matches, max_chars_per_match=300, count_all=count_all)
        if r.error is not None or r.matches:
            out.append(_norm(r))
    return out


def stored(con: sqlite3.Connection, paths: list[str], query: str, *, regex: bool = False,
           kinds: tuple[str, ...] = (), max_matches: int = 5, count_all: bool = True,
           stats: SearchStats | None = None) -> tuple[list[tuple[Any, ...]], list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []
    got = [_norm(r) for r in search_sessions(paths, query, regex=regex, kinds=kinds, max_matches=max_matches,
                                             count_all=count_all, stores=[con], stats=stats,
                                             on_match=lambda p, m: seen.append((p, m.excerpt)))]
    return got, seen


QUERIES = [("calc", False), ("CALC.PY", False), ("pytest", False), ("zz-not-there", False), ("a", False),
           ("ok", False), ("Script completed", False), ("exec_command", False), ("finish", False),
           ("\u0131", False), (r"\bcalc\w*", True), ("^$", True), ("[0-9]{3}", True), ("i", False)]


@pytest.fixture(scope="module")
def fixture_store(tmp_path_factory: pytest.TempPathFactory) -> sqlite3.Connection:
    """Every fixture in one store whose ``item_json`` is both plain and zstd-packed (the dictionary is
    trained after a few items here, as a real home's is after its first thousands): hits decode both."""
    try:
        from transcript_reader.sessions import store_pack
    except ImportError:
        return build_store(FIXTURES, tmp_path_factory.mktemp("store") / "store.sqlite")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store_pack, "TRAIN_ITEMS", 40)
        mp.setattr(store_pack, "DICT_BYTES", 4096)
        con = build_store(FIXTURES, tmp_path_factory.mktemp("store") / "store.sqlite")
    assert {type(v) for (v,) in con.execute("SELECT item_json FROM items")} == {str, bytes}
    return con


@pytest.mark.parametrize(("query", "regex"), QUERIES)
def test_every_fixture_gives_the_readers_hits(fixture_store: sqlite3.Connection, query: str, regex: bool) -> None:
    for kinds in ((), ("shell_command", "reasoning", "notice", "unreadable", "test_run", "patch")):
        for max_matches, count_all in ((5, True), (1, False), (2, True)):
            stats = SearchStats("scan")
            got, seen = stored(fixture_store, FIXTURES, query, regex=regex, kinds=kinds, max_matches=max_matches,
                               count_all=count_all, stats=stats)
            want = truth(FIXTURES, query, regex=regex, kinds=kinds, max_matches=max_matches, count_all=count_all)
            assert got == want, (query, kinds, max_matches)
            assert seen == [(g[0], m[4]) for g in got for m in g[1]]  # on_match saw each kept match, in order
            assert stats.method == "store" and stats.sessions == len(FIXTURES)
            assert stats.stored + stats.read + stats.skipped == len(FIXTURES)


@pytest.mark.parametrize(("query", "regex"), QUERIES)
def test_the_kind_index_path_gives_the_same_hits(fixture_store: sqlite3.Connection, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch, query: str, regex: bool) -> None:
    """With an index on ``items(kind)``, a large answer of the trigram index is split by item ids and the
    kinds left out removed through that index (session by session, then all at once): the same hits."""
    from transcript_reader.home_search import candidates

    copy = tmp_path / "with-kind-index.sqlite"
    fixture_store.execute("VACUUM INTO ?", (str(copy),))
    con = sqlite3.connect(copy, isolation_level=None)
    con.execute(f"CREATE INDEX IF NOT EXISTS {candidates.KIND_INDEX} ON items(kind)")
    monkeypatch.setattr(candidates, "READ_ROWS_BELOW", 0)
    monkeypatch.setattr(candidates, "PER_SESSION", 3)
    for kinds in ((), ("shell_command", "notice", "patch")):
        for max_matches, count_all in ((5, True), (1, False)):
            got, _ = stored(con, FIXTURES, query, regex=regex, kinds=kinds, max_matches=max_matches,
                            count_all=count_all)
            assert got == truth(FIXTURES, query, regex=regex, kinds=kinds, max_matches=max_matches,
                                count_all=count_all), (query, kinds)


def test_item_ids_follow_the_timeline_within_a_session(fixture_store: sqlite3.Connection) -> None:
    """What the id ranges rely on: a session's items have consecutive ids, ascending with ``seq``."""
    from transcript_reader.home_search.candidates import id_ranges

    assert fixture_store.execute("SELECT count(*) FROM items a JOIN items b ON a.session = b.session "
                                 "AND a.seq < b.seq AND a.id > b.id").fetchone() == (0,)
    ranges = id_ranges(fixture_store)
    assert ranges is not None and len(ranges) == fixture_store.execute(
        "SELECT count(DISTINCT session) FROM items").fetchone()[0]


def test_sessions_appended_to_keep_their_hits(fixture_store: sqlite3.Connection, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A refresh that appends to a session gives its new items ids after every other session's: the
    session's ids come in several runs, found by bisection, and the hits stay the reader's."""
    from transcript_reader.home_search import candidates

    copy = tmp_path / "appended.sqlite"
    fixture_store.execute("VACUUM INTO ?", (str(copy),))
    con = sqlite3.connect(copy, isolation_level=None)
    con.execute(f"CREATE INDEX IF NOT EXISTS {candidates.KIND_INDEX} ON items(kind)")
    sids = [r[0] for r in con.execute("SELECT session FROM items GROUP BY session HAVING count(*) > 6 LIMIT 3")]
    for _round in range(2):
        for sid in sids:  # the session's last items taken out and written again, as an append writes them
            n = con.execute("SELECT max(seq) FROM items WHERE session = ?", (sid,)).fetchone()[0]
            rows = con.execute("SELECT * FROM items WHERE session = ? AND seq > ? ORDER BY seq", (sid, n - 3)).fetchall()
            cols = [d[1] for d in con.execute("PRAGMA table_info(items)")]
            for r in rows:
                con.execute("INSERT INTO items_fts(items_fts, rowid, text) VALUES ('delete', ?, ?)",
                            (r[0], r[cols.index("text")]))
                con.execute("DELETE FROM items WHERE id = ?", (r[0],))
            for r in rows:
                iid = con.execute(f"INSERT INTO items ({', '.join(cols[1:])}) VALUES ({', '.join('?' * (len(cols) - 1))})",
                                  r[1:]).lastrowid
                con.execute("INSERT INTO items_fts(rowid, text) VALUES (?, ?)", (iid, r[cols.index("text")]))
    ranges = candidates.id_ranges(con)
    assert ranges is not None and len(ranges) == len({r[2] for r in ranges}) + len(sids)
    monkeypatch.setattr(candidates, "READ_ROWS_BELOW", 0)
    monkeypatch.setattr(candidates, "PER_SESSION", 2)
    for q in ("calc", "exec_command", "file", "the"):
        got, _ = stored(con, FIXTURES, q)
        assert got == truth(FIXTURES, q), q


def test_a_miss_and_a_hit_read_no_stored_file(fixture_store: sqlite3.Connection) -> None:
    """Only the files the reader rejects (no items stored) are read again, to give the reader's error."""
    rejected = fixture_store.execute("SELECT count(*) FROM sessions WHERE NOT read_ok").fetchone()[0]
    for q in ("zz-not-there", "calc", "a"):
        stats = SearchStats("scan")
        stored(fixture_store, FIXTURES, q, stats=stats)
        assert stats.stored == len(FIXTURES) - rejected and stats.read + stats.skipped == rejected


def test_the_hits_are_api_search_matches(fixture_store: sqlite3.Connection) -> None:
    got, _ = stored(fixture_store, FIXTURES, "calc")
    assert got
    for path, matches, total, _trunc, err in got:
        if err is not None:
            with pytest.raises(TranscriptError):
                api.search(path, "calc")
            continue
        res = api.search(path, "calc", max_matches=5, max_chars_per_match=300)
        assert [(m.item.line, m.excerpt) for m in res.matches] == [(m[1], m[4]) for m in matches]
        assert res.total_matches == total


def test_a_file_changed_since_it_was_stored_is_read(tmp_path: Path) -> None:
    src = ROOT / "fixtures" / "transcripts" / "code_mode_records.jsonl"
    f = tmp_path / "s.jsonl"
    f.write_bytes(src.read_bytes())
    con = build_store([str(f)], tmp_path / "store.sqlite")
    text = f.read_text(encoding="utf-8")
    first = next(it for it in api.Transcript(f).items() if it.kind.value == "user_message")
    word = search_text(first).split()[0]
    f.write_text(text.replace(word, "zqxjkwordnew", 1), encoding="utf-8")
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    stats = SearchStats("scan")
    got, _ = stored(con, [str(f)], "zqxjkwordnew", stats=stats)
    assert got == truth([str(f)], "zqxjkwordnew") and got
    assert stats.read == 1 and stats.stored == 0


def test_text_sqlite_cannot_keep_is_searched_in_the_file(tmp_path: Path) -> None:
    """A lone surrogate is stored as U+FFFD: a session whose matching text holds one is read from its
    file, so excerpts and regex hits are the reader's; a query holding U+FFFD goes to the files."""
    f = tmp_path / "s.jsonl"
    meta = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "session_meta",
            "payload": {"id": "00000000-0000-7000-8000-0000000000ab", "cwd": "/w", "originator": "codex_exec",
                        "cli_version": "0.171.0", "source": "exec", "timestamp": "2026-01-01T00:00:00.000Z"}}
    msg = {"timestamp": "2026-01-01T00:00:01.000Z", "type": "response_item", "payload": {
        "type": "message", "role": "user", "content": [{"type": "input_text", "text": "odd \ud800 word tail"}]}}
    f.write_text(json.dumps(meta) + "\n" + json.dumps(msg) + "\n", encoding="utf-8")
    con = build_store([str(f)], tmp_path / "store.sqlite")
    for q, regex in (("word", False), ("odd . word", True), ("\ufffd", False), ("d.{3}w", True), ("tail", False)):
        got, _ = stored(con, [str(f)], q, regex=regex)
        assert got == truth([str(f)], q, regex=regex), q


def test_a_broken_store_leaves_every_session_to_its_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    con = sqlite3.connect(bad)
    stats = SearchStats("scan")
    got, _ = stored(con, FIXTURES, "calc", stats=stats)
    assert got == [_norm(r) for r in search_files(FIXTURES, "calc")]  # today's reading of the files
    assert stats.stored == 0 and stats.notes and "session store not used" in stats.notes[0]


# ---------------------------------------------------------------- the property: random homes, random queries


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                       HealthCheck.too_slow])
@given(homes=st.lists(st.tuples(rollouts(), st.booleans(), st.booleans()), min_size=1, max_size=4),
       data=st.data())
def test_store_search_equals_a_fresh_full_read(tmp_path_factory: pytest.TempPathFactory,
                                               homes: list[tuple[list[Any], bool, bool]], data: st.DataObject) -> None:
    """Over random homes (rollouts full of escapes, odd case partners, joined parts, broken lines) and
    queries cut out of their items (any span, case swapped) or drawn at random (literal or regex), the
    store's hits equal the reader's, session by session."""
    tmp = tmp_path_factory.mktemp("home")
    paths = []
    for n, (lines, ascii_, compact) in enumerate(homes):
        f = tmp / f"s{n}.jsonl"
        _write(f, lines, ascii_, compact)
        paths.append(str(f))
    con = build_store(paths, tmp / "store.sqlite")
    texts = []
    for p in paths:
        try:
            texts += [search_text(it) for it in api.Transcript(p).items()]
        except TranscriptError:
            pass
    texts = [t for t in texts if t]
    queries = [(data.draw(st.text(alphabet=_ALPHABET, min_size=1, max_size=6), label="random query"), False),
               (data.draw(st.sampled_from(["a.", "[ks]", "(?s)x.*e", "\\d+", "^", "i"]), label="regex"), True)]
    for _ in range(min(4, len(texts))):
        text = data.draw(st.sampled_from(texts), label="item")
        i = data.draw(st.integers(0, len(text) - 1), label="start")
        j = data.draw(st.integers(i + 1, min(len(text), i + 30)), label="end")
        q = text[i:j]
        if data.draw(st.booleans(), label="swap case"):
            q = q.swapcase()
        queries.append((q, False))
    kinds = data.draw(st.sampled_from([(), ("user_message", "shell_command"), ("notice", "unreadable", "tool_call",
                                                                                "reasoning", "patch", "test_run")]))
    max_matches = data.draw(st.sampled_from([1, 2, 5]))
    count_all = data.draw(st.booleans())
    for q, regex in queries:
        got, _ = stored(con, paths, q, regex=regex, kinds=kinds, max_matches=max_matches, count_all=count_all)
        assert got == truth(paths, q, regex=regex, kinds=kinds, max_matches=max_matches, count_all=count_all), q


def test_a_store_made_without_the_kind_index_gets_it_at_the_next_refresh(tmp_path: Path) -> None:
    """Search leaves the kinds it does not search out through ``items(kind)``: a store written before
    that index existed gets it in place, its rows kept (no rebuild)."""
    pytest.importorskip("transcript_reader.sessions.store")
    from transcript_reader.home_search.candidates import KIND_INDEX
    from transcript_reader.sessions.store import open_store, refresh

    paths = FIXTURES[:6]
    store = open_store(tmp_path / "store.sqlite")
    refresh(store, paths)
    con = sqlite3.connect(tmp_path / "store.sqlite", isolation_level=None)
    con.execute(f"DROP INDEX {KIND_INDEX}")
    ids = con.execute("SELECT id FROM items ORDER BY id").fetchall()
    con.close()
    store.close()
    store = open_store(tmp_path / "store.sqlite")
    refresh(store, paths)
    reader = store.reader()
    assert reader is not None
    assert reader.execute("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", (KIND_INDEX,)).fetchone()
    assert reader.execute("SELECT id FROM items ORDER BY id").fetchall() == ids
    got, _ = stored(reader, paths, "calc")
    assert got == truth(paths, "calc")
