"""``search QUERY`` through the optional index, run as a user runs it (a real process over the fake
home of ``tests/sessions_home``): a miss the index proves for every session file ends without listing
the sessions, and anything the index does not hold as it is now takes the ordinary path, with the same
hits as the scan."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests import sessions_home as H
from tests.test_cli_sessions import run


@pytest.fixture
def home(tmp_path: Path) -> H.FakeHome:
    return H.build_home(tmp_path)


def _hits(out: str) -> list[tuple[str, int]]:
    return [(d["path"], d["line"]) for d in map(json.loads, out.splitlines()) if d.get("ok")]


def test_an_index_miss_ends_without_listing_and_a_changed_file_is_searched(home: H.FakeHome) -> None:
    every = ("--all", "--all-projects", "--archived")
    build = run(home, "search", "--index", "zqxvbnmkmiss", *every)
    assert "index:" in build.stderr and "were not listed" not in build.stderr  # the first run lists (and builds)
    miss = run(home, "search", "zqxvbnmkmiss", *every)
    assert miss.stdout == ""
    assert "0 hits (index: none of the" in miss.stderr and "were not listed" in miss.stderr
    assert run(home, "search", "zqxvbnmkmiss", "--json", *every).stdout == ""
    # a hit: the index path gives the scan's hits
    scan = _hits(run(home, "search", "calc", "--json", "--no-index", *every).stdout)
    assert scan and _hits(run(home, "search", "calc", "--json", *every).stdout) == scan
    # a session file written since the index was built is not proven a miss: it is searched
    f = home.file_of(H.PARENT)
    text = f.read_text(encoding="utf-8")
    assert "fix calc.py and verify" in text
    f.write_text(text.replace("fix calc.py and verify", "fix zqxvbnmkmiss and verify"), encoding="utf-8")
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    again = run(home, "search", "zqxvbnmkmiss", "--json", *every)
    assert [p for p, _ in _hits(again.stdout)] == [str(f)], again.stderr
