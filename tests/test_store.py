"""The session store: built from the reader's own objects, refreshed by file identity, equal to a fresh
read of the files after every change."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import sessions_home as H
from transcript_reader.api import Transcript
from transcript_reader.errors import SessionNotFoundError
from transcript_reader.projections import search_text
from transcript_reader.projections.render import entry_to_dict, item_to_dict
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
    decode = store.item_json()
    items = list(Transcript(path).items())
    assert [r[0] for r in got] == list(range(len(items)))
    for (_seq, kind, line, text, js), item in zip(got, items, strict=True):
        assert (kind, line, text) == (item.kind.value, item.line, search_text(item))
        assert orjson.loads(decode(js)) == orjson.loads(orjson.dumps(item_to_dict(item)))
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


_LIST = """
import json, sys
from transcript_reader.projections.render import entry_to_dict
from transcript_reader.sessions import discovery as D
notes = []
rows = D.list_sessions(sys.argv[1], scope=D.Scope.ALL, store_dir=sys.argv[2], notice=notes.append)
print(json.dumps({"rows": [entry_to_dict(e) for e in rows], "notes": notes}))
"""


def _list_read_only(home: H.FakeHome) -> dict[str, object]:
    """The listing in a child whose view of the cache directory is a read-only mount (``unshare``: a
    test running as root would write through a mere ``chmod``)."""
    import json
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("unshare is absent: cannot mount the cache directory read-only")
    cache = _cache(home)
    cache.mkdir(exist_ok=True)
    script = (f'mount --bind "{cache}" "{cache}" && mount -o remount,bind,ro "{cache}" && '
              f'exec "{sys.executable}" -c \'{_LIST}\' "{home.home}" "{cache}"')
    p = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    if p.returncode != 0 and "mount" in p.stderr:
        pytest.skip(f"cannot mount read-only here: {p.stderr.strip()[:200]}")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


def test_a_read_only_cache_dir_bypasses_the_store(home: H.FakeHome) -> None:
    got = _list_read_only(home)  # no store yet, and none can be made: the files are read
    assert got["rows"] == [dict(r, stats=None) for r in _head_rows(home)]
    assert got["notes"] and "not used" in got["notes"][0]  # type: ignore[index]


def test_a_read_only_store_is_read_and_changed_files_come_from_the_files(home: H.FakeHome) -> None:
    listing(home)
    p = home.file_of(H.PARENT)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    rows = {r["path"]: r for r in _list_read_only(home)["rows"]}  # type: ignore[union-attr]
    assert [r["path"] for r in rows.values()] == [r["path"] for r in fresh(home)]
    assert rows[str(p)]["stats"] is None  # changed since the store took it: read from its head


def _head_rows(home: H.FakeHome) -> list[dict[str, object]]:
    return [entry_to_dict(e) for e in D.list_sessions(home.home, scope=D.Scope.ALL)]


def test_a_session_id_in_two_files_is_an_error_naming_both(home: H.FakeHome) -> None:
    src = home.file_of(H.PYTEST)
    copy = home.home / "archived_sessions" / src.name
    copy.write_bytes(src.read_bytes())
    with pytest.raises(SessionNotFoundError, match="ambiguous") as err:
        D.resolve_session(H.PYTEST, home.home)
    assert str(src) in str(err.value) and str(copy) in str(err.value)


# ---- random changes: the store always equals a fresh read ------------------------------------------

_PROPERTY_EXAMPLES = int(os.environ.get("STORE_PROPERTY_EXAMPLES", "8"))


def _tokens_of(rows: list[dict[str, object]]) -> list[object]:
    return [(r["path"], r["tokens"]) for r in rows]


def _stored_usage(cache: Path, home: H.FakeHome) -> dict[str, list[tuple[object, ...]]]:
    """path -> the store's ``usage`` rows of that file, in the order written."""
    con = sqlite3.connect(store_path(cache, home.home))
    try:
        out: dict[str, list[tuple[object, ...]]] = {}
        for path, *row in con.execute(
                "SELECT s.path, u.model, u.day, u.tier, u.calls, u.input, u.cached_input, u.cache_write, u.output, "
                "u.reasoning, u.total, u.bands FROM usage u JOIN sessions s ON s.id = u.session ORDER BY u.rowid"):
            out.setdefault(path, []).append(tuple(row))
        return out
    finally:
        con.close()


def _fresh_usage(home: H.FakeHome) -> dict[str, list[tuple[object, ...]]]:
    """The same from a fresh whole read of every file (``SessionInfo.usage``); a file the reader rejects,
    or one that records no usage, has no rows."""
    out: dict[str, list[tuple[object, ...]]] = {}
    for p in sorted(home.home.rglob("rollout-*")):
        if not p.is_file():
            continue
        try:
            info = Transcript(p).info()
        except Exception:  # noqa: BLE001 - a file the reader rejects has no usage rows in the store either
            continue
        rows = [(r.model, r.day, r.tier, r.calls, r.tokens.input, r.tokens.cached_input, r.tokens.cache_write,
                 r.tokens.output, r.tokens.reasoning, r.tokens.total,
                 None if r.bands is None else json.dumps([[a, n, [t.input, t.cached_input, t.cache_write, t.output,
                                                                  t.reasoning, t.total]] for a, n, t in r.bands],
                                                         separators=(",", ":"))) for r in info.usage]
        if rows:
            out[str(p)] = rows
    return out


def test_the_store_holds_each_sessions_usage_as_a_fresh_read_gives_it(home: H.FakeHome) -> None:
    cache = _cache(home)
    listing(home)
    stored = _stored_usage(cache, home)
    assert stored == _fresh_usage(home)
    # the fixture home has sessions with usage and sessions that record none (no rows: unknown, never 0)
    files = [str(p) for p in home.home.rglob("rollout-*") if p.is_file()]
    assert 0 < len(stored) < len(files)
    assert all(row[3] > 0 for rows in stored.values() for row in rows)
    # read back, the rows are the accounting's own, prompt-size bands and all
    from transcript_reader.sessions.session_homes import sources
    from transcript_reader.sessions.stored import stored_usage

    back = stored_usage(sources(home.home, None), cache)
    for path in stored:
        assert back[path][1] == Transcript(path).info().usage, path


@given(steps=st.lists(st.tuples(st.sampled_from(["append", "rewrite", "rename", "delete", "copy", "truncate"]),
                                st.integers(0, 1000), st.integers(1, 40)), min_size=1, max_size=5))
@settings(max_examples=_PROPERTY_EXAMPLES, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_random_changes_keep_the_store_equal_to_a_fresh_read(tmp_path_factory: pytest.TempPathFactory,
                                                            steps: list[tuple[str, int, int]]) -> None:
    home = H.build_home(tmp_path_factory.mktemp("prop"))
    cache = _cache(home)
    listing(home)
    for what, pick, n in steps:
        files = sorted(p for p in home.home.rglob("rollout-*") if p.is_file())
        if not files:
            break
        p = files[pick % len(files)]
        data = p.read_bytes()
        lines = data.split(b"\n")
        if what == "append" and not p.name.endswith(".zst"):
            with p.open("ab") as fh:
                fh.write(b"\n".join(lines[len(lines) // 2:len(lines) // 2 + n]) + b"\n")
        elif what == "rewrite" and not p.name.endswith(".zst"):
            st_ = p.stat()
            p.write_bytes(data.replace(b"calc", b"CALC", n))
            os.utime(p, ns=(st_.st_atime_ns, st_.st_mtime_ns + 1))
        elif what == "rename":
            p.rename(p.with_name(p.name.replace("rollout-", "rollout-", 1).replace(".json", f"-{n}.json", 1)))
        elif what == "delete":
            p.unlink()
        elif what == "copy":
            (home.home / "archived_sessions").mkdir(exist_ok=True)
            (home.home / "archived_sessions" / p.name).write_bytes(data)
        elif what == "truncate" and not p.name.endswith(".zst"):
            p.write_bytes(b"\n".join(lines[: max(1, len(lines) - n)]))
        got, want = listing(home), fresh(home)
        assert got == want
        assert _tokens_of(got) == _tokens_of(want)
        assert _stored_usage(cache, home) == _fresh_usage(home)
        con = sqlite3.connect(store_path(cache, home.home))
        try:  # the FTS index agrees with the items it indexes
            con.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")
        finally:
            con.close()


# ---- several processes at once ------------------------------------------------------------------------

_BUILD = """
import sys
from transcript_reader.sessions.store import open_store, refresh
st = refresh(open_store(sys.argv[1], cache_dir=sys.argv[2]), workers=int(sys.argv[3]), lock_wait=float(sys.argv[4]))
print(st.read, len(st.pending), st.busy)
"""


def _spawn(home: H.FakeHome, workers: int = 1, wait: float = 60.0) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _BUILD, str(home.home), str(_cache(home)), str(workers),
                             str(wait)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})


def test_two_writers_at_once_give_one_whole_store(home: H.FakeHome) -> None:
    a, b = _spawn(home), _spawn(home)
    outs = [p.communicate(timeout=300) for p in (a, b)]
    assert a.returncode == b.returncode == 0, outs
    # one built it; the other waited for the lock and found nothing left to read
    reads = sorted(int(o[0].split()[0]) for o in outs)
    assert reads[0] == 0 and reads[1] > 0
    assert listing(home) == fresh(home)


def test_a_killed_build_leaves_a_store_the_next_run_completes(home: H.FakeHome) -> None:
    # more files, so the build is still running when it is killed
    for k, p in enumerate(sorted(home.home.rglob("rollout-*.jsonl"))):
        for j in range(6):
            (p.parent / p.name.replace("rollout-", f"rollout-{k}{j}", 1)).write_bytes(p.read_bytes())
    proc = _spawn(home)
    path = store_path(_cache(home), home.home)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait for the first committed sessions, then kill
        try:
            con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
            n = con.execute("SELECT count(*) FROM sessions").fetchone()[0]
            con.close()
            if n >= 3:
                break
        except sqlite3.Error:
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    store = open_store(home.home, cache_dir=_cache(home))
    partial = len(dict(store.current()))
    store.close()
    stats = refresh(store)
    assert 0 < partial and stats.read == stats.files - partial  # only what was missing is read
    assert listing(home) == fresh(home)


def test_a_busy_store_is_read_as_it_is_plus_the_changed_files(home: H.FakeHome) -> None:
    listing(home)
    p = home.file_of(H.PARENT)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    from transcript_reader.sessions.store import _Lock  # the writer's own lock, held as another process would

    lock = _Lock(store_path(_cache(home), home.home))
    assert lock.acquire(0)
    try:
        rows = listing(home)
    finally:
        lock.release()
    by_path = {r["path"]: r for r in rows}
    assert by_path[str(p)]["stats"] is None  # read from its head: the store could not take it
    assert sum(r["stats"] is not None for r in rows) == len(rows) - 1


def test_parquet_export_holds_the_store_tables(home: H.FakeHome, tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    from transcript_reader.sessions.store_export import export_parquet

    store = open_store(home.home, cache_dir=_cache(home))
    refresh(store)
    con = store.reader()
    assert con is not None
    done = export_parquet(con, tmp_path / "out")
    sessions = pq.read_table(done["sessions"][0]).to_pylist()
    items = pq.read_table(done["items"][0]).to_pylist()
    assert sorted(r["path"] for r in sessions) == sorted(p for p, _id in store.current())
    assert len(items) == done["items"][1] == con.execute("SELECT count(*) FROM items").fetchone()[0]
    first = con.execute("SELECT text, item_json FROM items ORDER BY id LIMIT 1").fetchone()
    assert (items[0]["text"], items[0]["item_json"]) == first


def test_store_command_exports_and_reports(home: H.FakeHome, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import json

    env = {**os.environ, "CODEX_HOME": str(home.home), "XDG_CACHE_HOME": str(_cache(home)),
           "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"), "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    run = [sys.executable, "-m", "transcript_reader", "store"]
    out = subprocess.run([*run, "export", "--parquet", str(tmp_path / "pq"), "--json"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    exported = json.loads(out.stdout)["exported"][str(home.home)]
    assert exported["sessions"]["rows"] == 10 and (tmp_path / "pq" / "items.parquet").exists()
    status = json.loads(subprocess.run([*run, "status", "--json"], env=env, capture_output=True, text=True,
                                       timeout=120).stdout)
    assert status["stores"][0]["sessions"] == 10


def test_item_json_is_compressed_once_a_dictionary_is_trained(home: H.FakeHome, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from transcript_reader.sessions import store_pack

    monkeypatch.setattr(store_pack, "TRAIN_ITEMS", 40)
    monkeypatch.setattr(store_pack, "DICT_BYTES", 4096)
    store = open_store(home.home, cache_dir=_cache(home))
    refresh(store)
    con = store.reader()
    assert con is not None
    kinds = {type(v) for (v,) in con.execute("SELECT item_json FROM items")}
    assert kinds == {str, bytes}  # plain before the dictionary, compressed after
    decode = store.item_json()
    for path, sid in store.current():
        items = list(Transcript(path).items()) if con.execute(
            "SELECT read_ok FROM sessions WHERE id=?", (sid,)).fetchone()[0] else []
        stored = [orjson.loads(decode(v)) for (v,) in
                  con.execute("SELECT item_json FROM items WHERE session=? ORDER BY seq", (sid,))]
        assert stored == [orjson.loads(orjson.dumps(item_to_dict(i))) for i in items]
    # an append rewrites only what changed, compressed items compared as they are stored
    p = home.file_of(H.PYTEST)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    assert listing(home) == fresh(home)


_BUILD_WHILE_IMPORTING = """
import importlib.abc, importlib.machinery, os, sys, threading
from transcript_reader.sessions.store import open_store, refresh

parent, started, release = os.getpid(), threading.Event(), threading.Event()

class SlowLoader(importlib.abc.Loader):
    # runs genai_prices (the price tables a store worker imports) slowly in this process: another thread
    # holds that module's import lock while the pool starts
    def __init__(self, real):
        self.real = real
    def create_module(self, spec):
        return self.real.create_module(spec)
    def exec_module(self, module):
        if os.getpid() == parent:
            started.set()
            release.wait()
        self.real.exec_module(module)

class Slow(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "genai_prices":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        spec.loader = SlowLoader(spec.loader)
        return spec

sys.meta_path.insert(0, Slow())
importer = threading.Thread(target=lambda: __import__("genai_prices"), daemon=True)
importer.start()
started.wait()
st = refresh(open_store(sys.argv[1], cache_dir=sys.argv[2]), workers=2)
release.set()
importer.join()
print(st.read)
"""


def test_a_pool_started_while_another_thread_imports_does_not_hang(home: H.FakeHome) -> None:
    """A forked worker inherits the lock of an import another thread has in progress, held for ever
    (``browse`` reads a session in one thread while its list refreshes the store in a pool): with
    other threads running, the workers come from a fork server, and the build completes."""
    for k, p in enumerate(sorted(home.home.rglob("rollout-*.jsonl"))):
        (p.parent / p.name.replace("rollout-", f"rollout-{k}x", 1)).write_bytes(p.read_bytes())
    n = len(list(home.home.rglob("rollout-*.jsonl")))
    assert n >= 8  # enough files for the pool
    proc = subprocess.Popen([sys.executable, "-c", _BUILD_WHILE_IMPORTING, str(home.home), str(_cache(home))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the hung workers too: they hold the pipes
        proc.communicate()
        pytest.fail("the store build hung in its worker pool")
    assert proc.returncode == 0, err
    assert int(out.split()[-1]) >= n  # every file was read (the home holds other providers' files too)
    assert listing(home) == fresh(home)
