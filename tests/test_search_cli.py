"""``transcript-reader search`` through a real process: its numeric options are counts a usage error
bounds (exit 2 before any file is read, never an ``OverflowError`` deep in a read), and the lines it
writes itself (notes, skipped sessions, the closing count) show a path's control characters, never
obey them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import sessions_home as H

ROOT = Path(__file__).resolve().parents[1]
#: An OSC that sets the window title, a BEL and a screen clear: what a hostile path may hold.
HOSTILE = "\x1b]0;PWNED\x07\x1b[2J"


def _run(args: list[str], home: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CODEX_HOME": str(home), "CLAUDE_CONFIG_DIR": str(tmp_path / "no-claude"),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "HOME": str(tmp_path / "userhome"), "TZ": "UTC",
           "PYTHONPATH": str(ROOT), "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    return subprocess.run([sys.executable, "-m", "transcript_reader", "search", *args], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(("option", "bad", "good"), [
    ("--context", ["-1", "99999999999999999999", "2147483648"], "2147483647"),
    ("--max-matches", ["0", "-3", "99999999999999999999"], "2147483647"),
    ("--workers", ["0", "257", "99999999999999999999"], "2"),
])
def test_a_numeric_option_out_of_range_is_a_usage_error(tmp_path: Path, option: str, bad: list[str],
                                                         good: str) -> None:
    h = H.build_home(tmp_path)
    path = str(h.file_of(H.PYTEST))
    for value in bad:
        for args in (["calc", "--all-projects"], [path, "calc"]):
            r = _run([*args, option, value], h.home, tmp_path)
            assert r.returncode == 2, (option, value, r.stderr)
            assert "Traceback" not in r.stderr and f"Invalid value for '{option}'" in r.stderr
    r = _run(["pytest", "--all-projects", option, good], h.home, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "pytest" in r.stdout.lower()


def test_no_home_names_the_path_it_looked_in_without_obeying_its_controls(tmp_path: Path) -> None:
    r = _run(["calc", "--all-projects"], tmp_path / f"nohome{HOSTILE}", tmp_path)
    assert "No sessions to search" in r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert "\\x1b]0;PWNED\\x07" in r.stderr


def test_a_skipped_session_and_the_closing_line_show_a_hostile_path_made_visible(tmp_path: Path) -> None:
    h = H.build_home(tmp_path / f"h{HOSTILE}")
    bad = h.file_of(H.PYTEST).with_name(f"rollout-2026-11-26T10-00-00-{H.PYTEST[:-4]}beef.jsonl")
    bad.write_bytes(b"\xff\xfe not a transcript\n")
    r = _run(["calc", "--all-projects"], h.home, tmp_path)
    assert r.returncode in (0, 1), r.stderr
    assert "\x1b" not in r.stderr and "\x07" not in r.stderr
    assert "session(s)" in r.stderr.splitlines()[-1]
    skipped = [ln for ln in r.stderr.splitlines() if ln.startswith("skipped ")]
    assert skipped and all("\\x1b]0;PWNED\\x07" in ln for ln in skipped)
