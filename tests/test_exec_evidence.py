"""``evidence: "proof"``: a script entry that is ``executed: yes`` by the proof of execution
says so, in the model and in the JSON; an entry a record settled carries no ``evidence`` key.

The proof: a call on the unconditional path of a cell whose output says it completed ran; in a session
that writes no per-call records (Codex 0.144-0.149) it is then ``yes``, its exit code unknown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from transcript_reader.api import Transcript
from transcript_reader.assembly import rules
from transcript_reader.model import Evidence, Executed, Notice, Origin, ShellCommand
from transcript_reader.projections.render import item_to_dict

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "transcripts"
REALCODEX = ROOT.parent / "shared" / "corpus" / "realcodex"


def _script_items(path: Path) -> list:
    return [i for i in Transcript(path).items() if getattr(i, "origin", None) is Origin.SCRIPT]


def test_a_proven_command_says_proof_in_the_model_and_the_json() -> None:
    items = _script_items(FIXTURES / "code_mode_no_records.jsonl")
    proven = [i for i in items if getattr(i, "evidence", None) is not None]
    assert [(i.kind.value, i.command) for i in proven] == [("shell_command", "ls")]
    ls = proven[0]
    assert ls.executed is Executed.YES and ls.evidence is Evidence.PROOF
    assert ls.exit_code is None  # the proof says it ran, not how it ended
    d = item_to_dict(ls)
    assert d["executed"] == "yes" and d["evidence"] == "proof"
    keys = list(d)
    assert keys.index("evidence") == keys.index("executed") + 1


def test_proven_patches_say_proof() -> None:
    items = _script_items(FIXTURES / "code_mode_patch_malformed.jsonl")
    patches = [i for i in items if i.kind.value == "patch"]
    assert patches and all(p.executed is Executed.YES and p.evidence is Evidence.PROOF for p in patches)


def test_entries_settled_by_records_carry_no_evidence_key() -> None:
    """With records the proof never gives ``yes`` (a missing record is a contradiction notice): no
    script entry of a recording session says ``proof``, and their JSON has no ``evidence`` key."""
    items = _script_items(FIXTURES / "code_mode_records.jsonl")
    assert any(i.executed is Executed.YES for i in items)
    for i in items:
        assert i.evidence is None
        assert "evidence" not in item_to_dict(i)


def test_a_test_run_of_a_proven_command_keeps_its_evidence() -> None:
    sc = ShellCommand(line=1, command="pytest -q", origin=Origin.SCRIPT, executed=Executed.YES,
                      evidence=Evidence.PROOF)
    runs = rules.test_run_items(sc, None)
    assert runs and all(r.evidence is Evidence.PROOF for r in runs)


def test_realcodex_0144_proven_commands_say_proof() -> None:
    """On the real 0.144 code-mode recordings (no per-command records) every script ``yes`` is the
    proof's, with no exit code."""
    root = REALCODEX / "0.144.0"
    if not root.is_dir():
        pytest.skip("../shared/corpus/realcodex/0.144.0 is absent")
    seen = 0
    for path in sorted(root.rglob("*.jsonl")):
        for i in _script_items(path):
            if i.kind.value == "shell_command" and i.executed is Executed.YES:
                seen += 1
                assert i.evidence is Evidence.PROOF and i.exit_code is None, (path.name, i.command)
    assert seen, "the 0.144 recordings hold proven commands"


def test_no_proven_call_in_the_corpus_is_contradicted_by_a_record() -> None:
    """Issue 11's acceptance: across every real recording in ``../shared/corpus`` (rollouts and exec
    streams of every release), no call the proof says ran lacks the record its cell wrote: no
    ``contradiction`` notice, and the proof does settle the 0.144 cells' commands."""
    corpus = ROOT.parent / "shared" / "corpus"
    if not corpus.is_dir():
        pytest.skip("../shared/corpus is absent")
    proven = 0
    contradicted = []
    for path in sorted(corpus.rglob("*.jsonl")):
        for i in Transcript(path).items():
            if isinstance(i, Notice) and i.category == "contradiction":
                contradicted.append((path.name, i.message))
            elif getattr(i, "evidence", None) is Evidence.PROOF:
                proven += 1
    assert not contradicted, contradicted[:3]
    assert proven >= 8, proven
