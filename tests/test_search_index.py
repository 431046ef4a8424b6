"""The optional search index (``transcript_reader.search.index``) returns exactly the scan's hits on the
fixtures home, for every word the sessions hold and for misses, and a file changed after indexing is
scanned instead of trusted."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from transcript_reader import api
from transcript_reader.projections import search_text
from transcript_reader.search import SearchStats, search_sessions
from transcript_reader.search.index import SearchIndex, query_trigrams

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dst = tmp_path_factory.mktemp("idx") / "codex_home"
    shutil.copytree(ROOT / "fixtures" / "codex_home", dst)
    return dst


def _sessions(home: Path) -> list[str]:
    return sorted(str(p) for p in home.rglob("rollout-*") if p.is_file())


def _hits(paths: list[str], query: str, index: SearchIndex | None, kinds: tuple[str, ...] = ()) -> tuple[list, str]:
    st = SearchStats("scan")
    got = [(r.path, r.total, [(m.item.line, m.item.kind, m.excerpt) for m in r.matches])
           for r in search_sessions(paths, query, index=index, stats=st, kinds=kinds)]
    return got, st.method


def _queries(paths: list[str]) -> list[str]:
    words: set[str] = set()
    for p in paths:
        for it in api.Transcript(p).items():
            words |= {w for w in re.split(r"\W+", search_text(it)) if len(w) >= 3}
    rng = random.Random(5)
    picked = rng.sample(sorted(words), min(150, len(words)))
    return picked + ["calc.py", "pytest -q", "PYTEST", "Script completed", "zz-not-anywhere", "exit=0", "ab", "&&"]


def test_index_returns_the_scan_hits(home: Path, tmp_path: Path) -> None:
    paths = _sessions(home)
    with SearchIndex(tmp_path / "index.sqlite") as index:
        assert index.update(paths) == len(paths)
        assert index.update(paths) == 0  # nothing changed: nothing read again
        used = set()
        for q in _queries(paths):
            for kinds in ((), ("shell_command", "notice")):
                want, _ = _hits(paths, q, None, kinds)
                got, method = _hits(paths, q, index, kinds)
                assert got == want, (q, kinds)
                used.add(method)
        assert "index" in used


def test_a_file_changed_after_indexing_is_scanned(home: Path, tmp_path: Path) -> None:
    paths = _sessions(home)
    with SearchIndex(tmp_path / "index.sqlite") as index:
        index.update(paths)
        target = next(p for p in paths if p.endswith(".jsonl"))
        with open(target, "a", encoding="utf-8") as fh:
            # a prompt as Codex writes it, with its event copy (without one, a user message in a session
            # that writes event copies is harness context, not a prompt)
            fh.write('{"timestamp":"2026-12-01T00:00:00.000Z","type":"response_item","payload":{"type":"message",'
                     '"role":"user","content":[{"type":"input_text","text":"a brand new quokka prompt"}]}}\n'
                     '{"timestamp":"2026-12-01T00:00:00.000Z","type":"event_msg","payload":{"type":"user_message",'
                     '"message":"a brand new quokka prompt"}}\n')
        assert index.stale(paths) == [target]
        st = SearchStats("scan")
        got = list(search_sessions(paths, "quokka", index=index, stats=st))
        assert [r.path for r in got] == [target] and st.method == "index" and st.notes
        index.update(paths)
        assert index.stale(paths) == []
        assert [r.path for r in search_sessions(paths, "quokka", index=index)] == [target]


def test_query_trigrams() -> None:
    assert query_trigrams("ab") == [] and query_trigrams("&& ..") == []
    assert query_trigrams("Calc.py") == ["cal", "alc"]
