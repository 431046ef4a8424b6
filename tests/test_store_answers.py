"""Commands that answer from the session store when it holds a file as it is now (``inspect``, the
census) give exactly what a fresh read of the files gives; a build cut short by Ctrl-C keeps what it
wrote, and the next run completes it."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests import sessions_home as H
from transcript_reader.cli import cli
from transcript_reader.sessions.store import open_store, refresh, store_path

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> H.FakeHome:
    h = H.build_home(tmp_path)
    monkeypatch.setenv("CODEX_HOME", str(h.home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
    return h


def _cache(h: H.FakeHome) -> Path:
    return h.home.parent / "cache" / "transcript-reader"


def _run(*args: str) -> str:
    r = CliRunner().invoke(cli, list(args))
    assert r.exit_code == 0, r.output
    return r.output


def _sessions(h: H.FakeHome) -> list[Path]:
    return sorted(p for p in h.home.rglob("rollout-*") if p.is_file())


def _fresh_inspect(monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    """``inspect`` with the store out of the way (no store for this cache directory)."""
    with monkeypatch.context() as m:
        m.setenv("XDG_CACHE_HOME", "/nonexistent/no-store-here")
        return _run("inspect", *args)


def test_inspect_answers_from_the_store_exactly_as_a_fresh_read(home: H.FakeHome,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _run("ls", "--all", "--all-projects", "--json")  # builds the store
    files = _sessions(home)
    fresh = {p: (_fresh_inspect(monkeypatch, str(p), "--json"), _fresh_inspect(monkeypatch, str(p)))
             for p in files}
    import transcript_reader.api as api

    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("inspect read the file though the store holds it")

    answered = 0
    with monkeypatch.context() as m:
        m.setattr(api, "inspect", refuse)
        for p in files:
            try:
                got = (_run("inspect", str(p), "--json"), _run("inspect", str(p)))
            except AssertionError:
                continue  # a file the store does not answer for (one of a thread's files): read, see below
            assert got == fresh[p], p
            answered += 1
    assert answered >= len(files) - 2  # every file that reads alone came from the store
    for p in files:  # and with the file read where the store does not answer, still the fresh read's
        assert (_run("inspect", str(p), "--json"), _run("inspect", str(p))) == fresh[p]
    # by session id too (the path is then the home's)
    sid_out = json.loads(_run("inspect", H.PYTEST, "--json"))
    assert sid_out == json.loads(_fresh_inspect(monkeypatch, H.PYTEST, "--json"))


def test_inspect_of_a_changed_file_reads_the_file(home: H.FakeHome, monkeypatch: pytest.MonkeyPatch) -> None:
    _run("ls", "--all", "--all-projects", "--json")
    p = home.file_of(H.PYTEST)
    before = json.loads(_run("inspect", str(p), "--json"))
    lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
    with p.open("a", encoding="utf-8") as fh:
        fh.write(lines[-1])  # one more line: the store's row is no longer this file's
    after = json.loads(_run("inspect", str(p), "--json"))
    assert after == json.loads(_fresh_inspect(monkeypatch, str(p), "--json"))
    assert after["info"]["lines"] != before["info"]["lines"]


def _census(*args: str) -> dict:  # type: ignore[type-arg]
    out = json.loads(_run("census", "--json", "--workers", "1", "--no-progress", *args))
    figures = out["figures"]
    figures.pop("parse_time")  # a timing, not a count
    return figures  # type: ignore[no-any-return]


def test_census_figures_from_the_store_equal_figures_from_the_files(home: H.FakeHome,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from_files = _census("--no-store")
    first = _census()  # builds the store, counts every file, keeps each file's figures
    store = open_store(home.home, cache_dir=_cache(home))
    con = store.reader()
    assert con is not None
    kept = con.execute("SELECT count(*) FROM census").fetchone()[0]
    store.close()
    assert kept == from_files["transcripts"] > 0
    from transcript_reader.census import file as census_file

    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("the census read a file the store holds")

    with monkeypatch.context() as m:
        m.setattr(census_file, "census_file", refuse)
        warm = _census()  # every figure from the store
    assert from_files == first == warm
    # a file that changes is counted again from the file; the others still come from the store
    p = home.file_of(H.PYTEST)
    with p.open("a", encoding="utf-8") as fh:
        fh.write(p.read_text(encoding="utf-8").splitlines(keepends=True)[-1])
    assert _census() == _census("--no-store") != from_files


def _env(h: H.FakeHome) -> dict[str, str]:
    return {**os.environ, "CODEX_HOME": str(h.home), "XDG_CACHE_HOME": str(h.home.parent / "cache"),
            "CLAUDE_CONFIG_DIR": str(h.home.parent / "no-claude"), "PYTHONPATH": str(ROOT)}


def _stored_count(path: Path) -> int:
    try:
        con = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        try:
            return int(con.execute("SELECT count(*) FROM sessions").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_ctrl_c_during_a_build_keeps_a_usable_store_the_next_run_completes(home: H.FakeHome) -> None:
    # more files, so the build is still running when Ctrl-C comes
    for k, p in enumerate(sorted(home.home.rglob("rollout-*.jsonl"))):
        for j in range(8):
            (p.parent / p.name.replace("rollout-", f"rollout-{k}{j}", 1)).write_bytes(p.read_bytes())
    path = store_path(_cache(home), home.home)
    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", "ls", "--all", "--all-projects", "--json"],
                            env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and _stored_count(path) < 3 and proc.poll() is None:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C sends (the terminal sends it to the whole group)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode in (130, 0), err  # 0: the build ended just before the signal came
    assert "Traceback" not in err
    store = open_store(home.home, cache_dir=_cache(home))
    partial = len(dict(store.current()))
    store.close()
    assert partial >= 3
    stats = refresh(store)
    assert stats.read == stats.files - partial  # the next run reads only what was missing
    listed = json.loads(subprocess.run([sys.executable, "-m", "transcript_reader", "ls", "--all", "--all-projects",
                                        "--json"], env=_env(home), capture_output=True, text=True, cwd=ROOT,
                                       timeout=300).stdout)
    assert listed["count"] > 0 and all(s["stats"] is not None for s in listed["sessions"] if s["format"])


def test_a_first_build_of_a_big_home_says_so_once(home: H.FakeHome, monkeypatch: pytest.MonkeyPatch) -> None:
    from transcript_reader.sessions import store as S

    monkeypatch.setattr(S, "BIG_FILES", 5)  # the fixture home is small; a real one is counted in hundreds
    notes: list[str] = []
    store = open_store(home.home, cache_dir=_cache(home), notice=notes.append)
    refresh(store)
    assert len(notes) == 1 and notes[0].startswith("indexing ") and "into the session store" in notes[0]
    p = home.file_of(H.PYTEST)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    refresh(store)  # not a first build: no note
    assert len(notes) == 1


def test_a_build_shows_a_progress_bar_on_a_terminal_only(home: H.FakeHome) -> None:
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 400, 0, 0))  # room for the whole line
    try:
        proc = subprocess.run([sys.executable, "-m", "transcript_reader", "store", "refresh"], env=_env(home),
                              stdout=subprocess.PIPE, stderr=follower, cwd=ROOT, timeout=300)
        os.close(follower)
        follower = -1
        drawn = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0
    assert b"indexing " + str(home.home).encode() in drawn and b"\x1b[2K" in drawn and b"/10" in drawn
    # not a terminal: no bar, the one summary line only
    p = home.file_of(H.PYTEST)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("\n")
    piped = subprocess.run([sys.executable, "-m", "transcript_reader", "store", "refresh"], env=_env(home),
                           capture_output=True, cwd=ROOT, timeout=300)
    assert b"\x1b" not in piped.stderr and b"1 read" in piped.stdout
