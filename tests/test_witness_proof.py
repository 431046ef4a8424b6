"""Never a wrong ``yes`` or ``no``: on every witness recording, what the reader says of a command or a
patch (read from the rollout alone) is held to what the ``codex exec --json`` stream of the same run
says really ran.

Witness recordings, old and new: the real Codex corpus (``../shared/corpus/realcodex``, when present),
this project's recorder fixtures (``fixtures/recorder``) and the hostile cells recorded for the proof
rule (``fixtures/witness``: cells that set ``Object.prototype.toJSON``, replace ``tools``… and make Codex
run another command than the one they spell, or none).

- a ``yes`` must be in the stream: each command (or patch) the reader says ran is one the stream lists,
  each stream entry backing one ``yes`` at most;
- a ``no`` must not be: a command the reader says did not run is not in the stream beyond the ``yes``
  entries of the same text (a patch likewise);
- ``unknown`` claims nothing.

The fixtures also have goldens (``NAME.golden.json`` beside each, ``pytest --update-golden`` rewrites
them): every command, patch and tool call the reader lists, with ``executed`` and ``evidence``.
"""

from __future__ import annotations

import json
import posixpath
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import transcript_reader
from exec_grammar.proof import REALM_GLOBALS
from transcript_reader.model import Evidence, Executed, PatchItem, ShellCommand, ToolCallItem

ROOT = Path(__file__).resolve().parents[1]
WITNESS = ROOT / "fixtures" / "witness"
RECORDER = ROOT / "fixtures" / "recorder"
CORPUS = ROOT.parent / "shared" / "corpus" / "realcodex"


@dataclass(frozen=True)
class Recording:
    rollout: Path
    streams: tuple[Path, ...]

    @property
    def id(self) -> str:
        return f"{self.rollout.parent.parent.name}/{self.rollout.parent.name}/{self.rollout.name.split('.')[0]}"


def recordings(root: Path) -> list[Recording]:
    """Each rollout with the exec stream(s) of the same run, when the stream says anything."""
    found = []
    for rollout in sorted(root.glob("*/*.rollout.json*")):
        name = rollout.name.split(".rollout.", 1)[0]
        streams = tuple(sorted(rollout.parent.glob(f"{name}.exec*.jsonl"), key=lambda p: (".turn" in p.name, p.name)))
        if streams and any(s.stat().st_size for s in streams):
            found.append(Recording(rollout, streams))
    return found


FIXTURE_RECORDINGS = recordings(WITNESS) + recordings(RECORDER)
CORPUS_RECORDINGS = recordings(CORPUS) if CORPUS.is_dir() else []


def _relative(path: str, cwd: str | None) -> str:
    norm = posixpath.normpath(path)
    if cwd and norm.startswith(posixpath.normpath(cwd) + "/"):
        return norm[len(posixpath.normpath(cwd)) + 1:]
    return norm


def _claims(path: Path, cwd: str | None) -> tuple[list[tuple[str, str, Executed]], str | None]:
    """``(what, text, executed)`` of every command and patch the reader lists in one file."""
    result = transcript_reader.read(path, projection="timeline")
    cwd = (result.info.cwd if result.info else None) or cwd
    out = []
    for item in result.items:
        if isinstance(item, ShellCommand):
            out.append(("command", item.command.strip(), item.executed))
        elif isinstance(item, PatchItem):
            out.append(("patch", ", ".join(sorted(f"{f.op} {_relative(f.path, cwd)}" for f in item.files)),
                        item.executed))
    return out, cwd


def wrong_answers(rollout: list[tuple[str, str, Executed]], ran: list[tuple[str, str, Executed]]) -> list[str]:
    """The ``yes`` the stream does not back and the ``no`` it contradicts."""
    stream = Counter((what, text) for what, text, ex in ran if ex is Executed.YES)
    yes = Counter((what, text) for what, text, ex in rollout if ex is Executed.YES)
    wrong = [f"wrong yes: {what} {text!r}" for (what, text), n in yes.items() if n > stream[(what, text)]]
    wrong += [f"wrong no: {what} {text!r} ran" for what, text, ex in rollout
              if ex is Executed.NO and stream[(what, text)] > yes[(what, text)]]
    return wrong


def _check(rec: Recording) -> None:
    claims, cwd = _claims(rec.rollout, None)
    ran = [c for s in rec.streams for c in _claims(s, cwd)[0]]
    assert all(ex is Executed.YES for _, _, ex in ran), "a stream reports only what ran"
    assert wrong_answers(claims, ran) == [], rec.id


@pytest.mark.parametrize("rec", FIXTURE_RECORDINGS, ids=[r.id for r in FIXTURE_RECORDINGS])
def test_no_wrong_yes_or_no_on_the_fixture_recordings(rec: Recording) -> None:
    _check(rec)


@pytest.mark.parametrize(
    "rec",
    CORPUS_RECORDINGS or [pytest.param(None, marks=pytest.mark.skip(reason=f"real corpus not present at {CORPUS}"))],
    ids=[r.id for r in CORPUS_RECORDINGS] or ["no-corpus"],
)
def test_no_wrong_yes_or_no_on_the_real_corpus(rec: Recording) -> None:
    _check(rec)


def test_the_witnesses_are_there() -> None:
    ids = {r.id for r in FIXTURE_RECORDINGS}
    for version in ("0.144.0", "0.171.0"):
        for name in ("hostile_cells", "unsupported_exec_cell", "realm_globals"):
            assert f"witness/{version}/{name}" in ids


@pytest.mark.parametrize(
    ("claims", "ran", "wrong"),
    [
        ([("command", "ls", Executed.YES)], [("command", "ls", Executed.YES)], []),
        ([("command", "echo benign", Executed.YES)], [("command", "echo hijacked", Executed.YES)],
         ["wrong yes: command 'echo benign'"]),
        ([("command", "ls", Executed.YES)] * 2, [("command", "ls", Executed.YES)], ["wrong yes: command 'ls'"]),
        ([("command", "echo benign", Executed.NO)], [("command", "echo hijacked", Executed.YES)], []),
        ([("command", "ls", Executed.NO)], [("command", "ls", Executed.YES)], ["wrong no: command 'ls' ran"]),
        ([("command", "ls", Executed.YES), ("command", "ls", Executed.NO)], [("command", "ls", Executed.YES)], []),
        ([("command", "ls", Executed.UNKNOWN)], [], []),
        ([("patch", "update a.py", Executed.YES)], [], ["wrong yes: patch 'update a.py'"]),
    ],
)
def test_the_comparison_can_fail(claims: list[Any], ran: list[Any], wrong: list[str]) -> None:
    assert wrong_answers(claims, ran) == wrong


# ----------------------------------------------------------------------------------------------------------
# What the hostile recordings pin


def _items(version: str, name: str) -> list[Any]:
    return list(transcript_reader.read(WITNESS / version / f"{name}.rollout.jsonl", projection="timeline").items)


def _stream_commands(version: str, name: str) -> list[str]:
    return [i.command for i in transcript_reader.read(WITNESS / version / f"{name}.exec.jsonl").items
            if isinstance(i, ShellCommand)]


def test_a_hook_withholds_the_proof_where_codex_writes_no_records() -> None:
    """Codex 0.144 records nothing of what a cell ran: the proof was the only evidence, and it said
    ``echo benign-1`` ran (proof) while Codex ran ``echo hijacked-1``. Now only the cells whose every
    token is on the allow-list keep their proof, and each of those really ran."""
    ran = _stream_commands("0.144.0", "hostile_cells")
    assert "echo hijacked-1" in ran and "echo benign-1" not in ran  # the witness: the hook won
    commands = [i for i in _items("0.144.0", "hostile_cells") if isinstance(i, ShellCommand)]
    proven = [i.command for i in commands if i.evidence is Evidence.PROOF]
    assert proven == ["echo benign-2", "echo benign-23"]
    assert all(i.executed is Executed.YES for i in commands if i.evidence is Evidence.PROOF)
    assert set(proven) <= set(ran)
    others = [i for i in commands if i.evidence is None]
    assert others and all(i.executed is Executed.UNKNOWN for i in others)


def test_with_records_the_hijacked_command_is_what_ran() -> None:
    """Codex 0.171 records each command a cell ran: the one the cell spells is ``no``, the one Codex
    ran is ``yes`` from its record."""
    items = [i for i in _items("0.171.0", "hostile_cells") if isinstance(i, ShellCommand)]
    by_command = {i.command: i.executed for i in items}
    assert by_command["echo benign-1"] is Executed.NO
    assert by_command["echo hijacked-1"] is Executed.YES
    assert all(i.evidence is None for i in items)


@pytest.mark.parametrize("version", ["0.144.0", "0.171.0"])
def test_an_exec_cell_codex_did_not_support_ran_nothing(version: str) -> None:
    """A model without code mode: Codex answered ``unsupported custom tool call: exec``."""
    items = _items(version, "unsupported_exec_cell")
    cell = next(i for i in items if isinstance(i, ToolCallItem) and i.name == "exec")
    assert cell.executed is Executed.NO and cell.success is False
    commands = [i for i in items if isinstance(i, ShellCommand)]
    assert [(c.command, c.executed) for c in commands] == [("echo never-ran", Executed.NO)]
    assert _stream_commands(version, "unsupported_exec_cell") == []


@pytest.mark.parametrize("version", ["0.144.0", "0.171.0"])
def test_every_global_of_the_real_realm_is_held_to_the_rule(version: str) -> None:
    """The realm's global names, as a cell of the real Codex listed them (``globalThis`` and its
    prototype chain): each is in ``REALM_GLOBALS``, so a bare name outside it cannot be one."""
    cell = next(i for i in _items(version, "realm_globals") if isinstance(i, ToolCallItem) and i.name == "exec")
    assert cell.result is not None
    listed = json.loads(cell.result[cell.result.index("[["):].strip())
    names = {n for level in listed for n in level}
    assert len(names) > 80 and "tools" in names and "constructor" in names
    assert names <= REALM_GLOBALS, sorted(names - REALM_GLOBALS)


# ----------------------------------------------------------------------------------------------------------
# Goldens


def _golden(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in transcript_reader.read(path, projection="timeline").items:
        if isinstance(item, ShellCommand):
            out.append({"kind": "shell_command", "command": item.command, "executed": item.executed.value,
                        "evidence": item.evidence.value if item.evidence else None,
                        "whole_script": item.whole_script})
        elif isinstance(item, PatchItem):
            out.append({"kind": "patch", "files": [f.path for f in item.files], "executed": item.executed.value,
                        "evidence": item.evidence.value if item.evidence else None})
        elif isinstance(item, ToolCallItem):
            out.append({"kind": "tool_call", "name": item.name, "executed": item.executed.value,
                        "success": item.success})
    return out


GOLDEN_ROLLOUTS = sorted(WITNESS.glob("*/*.rollout.jsonl"))


@pytest.mark.parametrize("rollout", GOLDEN_ROLLOUTS, ids=[f"{p.parent.name}/{p.name}" for p in GOLDEN_ROLLOUTS])
def test_witness_golden(rollout: Path, update_golden: bool) -> None:
    got = _golden(rollout)
    golden = rollout.with_name(rollout.name.replace(".rollout.jsonl", ".golden.json"))
    if update_golden or not golden.exists():
        golden.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if not update_golden:
            pytest.fail(f"{golden.name} did not exist; written now, review it and re-run")
    assert got == json.loads(golden.read_text(encoding="utf-8"))
