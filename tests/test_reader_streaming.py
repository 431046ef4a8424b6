"""Streaming: memory stays bounded by what a projection keeps, not by the file.

A rollout of ~24 MB is built in a temporary directory by repeating the turns of the project's own
fixtures (call ids renamed per copy); ``inspect`` and ``read(tail=100)`` then run in fresh interpreters
and their peak RSS, minus that of an interpreter that only imported the same modules, must stay far below
the file's size. (The 1 GB figure of the issue is measured by ``python -m corpus_tools.bench_reader
--size-mb 1024``; a test that writes 1 GB would be too slow for CI.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from corpus_tools.bench_reader import FALLBACK_SOURCES, build
from tests.conftest import ROOT

SIZE_MB = 24
#: Peak RSS growth allowed over a bare interpreter with the modules imported: a third of the file
#: (measured: about 3 MB).
BUDGET_MB = SIZE_MB / 3

PRELUDE = ("import resource, transcript_reader.api, transcript_reader.assembly, transcript_reader.testruns, "
           "exec_grammar, orjson\n")


def _peak_mb(code: str) -> float:
    full = PRELUDE + code + "\nprint(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    out = subprocess.run([sys.executable, "-c", full], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=600)
    return int(out.stdout.split()[-1]) / 1024


@pytest.fixture(scope="module")
def big_rollout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("big") / "big.rollout.jsonl"
    n = build(path, SIZE_MB, FALLBACK_SOURCES)
    assert path.stat().st_size >= SIZE_MB * 1024 * 1024
    return path, n


@pytest.mark.slow
@pytest.mark.parametrize("call", [
    "from transcript_reader import inspect; i = inspect({p!r}); assert i.lines.lines == {n}",
    "from transcript_reader import read; r = read({p!r}, tail=100); assert len(r.items) == 100",
], ids=["inspect", "read_tail_100"])
def test_peak_memory_is_bounded(big_rollout: tuple[Path, int], call: str) -> None:
    path, n = big_rollout
    baseline = _peak_mb("from transcript_reader.providers.codex.lines import iter_decoded")
    peak = _peak_mb(call.format(p=str(path), n=n))
    assert peak - baseline < BUDGET_MB, f"peak {peak:.1f} MB vs baseline {baseline:.1f} MB for a {SIZE_MB} MB file"
