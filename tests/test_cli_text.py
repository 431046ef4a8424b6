"""Plain text, as scripts and pipes get it: no wrapping and no padding in a pipe, a closed
pipe is a normal end (exit 0), an ASCII-only output encoding falls back to ASCII glyphs, ``NO_COLOR``,
invalid arguments are usage errors (exit 2) before any file is read, and a session that cannot be
read is reported by ``ls`` and ``search``, never dropped. Each through a real process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import sessions_home as H
from tests.test_cli_sessions import run

ROOT = Path(__file__).resolve().parents[1]
LONG = "python3 -m pytest " + " ".join(f"tests/test_module_number_{i}.py" for i in range(12))


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def test_a_pipe_gets_whole_lines_never_wrapped_or_padded(home: H.FakeHome, tmp_path: Path) -> None:
    f = H.edited_example(tmp_path, "python3 -c 'import calc; print(calc.add(2,3))'", LONG)
    for args in (["show", str(f)], ["show", str(f), "--commands"], ["read", str(f)]):
        out = run(home, *args, env={"COLUMNS": "40"}).stdout
        assert any(LONG in line for line in out.split("\n")), (args, out)  # on one line, whole
        assert all(line == line.rstrip() for line in out.split("\n"))
        assert "\x1b[" not in out


def test_census_lines_are_not_padded(home: H.FakeHome) -> None:
    out = run(home, "census", str(home.home)).stdout
    assert out.strip() and all(line == line.rstrip() for line in out.split("\n"))


def test_a_closed_pipe_is_a_normal_end(home: H.FakeHome, tmp_path: Path) -> None:
    """``show | head -1``: the reader went away; exit 0, nothing on stderr."""
    big = "\\n".join(f"output line {i}" for i in range(30_000))
    f = H.edited_example(tmp_path, "calc.py\\nhello.txt\\n", big + "\\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(tmp_path), "CODEX_HOME": str(home.home)}
    for args in (["show", str(f), "--full"], ["read", str(f), "--projection", "raw_outputs", "--max-chars-per-item",
                                             "100000"], ["export", str(f), "--full"]):
        p = subprocess.Popen([sys.executable, "-m", "transcript_reader", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env)
        assert p.stdout is not None and p.stderr is not None
        first = p.stdout.readline()
        p.stdout.close()
        err = p.stderr.read().decode()
        assert p.wait(timeout=60) == 0, (args, err)
        assert first and err == "", (args, err)


@pytest.mark.parametrize("args", [["show", "last"], ["show", "last", "--diff", "--scripts"], ["export", "last"],
                                  ["ls"], ["search", "calc.py"], ["read", "last"]])
def test_an_ascii_only_encoding_gets_ascii_glyphs(home: H.FakeHome, args: list[str]) -> None:
    p = run(home, *args, env={"PYTHONIOENCODING": "ascii"})
    assert p.stdout.isascii() and p.stdout.strip(), p.stdout
    if args[0] == "show":
        assert "x exit 1" in p.stdout and "ok exit 0" in p.stdout and "Turn 1 - " in p.stdout


def test_no_color_in_a_pipe_and_on_request(home: H.FakeHome) -> None:
    for env in ({"NO_COLOR": "1"}, {}):
        assert "\x1b" not in run(home, "show", "last", env=env).stdout


@pytest.mark.parametrize("args,message", [
    (["show", "last", "--commands", "--final"], "choose one of"),
    (["search", "foo", "--kind", "shellcommand"], "unknown kind 'shellcommand'"),
    (["search", "--regex", "(unclosed"], "invalid regex"),
    (["ls", "--since", "soonish"], "Invalid value for '--since'"),
    (["search", "x", "--until", "later"], "Invalid value for '--until'"),
    (["read", "last", "--projection", "nope"], "Invalid value for '--projection'"),
])
def test_invalid_arguments_are_one_usage_error_before_any_file_is_read(home: H.FakeHome, args: list[str],
                                                                     message: str) -> None:
    p = run(home, *args, check=False, env={"CODEX_HOME": str(home.home.parent / "no-such-home")})
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert message in p.stderr and p.stderr.count("Error") == 1 and p.stdout == ""


def test_a_mistyped_codex_home_says_where_it_looked(home: H.FakeHome) -> None:
    typo = str(home.home) + "x"
    for args in (["ls"], ["show", "deadbeef"], ["search", "calc"]):
        p = run(home, *args, check=False, env={"CODEX_HOME": typo})
        assert f"no Codex home at {typo} (CODEX_HOME={typo})" in p.stdout + p.stderr, (args, p.stdout, p.stderr)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root and setpriv to read as another user (root reads every file)")
def test_an_unreadable_session_is_listed_and_counted() -> None:
    """A permission-denied file was missing from ``ls`` and from ``search``'s counts with no word. The
    home is built in a directory of its own that another user can reach (pytest keeps its own temporary
    root private, and may make it so again while a test runs)."""
    import tempfile

    shared = Path(tempfile.mkdtemp(prefix="tr-unreadable-", dir="/tmp"))
    try:
        _unreadable_check(shared)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _unreadable_check(base: Path) -> None:
    base.chmod(0o755)
    home = H.build_home(base)
    for d in base.rglob("*"):
        d.chmod(0o755 if d.is_dir() else 0o644)
    victim = home.file_of(H.PYTEST)
    victim.chmod(0)
    env = {"PATH": os.environ["PATH"], "HOME": str(base), "CODEX_HOME": str(home.home), "TZ": "UTC",
           "XDG_CACHE_HOME": str(base / "cache-nobody"), "PWD": str(home.project), "PYTHONPATH": str(ROOT)}

    def as_nobody(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-m",
                               "transcript_reader", *args], cwd=home.project, env=env, capture_output=True,
                              text=True, timeout=120)

    ls = as_nobody("ls")
    assert ls.returncode == 0, ls.stderr
    assert "[unreadable: Permission denied]" in ls.stdout and victim.name in ls.stdout, (ls.stdout, ls.stderr)
    assert "1 session file(s) could not be read" in ls.stdout, (ls.stdout, ls.stderr)
    rows = json.loads(as_nobody("ls", "--json").stdout)["sessions"]
    assert any(r["path"] == str(victim) and r["error"] for r in rows)
    search = as_nobody("search", "calc.py")
    assert search.returncode == 0, search.stderr
    assert "could not be read" in search.stderr and "1 unreadable" in search.stderr
