"""Analyses are shared by script text within a run: the reader, ``show --scripts`` and the census analyse
a script once, and the cache stays bounded."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

import exec_grammar
from exec_grammar import AnalysisCache, analyze, analyze_cached, clear_analysis_cache

ROOT = Path(__file__).resolve().parents[1]
CELLS = ROOT / "fixtures" / "transcripts" / "code_mode_records.jsonl"


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every real analysis, by script text."""
    seen: Counter[str] = Counter()
    real = exec_grammar.analyze

    def counting(script: str, parser: str = "tree-sitter") -> exec_grammar.Analysis:
        seen[script] += 1
        return real(script, parser=parser)

    monkeypatch.setattr(exec_grammar, "analyze", counting)
    clear_analysis_cache()
    yield seen
    clear_analysis_cache()


def test_the_same_text_gives_the_same_analysis(counted: Counter[str]) -> None:
    script = "await tools.exec_command({cmd: 'ls'});"
    a = analyze_cached(script)
    assert analyze_cached(script) is a and a == analyze(script)
    assert analyze_cached(script, parser="lexer").parser == "lexer"  # keyed by parser too
    assert counted[script] == 2


def test_the_cache_is_bounded_by_entries_and_characters() -> None:
    cache = AnalysisCache(max_entries=3, max_chars=400)
    scripts = [f"await tools.exec_command({{cmd: 'echo {i}'}});" for i in range(5)]
    for s in scripts:
        analysis, seconds = cache.get(s)
        assert analysis.calls[0].argument == {"cmd": s[32:-4]} and seconds >= 0
    assert len(cache) == 3 and cache.misses == 5
    cache.get(scripts[-1])
    assert cache.hits == 1
    big = "// " + "x" * 200 + "\nawait tools.exec_command({cmd: 'big'});"
    cache.get(big)  # longer than a quarter of the character bound: analysed, not kept
    assert len(cache) == 3
    small = AnalysisCache(max_entries=10, max_chars=200)
    for s in scripts:
        small.get(s)
    assert sum(map(len, scripts[-len(small):])) <= 200 and len(small) < 5
    cache.clear()
    assert len(cache) == 0


def test_show_with_scripts_analyses_each_cell_once(counted: Counter[str]) -> None:
    from transcript_reader.cli import main

    try:
        main(["show", "--no-pager", "--scripts", str(CELLS)])
    except SystemExit as e:
        assert not e.code
    assert counted and max(counted.values()) == 1


def test_a_census_analyses_a_script_repeated_across_files_once(
    tmp_path: Path, counted: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked session repeats its parent's cells: the census worker shares their analyses."""
    from transcript_reader.census import file as census

    CensusOptions, census_file = census.CensusOptions, census.census_file
    for name in ("a.jsonl", "b.jsonl"):
        shutil.copyfile(CELLS, tmp_path / name)
    figures = [census_file(str(tmp_path / n), CensusOptions(cross_check=False))[0] for n in ("a.jsonl", "b.jsonl")]
    assert counted and max(counted.values()) == 1
    assert figures[0].scalars["scripts"] == figures[1].scalars["scripts"] > 0
    assert sum(figures[0].parse_time.buckets.values()) == sum(figures[1].parse_time.buckets.values())  # all timed
