"""Agreement with node+acorn, the reference parser of the origin project.

A corpus of 2,000 scripts is generated with the benchmark kit (the benchmark itself uses 20,000; see
``python -m corpus_tools.bench_exec``) and parsed by ``bench_acorn.js``. On every script acorn parses,
the call names and their order must equal acorn's for the default analyzer (and spans too), and for the
lexer-only mode on at least 99% of them; the parse verdict (accepted or not) must match acorn's.
Skipped with the reason when node or acorn is missing (``.ci/run`` installs acorn when npm exists).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from corpus_tools.bench_exec import find_node_modules, prepare_kit
from exec_grammar import analyze

SCRIPTS = 2000
SEED = 7


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], dict[str, Any]]:
    if shutil.which("node") is None:
        pytest.skip("node is not installed: the acorn comparison needs node+acorn")
    node_modules = find_node_modules()
    if node_modules is None:
        pytest.skip(
            "acorn is not installed (npm install --prefix bench-work/node acorn@8.19.0 acorn-walk@8.3.5)"
        )
    work = prepare_kit(tmp_path_factory.mktemp("acorn"))
    subprocess.run(
        [sys.executable, "gen_corpus.py", str(SCRIPTS), str(SEED)], cwd=work, check=True, capture_output=True
    )
    subprocess.run(
        ["node", "bench_acorn.js", "--dir", "corpus", "--passes", "1", "--out", "acorn.json"],
        cwd=work,
        env=dict(os.environ, NODE_PATH=str(node_modules)),
        check=True,
        capture_output=True,
    )
    results = json.loads((work / "acorn.json").read_text())["results"]
    return sorted((work / "corpus").glob("*.js")), results


def test_default_analyzer_equals_acorn(corpus: tuple[list[Path], dict[str, Any]]) -> None:
    files, acorn = corpus
    parsed = 0
    for f in files:
        ref = acorn[f.name]
        a = analyze(f.read_text(encoding="utf-8"))
        assert (a.parse_error is None) == ref["ok"], (
            f"{f.name}: verdict differs from acorn's ({ref.get('error')})"
        )
        if not ref["ok"]:
            continue
        parsed += 1
        assert [(c.name, c.start.offset, c.end.offset) for c in a.calls] == [
            (c[0], c[1], c[2]) for c in ref["calls"]
        ], f.name
    assert parsed >= 0.98 * SCRIPTS


def test_lexer_mode_agrees_on_99_percent(corpus: tuple[list[Path], dict[str, Any]]) -> None:
    files, acorn = corpus
    agree = total = 0
    for f in files:
        ref = acorn[f.name]
        if not ref["ok"]:
            continue
        total += 1
        names = [c.name for c in analyze(f.read_text(encoding="utf-8"), parser="lexer").calls]
        agree += names == [c[0] for c in ref["calls"]]
    assert agree >= 0.99 * total, f"lexer agrees on {agree}/{total}"
