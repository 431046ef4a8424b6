"""discovery: finding sessions under a fake $CODEX_HOME built from fixtures/codex_home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import sessions_home as H
from transcript_reader.errors import InvalidArgumentError, SessionNotFoundError
from transcript_reader.projections.render import entry_to_dict
from transcript_reader.providers.codex import layout
from transcript_reader.providers.head import SessionHead
from transcript_reader.reading.files import open_regular
from transcript_reader.sessions import discovery as D
from transcript_reader.sessions.session_tree import nest


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def ids(entries: list[D.SessionEntry]) -> list[str | None]:
    return [e.session_id for e in entries]


def test_project_listing_newest_first_with_subagent_under_parent(home: H.FakeHome) -> None:
    entries = D.list_sessions(home.home, cwd=str(home.project))
    assert ids(entries) == H.PROJECT_LIVE_ORDER
    depth = {e.session_id: e.depth for e in entries}
    assert depth[H.SUBAGENT] == 1 and all(d == 0 for s, d in depth.items() if s != H.SUBAGENT)


def test_scopes(home: H.FakeHome) -> None:
    live = set(ids(D.list_sessions(home.home)))
    archived = ids(D.list_sessions(home.home, scope=D.Scope.ARCHIVED))
    every = set(ids(D.list_sessions(home.home, scope=D.Scope.ALL)))
    assert archived == [H.ARCHIVED]
    assert H.ARCHIVED not in live and H.TS in live and H.OTHER_PROJECT in live
    assert every == live | {H.ARCHIVED}
    assert len(every) == 10


def test_cwd_filter_is_the_directory_or_below(home: H.FakeHome) -> None:
    assert ids(D.list_sessions(home.home, cwd=str(home.other))) == [H.OTHER_PROJECT]
    parent_dir = str(home.project.parent)  # both projects live below it
    assert set(ids(D.list_sessions(home.home, cwd=parent_dir))) == set(H.PROJECT_LIVE_ORDER) | {H.OTHER_PROJECT}
    # a sibling whose name starts the same is not "below"
    assert D.list_sessions(home.home, cwd=str(home.project) + "-old") == []


def test_zst_is_listed_and_plain_twin_wins(tmp_path: Path) -> None:
    home = H.build_home(tmp_path, plain_twin_of_zst=True)
    entries = [e for e in D.list_sessions(home.home) if e.session_id == H.ZST]
    assert len(entries) == 1 and entries[0].path.endswith(".jsonl")
    home2 = H.build_home(tmp_path / "b")
    (z,) = [e for e in D.list_sessions(home2.home) if e.session_id == H.ZST]
    assert z.path.endswith(".jsonl.zst") and z.head.title == "fix calc.py and verify"


def test_session_index_last_name_wins(home: H.FakeHome) -> None:
    names = D.load_session_index(home.home)
    assert names[H.CODE_MODE] == "Code-mode cells demo"
    (e,) = [e for e in D.list_sessions(home.home) if e.session_id == H.CODE_MODE]
    assert e.title == "Code-mode cells demo" and e.head.title == "make calc tests pass"
    with open(home.home / layout.INDEX_FILE, "a") as fh:
        fh.write(json.dumps({"id": H.CODE_MODE, "thread_name": "", "updated_at": "2026-12-01T00:00:00Z"}))
        fh.write("\nnot json\n")
    assert H.CODE_MODE not in D.load_session_index(home.home)


def test_since_until_grep_limit(home: H.FakeHome) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    since = D.parse_when("2026-11-29", now=now)
    assert ids(D.list_sessions(home.home, cwd=str(home.project), since=since)) == [H.CODE_MODE, H.PARENT, H.SUBAGENT]
    assert D.parse_when("2d", now=now) == datetime(2026, 11, 29, tzinfo=UTC)
    assert D.parse_when("1w", now=now) == datetime(2026, 11, 24, tzinfo=UTC)
    until = D.parse_when("2026-11-28T00:00", now=now)
    assert ids(D.list_sessions(home.home, cwd=str(home.project), until=until)) == [H.EARLY, H.PYTEST]
    assert ids(D.list_sessions(home.home, grep="CELLS DEMO")) == [H.CODE_MODE]
    assert ids(D.list_sessions(home.home, grep="scout")) == [H.SUBAGENT]  # agent nickname
    # limit counts top-level rows; the sub-agent comes with its parent
    assert ids(D.list_sessions(home.home, cwd=str(home.project), limit=2)) == [H.CODE_MODE, H.PARENT, H.SUBAGENT]
    with pytest.raises(InvalidArgumentError):
        D.parse_when("yesterday-ish", now=now)


def test_orphan_subagent_is_top_level(home: H.FakeHome) -> None:
    entries = D.list_sessions(home.home, grep="what is wrong", cwd=str(home.project))
    assert ids(entries) == [H.SUBAGENT, H.EARLY]
    assert entries[0].depth == 0 and entries[0].parent_id == H.PARENT


def test_resolve_session(home: H.FakeHome) -> None:
    assert D.resolve_session(H.SUBAGENT, home.home).session_id == H.SUBAGENT
    assert D.resolve_session("01a22d9c-3e", home.home).session_id == H.SUBAGENT
    assert D.resolve_session("a15e", home.home).session_id == H.EARLY
    assert D.resolve_session(H.ARCHIVED[:13], home.home).archived
    assert D.resolve_session("Code-mode cells demo", home.home).session_id == H.CODE_MODE
    assert D.resolve_session("last", home.home, cwd=str(home.project)).session_id == H.CODE_MODE
    assert D.resolve_session("last~1", home.home, cwd=str(home.project)).session_id == H.PARENT
    assert D.resolve_session("last~2", home.home, cwd=str(home.project)).session_id == H.ZST  # sub-agents skipped
    assert D.resolve_session("last", home.home, cwd=str(home.other)).session_id == H.OTHER_PROJECT
    with pytest.raises(SessionNotFoundError, match="ambiguous"):
        D.resolve_session("01a22d9c", home.home)
    with pytest.raises(SessionNotFoundError, match="no session matches"):
        D.resolve_session("ffffffff", home.home)
    with pytest.raises(SessionNotFoundError, match="only 1 session"):
        D.resolve_session("last~1", home.home, cwd=str(home.other))
    with pytest.raises(SessionNotFoundError, match="at least 4"):
        D.resolve_session("01a", home.home)


def test_durations_and_tokens_come_from_the_tail(home: H.FakeHome) -> None:
    by_id = {e.session_id: e for e in D.list_sessions(home.home, scope=D.Scope.ALL)}
    parent = by_id[H.PARENT]
    assert parent.duration_s == pytest.approx(1.04)
    assert parent.tokens is not None and parent.tokens.total == 38891
    assert by_id[H.EARLY].duration_s is None  # one timestamp in the file: no duration rather than zero
    assert by_id[H.ZST].tokens is None  # compressed: only a full read knows
    assert by_id[H.TS].head.cwd is None


def test_with_stats_reads_whole_sessions(home: H.FakeHome, tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []
    entries = D.list_sessions(home.home, cwd=str(home.project), with_stats=True,
                              progress=lambda done, total: seen.append((done, total)))
    by_id = {e.session_id: e for e in entries}
    code = by_id[H.CODE_MODE].stats
    assert code is not None
    assert (code.turns, code.commands, code.commands_failed, code.files_changed) == (1, 2, 1, 1)
    assert by_id[H.EARLY].stats is not None and by_id[H.EARLY].stats.turns == 2
    assert seen[-1] == (len(entries), len(entries))
    # the session store gives the same figures
    stored = D.list_sessions(home.home, cwd=str(home.project), store_dir=tmp_path / "c")
    assert [e.stats for e in stored] == [e.stats for e in entries]


def test_entry_to_dict_is_json_ready(home: H.FakeHome) -> None:
    rows = [entry_to_dict(e) for e in D.list_sessions(home.home, scope=D.Scope.ALL)]
    json.dumps(rows)
    sub = next(r for r in rows if r["id"] == H.SUBAGENT)
    assert sub["parent_session_id"] == H.PARENT and sub["depth"] == 1 and sub["source"] == "subagent:thread_spawn"


@pytest.mark.parametrize("name, ok", [
    ("rollout-2026-11-30T17-59-09-01a22d9c-5471-7953-942f-93603d8b9241.jsonl", True),
    ("rollout-2026-11-30T17-59-09-01a22d9c-5471-7953-942f-93603d8b9241.jsonl.zst", True),
    ("rollout-2025-05-01-644b77d0-e8b0-4c9f-8b98-4376343dbf5f.json", True),
    ("rollout-x.json.zst", False),
    ("session_index.jsonl", False),
    ("notes.txt", False),
])
def test_session_file_names(name: str, ok: bool) -> None:
    assert layout.is_session_file_name(name) is ok


def test_missing_home_lists_nothing(tmp_path: Path) -> None:
    assert D.list_sessions(tmp_path / "nope", scope=D.Scope.ALL) == []


def test_store_rows_are_kept_per_file_version(home: H.FakeHome, tmp_path: Path) -> None:
    """A second listing takes its rows from the store while the file's identity (device, inode, size,
    mtime_ns) is unchanged: the proof is a file rewritten with the same size and mtime (a rewrite in place
    keeps the inode), whose stored title is still shown; a new mtime reads it again."""
    cache = tmp_path / "c"
    first = {e.session_id: e for e in D.list_sessions(home.home, store_dir=cache)}
    path = home.file_of(H.PARENT)
    st = path.stat()
    data = path.read_bytes()
    with path.open("r+b") as fh:
        fh.write(data.replace(b"fix calc.py and verify", b"FIX CALC.PY AND VERIFY"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    again = {e.session_id: e for e in D.list_sessions(home.home, store_dir=cache)}
    assert again[H.PARENT].head == first[H.PARENT].head and again[H.PARENT].tail == first[H.PARENT].tail
    assert again[H.PARENT].head.title == "fix calc.py and verify"
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    fresh = {e.session_id: e for e in D.list_sessions(home.home, store_dir=cache)}
    assert fresh[H.PARENT].head.title == "FIX CALC.PY AND VERIFY"
    assert fresh[H.CODE_MODE].head == first[H.CODE_MODE].head


def test_non_regular_files_named_like_rollouts_are_skipped(home: H.FakeHome) -> None:
    """A FIFO under $CODEX_HOME would block the head read: discovery never opens one."""
    day = home.home / "sessions" / "2026" / "11" / "30"
    fifo = day / "rollout-2026-11-30T18-00-00-01a22d9c-0000-7000-8000-000000000000.jsonl"
    os.mkfifo(fifo)
    (day / "rollout-2026-11-30T18-01-00-01a22d9c-0000-7000-8000-000000000001.jsonl").mkdir()
    paths = [p for p, _ in D.iter_session_files(home.home, D.Scope.ALL)]
    assert fifo not in paths and len(paths) == 10
    assert len(D.list_sessions(home.home, scope=D.Scope.ALL)) == 10


def test_a_fork_is_listed_under_the_session_it_was_forked_from(home: H.FakeHome) -> None:
    src = home.file_of(H.PARENT)
    lines = src.read_text().split("\n")
    meta = json.loads(lines[0])
    fork_id = "01a22d9c-9999-7000-8000-00000000f0f0"
    meta["payload"].update(id=fork_id, forked_from_id=H.CODE_MODE,
                           timestamp="2026-11-30T19:00:00.000Z")
    fork = src.parent.parent / "30" / f"rollout-2026-11-30T19-00-00-{fork_id}.jsonl"
    fork.write_text("\n".join([json.dumps(meta)] + lines[1:]))
    entries = D.list_sessions(home.home, cwd=str(home.project))
    assert ids(entries)[:2] == [H.CODE_MODE, fork_id]  # newest by itself, but shown under its origin
    assert entries[1].depth == 1 and entries[1].head.forked_from_id == H.CODE_MODE


def test_unreadable_files_are_listed_with_their_error(home: H.FakeHome) -> None:
    day = home.home / "sessions" / "2026" / "11" / "30"
    (day / "rollout-2026-11-30T20-00-00-01a22d9c-0000-7000-8000-0000000000ff.jsonl.zst").write_bytes(
        b"\x28\xb5\x2f\xfd" + b"garbage" * 10)
    (day / "rollout-2026-11-30T20-01-00-01a22d9c-0000-7000-8000-0000000000fe.jsonl").write_bytes(b"\x00\xff junk\n")
    rows = {e.session_id: e for e in D.list_sessions(home.home, scope=D.Scope.ALL)}
    assert rows["01a22d9c-0000-7000-8000-0000000000ff"].head.error.startswith("corrupt zstd")  # type: ignore[union-attr]
    assert rows["01a22d9c-0000-7000-8000-0000000000fe"].head.format is None
    assert len(rows) == 12


def test_unique_prefixes_tell_a_shown_id_apart_from_every_session_of_the_home(home: H.FakeHome) -> None:
    """A prefix is unique among every id resolve_session matches against, so one row shown
    alone (``ls --limit 1``) still gets a prefix that resolves to it."""
    universe = D.session_ids(home.home)
    assert len(universe) == 10 and H.ARCHIVED in universe
    for sid in universe:
        short = D.unique_prefixes([sid], universe)[sid]
        assert len(short) >= 8 and sid.startswith(short)
        assert D.resolve_session(short, home.home).session_id == sid
    # Shown without the archived session, PARENT alone would be 01a22d9c-2, which 01a22d9c-2200 also starts.
    assert D.unique_prefixes([H.PARENT], universe)[H.PARENT] == "01a22d9c-26"
    assert D.unique_prefixes([H.PARENT], [])[H.PARENT] == "01a22d9c"
    assert D.unique_prefixes([H.CODE_MODE], universe, min_len=13)[H.CODE_MODE] == "01a22d9c-5471"
    assert D.unique_prefixes([H.CODE_MODE.upper()], universe)[H.CODE_MODE.upper()] == "01A22D9C-5"


def _in_subprocess(code: str, home: H.FakeHome) -> dict[str, object]:
    """Run discovery code in a child with a timeout: a regression that blocks on a FIFO fails the
    test instead of hanging the suite."""
    p = subprocess.run([sys.executable, "-c", code, str(home.home)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


_LIST_AND_RESOLVE = """
import json, sys
from transcript_reader.sessions import discovery as D
from transcript_reader.providers.codex import layout
from transcript_reader.providers.head import SessionHead
home = sys.argv[1]
rows = D.list_sessions(home, scope=D.Scope.ALL, store_dir=sys.argv[1] + "/cache")
print(json.dumps({
    "count": len(rows),
    "names": D.load_session_index(home),
    "titles": {e.session_id: e.title for e in rows},
    "resolved": D.resolve_session("01a22d9c-5471", home).session_id,
    "stats": sum(e.stats is not None for e in rows),
}))
"""


@pytest.mark.parametrize("kind", ["fifo", "directory", "dangling symlink", "device"])
def test_a_non_regular_index_or_cache_is_ignored_not_opened(home: H.FakeHome, kind: str) -> None:
    """Only regular files are opened. A FIFO named session_index.jsonl blocked every listing
    (and the MCP list tool, which calls list_sessions) in open(); a directory raised IsADirectoryError.
    The session store's file gets the same treatment: not used, the files are read instead."""
    from transcript_reader.sessions.store import store_path

    index = home.home / "session_index.jsonl"
    index.unlink()
    cache = store_path(home.home / "cache", home.home)
    cache.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(index)
        os.mkfifo(cache)
    elif kind == "directory":
        index.mkdir()
        cache.mkdir()
    elif kind == "dangling symlink":
        index.symlink_to(home.home / "gone.jsonl")
        cache.symlink_to(home.home / "gone.json")
    else:
        if not Path("/dev/zero").exists():
            pytest.skip("/dev/zero is absent on this system")
        index.symlink_to("/dev/zero")  # endless: reading it would never finish
        cache.symlink_to("/dev/zero")
    got = _in_subprocess(_LIST_AND_RESOLVE, home)
    assert got["count"] == 10 and got["names"] == {} and got["stats"] == 0
    assert got["resolved"] == H.CODE_MODE
    assert got["titles"][H.CODE_MODE] == "make calc tests pass"  # type: ignore[index]


def test_open_regular_opens_only_regular_files(tmp_path: Path) -> None:
    f = tmp_path / "a.jsonl"
    f.write_bytes(b"x\n")
    fh = open_regular(f)
    assert fh is not None
    with fh:
        assert fh.read() == b"x\n"
    assert open_regular(tmp_path) is None
    assert open_regular(tmp_path / "missing") is None  # FIFOs: in a child with a timeout, above


def test_cwd_filter_sees_through_symlinks_on_either_side(home: H.FakeHome, tmp_path: Path) -> None:
    """Codex records the physical cwd; the project given through a symlink still matches, and a
    recorded cwd that is a symlink matches its target."""
    link = tmp_path / "link-to-project"
    link.symlink_to(home.project, target_is_directory=True)
    assert ids(D.list_sessions(home.home, cwd=str(link))) == H.PROJECT_LIVE_ORDER
    assert ids(D.list_sessions(home.home, cwd=str(link) + "/")) == H.PROJECT_LIVE_ORDER
    assert D.list_sessions(home.home, cwd=str(link / "src")) == []  # below the project: none recorded there
    in_link = D.CwdMatcher(str(home.project))
    assert in_link(str(link)) and in_link(str(link / "sub" / "dir"))  # recorded through the link
    assert not D.CwdMatcher(str(home.other))(str(link))


def test_cwd_matcher_never_fails_on_a_recorded_cwd_it_cannot_resolve(tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    match = D.CwdMatcher(str(tmp_path / "project"))
    for cwd in ("/no/such/machine/path", "relative/project", "bad\0path", str(loop), str(loop / "x"), "", None):
        assert match(cwd) is False
    # a cwd that does not exist here still matches what it names literally
    assert D.CwdMatcher("/no/such/machine")("/no/such/machine/path")


def test_cwd_matcher_resolves_each_distinct_recorded_cwd_once(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = os.path.realpath

    def counting(path: str, *args: object, **kwargs: object) -> str:
        calls.append(path)
        return real(path)

    match = D.CwdMatcher(str(tmp_path))
    monkeypatch.setattr(os.path, "realpath", counting)
    for _ in range(5):
        assert not match("/elsewhere/a") and not match("/elsewhere/b")
        assert match(str(tmp_path / "x"))  # matched as recorded: nothing to resolve
    assert sorted(calls) == ["/elsewhere/a", "/elsewhere/b"]


# ---- parent links that do not form a tree ------------------------------------------------------


def add_linked_subagent(home: H.FakeHome, session_id: str, parent: str | None, minute: int,
                        cwd: Path | None = None) -> Path:
    """A copy of the SUBAGENT fixture dated 2026-11-28 12:MM with its own id, its
    ``thread_spawn.parent_thread_id`` set to ``parent`` and, when given, its cwd."""
    src = home.file_of(H.SUBAGENT)
    lines = src.read_text().split("\n")
    meta = json.loads(lines[0])
    stamp = f"2026-11-28T12:{minute:02d}:00.000Z"
    meta["timestamp"] = stamp
    meta["payload"].update(id=session_id, session_id=session_id, timestamp=stamp)
    meta["payload"]["source"]["subagent"]["thread_spawn"]["parent_thread_id"] = parent
    if cwd is not None:
        meta["payload"]["cwd"] = str(cwd)
    day = home.home / "sessions" / "2026" / "11" / "28"
    day.mkdir(parents=True, exist_ok=True)
    dst = day / f"rollout-2026-11-28T12-{minute:02d}-00-{session_id}.jsonl"
    dst.write_text("\n".join([json.dumps(meta)] + lines[1:]))
    return dst


CYC_A = "01a22d9c-cccc-7000-8000-00000000000a"
CYC_B = "01a22d9c-cccc-7000-8000-00000000000b"
SELF_C = "01a22d9c-cccc-7000-8000-00000000000c"
ORPHAN_D = "01a22d9c-cccc-7000-8000-00000000000d"
OFF_CYCLE_E = "01a22d9c-cccc-7000-8000-00000000000e"
MISSING = "01a22d9c-cccc-7000-8000-0000000000ff"


def build_hostile_links(home: H.FakeHome) -> None:
    """A home of broken parent links: A -> B -> A (a cycle), C -> C (itself), D -> a session that does not exist, and
    E -> A (a child hanging off the cycle)."""
    add_linked_subagent(home, CYC_A, CYC_B, 1)
    add_linked_subagent(home, CYC_B, CYC_A, 2)
    add_linked_subagent(home, SELF_C, SELF_C, 3)
    add_linked_subagent(home, ORPHAN_D, MISSING, 4)
    add_linked_subagent(home, OFF_CYCLE_E, CYC_A, 5)


def assert_each_once_and_nested(entries: list[D.SessionEntry], expected: set[str | None]) -> None:
    """Every expected session exactly once; a row at depth d > 0 follows a row at depth d - 1 that is
    its parent (children right under their parent)."""
    assert sorted(map(str, ids(entries))) == sorted(map(str, expected))
    stack: list[D.SessionEntry] = []
    for e in entries:
        assert e.depth <= len(stack)
        del stack[e.depth:]
        if e.depth:
            assert e.parent_id == stack[-1].session_id
        stack.append(e)


def test_cycle_self_parent_and_missing_parent_are_all_listed_once(home: H.FakeHome) -> None:
    before = set(ids(D.list_sessions(home.home, cwd=str(home.project))))
    build_hostile_links(home)
    entries = D.list_sessions(home.home, cwd=str(home.project))
    assert_each_once_and_nested(entries, before | {CYC_A, CYC_B, SELF_C, ORPHAN_D, OFF_CYCLE_E})
    by_id = {e.session_id: e for e in entries}
    # Both members of the cycle are top-level (neither link is more believable than the other) ...
    assert (by_id[CYC_A].depth, by_id[CYC_A].parent_note) == (0, "cycle")
    assert (by_id[CYC_B].depth, by_id[CYC_B].parent_note) == (0, "cycle")
    # ... while a session hanging off the cycle stays under its parent.
    assert (by_id[OFF_CYCLE_E].depth, by_id[OFF_CYCLE_E].parent_note) == (1, None)
    assert ids(entries)[ids(entries).index(CYC_A) + 1] == OFF_CYCLE_E
    assert (by_id[SELF_C].depth, by_id[SELF_C].parent_note) == (0, "self")
    assert (by_id[ORPHAN_D].depth, by_id[ORPHAN_D].parent_note) == (0, "not listed")
    assert by_id[H.SUBAGENT].parent_note is None and by_id[H.SUBAGENT].depth == 1
    # They count as top-level sessions for `last~N` and --limit too (newest first: E sits under A).
    tops = [e.session_id for e in entries if e.depth == 0]
    assert [s for s in tops if s in {CYC_A, CYC_B, SELF_C, ORPHAN_D}] == [ORPHAN_D, SELF_C, CYC_B, CYC_A]
    assert D.resolve_session(f"last~{tops.index(CYC_A)}", home.home, cwd=str(home.project)).session_id == CYC_A
    limited = D.list_sessions(home.home, cwd=str(home.project), limit=len(tops))
    assert_each_once_and_nested(limited, set(ids(entries)))
    assert entry_to_dict(by_id[CYC_B])["parent_note"] == "cycle"


def test_a_sub_agent_whose_parent_is_filtered_out_is_listed_top_level(home: H.FakeHome) -> None:
    # Its parent lives in the other project: listing this project filters the parent out.
    child = "01a22d9c-cccc-7000-8000-0000000000f1"
    add_linked_subagent(home, child, H.OTHER_PROJECT, 6)
    entries = D.list_sessions(home.home, cwd=str(home.project))
    e = next(e for e in entries if e.session_id == child)
    assert (e.depth, e.parent_note) == (0, "not listed")
    # Moved into the other project, it is nested again under its (now listed) parent.
    add_linked_subagent(home, child, H.OTHER_PROJECT, 6, cwd=home.other)
    entries = D.list_sessions(home.home, cwd=str(home.other))
    assert ids(entries) == [H.OTHER_PROJECT, child] and entries[1].depth == 1
    assert entries[1].parent_note is None
    # The same holds for --since cutting the parent away: PARENT started at 17:58:57, SUBAGENT at 17:59:04.
    since = datetime(2026, 11, 29, 17, 59, 0, tzinfo=UTC)
    only_child = D.list_sessions(home.home, cwd=str(home.project), since=since)
    sub = next(e for e in only_child if e.session_id == H.SUBAGENT)
    assert H.PARENT not in ids(only_child) and sub.depth == 0 and sub.parent_note == "not listed"


def synthetic(i: int, session_id: str | None, parent: str | None) -> D.SessionEntry:
    """A listed entry with only what nesting looks at: an id, a parent link and a start time."""
    head = SessionHead(format=None, session_id=session_id, parent_session_id=parent,
                       timestamp=f"2026-01-01T00:00:{i % 60:02d}.{i // 60:03d}Z")
    return D.SessionEntry(path=f"/h/{i}.jsonl", archived=False, size=0, mtime_ns=i, head=head)


ID_POOL = [f"s{k}" for k in range(6)]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([*ID_POOL, None]), st.sampled_from([*ID_POOL, "gone", None])),
                min_size=0, max_size=12))
def test_nesting_lists_every_entry_once_whatever_the_links(links: list[tuple[str | None, str | None]]) -> None:
    """Any parent graph (cycles, self links, missing parents, two files with one id): each entry exactly
    once, each child right under a row carrying its parent's id, a top-level row says why when it names
    a parent."""
    entries = sorted((synthetic(i, sid, pid) for i, (sid, pid) in enumerate(links)),
                     key=D._sort_key, reverse=True)
    out = nest(entries, D._sort_key)
    assert sorted(e.path for e in out) == sorted(e.path for e in entries)
    stack: list[D.SessionEntry] = []
    for e in out:
        assert e.depth <= len(stack)
        del stack[e.depth:]
        if e.depth:
            assert e.parent_id == stack[-1].session_id and e.parent_note is None
        else:
            assert (e.parent_note is None) == (e.parent_id is None)
        stack.append(e)
    tops = [e.path for e in out if e.depth == 0]
    assert tops == [e.path for e in entries if e.path in tops]  # top-level rows stay newest first


def test_a_long_chain_of_sub_agents_nests_without_recursion() -> None:
    n = 3000  # deeper than Python's default recursion limit
    entries = [synthetic(i, f"s{i}", f"s{i - 1}" if i else None) for i in range(n)]
    out = nest(sorted(entries, key=D._sort_key, reverse=True), D._sort_key)
    assert [e.depth for e in out] == list(range(n))


def test_a_long_cycle_is_broken_into_top_level_rows() -> None:
    n = 3000
    entries = [synthetic(i, f"s{i}", f"s{(i + 1) % n}") for i in range(n)]
    out = nest(sorted(entries, key=D._sort_key, reverse=True), D._sort_key)
    assert len(out) == n and {(e.depth, e.parent_note) for e in out} == {(0, "cycle")}
