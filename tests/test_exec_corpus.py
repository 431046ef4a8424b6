"""Every real exec script in ../shared/corpus is analysed, and its calls are pinned.

Sources: ``public/exec-scripts/*.js`` and the ``exec`` custom_tool_call inputs of our own Codex
recordings (``realcodex/*/code_mode_*.rollout.jsonl``). ``fixtures/js/real/corpus_expected.json`` holds
the expected call names per script (by sha256): from node+acorn where it parses the script, otherwise
the lexer's recovery, reviewed. A script that is not in that file fails the test: pin it first.
A representative handful of these scripts is copied into ``fixtures/js/real`` for fresh clones.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from corpus_tools.exec_oracle import real_scripts
from exec_grammar import analyze

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "corpus"
EXPECTED = json.loads((ROOT / "fixtures" / "js" / "real" / "corpus_expected.json").read_text())


SCRIPTS = list(real_scripts())  # one reader of the corpus, shared with the V8 comparison


def test_corpus_present() -> None:
    if not SCRIPTS:
        pytest.skip(f"{SHARED} is absent (fresh clone): fixtures/js/real covers a handful of these scripts")
    assert len(SCRIPTS) >= 26 + 30


@pytest.mark.parametrize("where,script", SCRIPTS, ids=[w for w, _ in SCRIPTS])
def test_real_script(where: str, script: str) -> None:
    key = hashlib.sha256(script.encode("utf-8")).hexdigest()
    assert key in EXPECTED, f"{where}: new script, pin its calls in corpus_expected.json"
    analysis = analyze(script)
    assert [c.name for c in analysis.calls] == EXPECTED[key]["calls"]
    assert all(e.executed == "unknown" for e in analysis.entries)
    if EXPECTED[key]["origin"] == "acorn":
        assert analysis.parse_error is None
        assert [c.name for c in analyze(script, parser="lexer").calls] == EXPECTED[key]["calls"]
    else:
        assert analysis.parse_error is not None
