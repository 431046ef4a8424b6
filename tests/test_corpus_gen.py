"""The generated corpus: deterministic from its seed, as big as the benchmarks need by default, made of
lines and scripts the reader and the analyzer accept; plus the census progress bar's fields."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

from rich.console import Console

from corpus_tools.gen_corpus import gen_script, generate
from transcript_reader.census.figures import Figures
from transcript_reader.census.file import BatchResult
from transcript_reader.present.census_progress import CensusProgress


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(root).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", rollouts=5, seed=4, cells=6, scripts_dir=tmp_path / "sa")
    b = generate(tmp_path / "b", rollouts=5, seed=4, cells=6)
    c = generate(tmp_path / "c", rollouts=5, seed=5, cells=6)
    assert a == b and _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c") and a != c
    assert a["exec_cells"] == len(list((tmp_path / "sa").glob("*.js")))


def test_default_size_meets_the_benchmark_floor(tmp_path: Path) -> None:
    m = generate(tmp_path, scripts_dir=None)
    assert m["rollouts"] >= 500 and m["exec_cells"] >= 20_000
    assert len(list((tmp_path / "sessions").rglob("rollout-*.jsonl"))) == m["rollouts"]
    assert json.loads((tmp_path / "corpus_manifest.json").read_text()) == m


def test_scripts_parse_unless_corrupted_on_purpose() -> None:
    import random

    from exec_grammar import analyze

    rng = random.Random(12)
    seen_corrupt = 0
    for _ in range(400):
        script, plan, corrupted = gen_script(rng)
        a = analyze(script)
        if not corrupted:
            assert a.parse_error is None, script
            names = [c.name for c in a.calls]
            assert names.count("exec_command") == plan.exec_command_calls, script
        seen_corrupt += corrupted
    assert seen_corrupt <= 10


def test_progress_shows_files_mb_scripts_rate_and_eta() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=200, color_system=None)
    with CensusProgress(10, 5_000_000, console=console) as progress:
        progress.advance(BatchResult(Figures(), files=4, bytes=2_000_000, scripts=123))
    text = buf.getvalue()
    assert "4/10" in text and "files" in text and "2.0/5.0 MB" in text and "123 scripts" in text
    assert "files/s" in text and "ETA" in text
