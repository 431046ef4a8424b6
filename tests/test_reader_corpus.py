"""The reader against real recordings (``../shared/corpus``; skipped with a reason when absent).

- every transcript in the corpus reads, its line accounting holds, and no line of a real recording is
  unreadable except a genuinely cut last line;
- the independent witness: for each realcodex run recorded both as a rollout and as a ``codex exec
  --json`` stream, the shell commands (command, exit code) and changed files the reader finds in the
  rollout equal those the exec stream reports, in order.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from exec_grammar.shell import unwrap_command
from tests.conftest import CORPUS
from transcript_reader.api import Transcript
from transcript_reader.model import Executed, Origin, PatchItem, ShellCommand

if not CORPUS.is_dir():
    pytest.skip(f"shared corpus not found at {CORPUS} (CI on a clean clone has no ../shared)",
                allow_module_level=True)

#: Not transcripts: the scripted mock model's scenarios and the recorder's side files.
NOT_TRANSCRIPTS = ("scenarios-used", "exec-scripts")
#: Public files that are deliberately not Codex-shaped (MANIFEST.tsv says "schema-drift tests").
NOT_CODEX = ("schema_drift",)


def corpus_files() -> list[Path]:
    out = []
    for p in sorted(CORPUS.rglob("*")):
        if not p.is_file() or any(part in NOT_TRANSCRIPTS for part in p.parts):
            continue
        if p.name.endswith((".jsonl", ".json", ".jsonl.zst")):
            out.append(p)
    return out


FILES = corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(CORPUS)) for p in FILES])
def test_corpus_file_reads_and_accounts_for_every_line(path: Path) -> None:
    t = Transcript(path)
    items = list(t.items())
    a = t.info().lines
    assert a.lines == a.decoded + a.known_noise + a.unknown + a.unreadable + a.blank
    assert sum(n for _, n in a.unknown_types) == a.unknown
    assert sum(n for _, n in a.noise_types) == a.known_noise
    lines = [i.line for i in items]
    assert lines == sorted(lines), "timeline out of source order"
    unreadable = [i for i in items if i.kind.value == "unreadable"]
    if any(s in path.name for s in NOT_CODEX):
        return
    assert all(i.line == a.cut_last_line for i in unreadable), [(i.line, i.reason) for i in unreadable]  # type: ignore[union-attr]


def _norm_path(path: str, cwd: str) -> str:
    p = path.replace("/./", "/")
    prefix = cwd.rstrip("/") + "/"
    return p[len(prefix):] if p.startswith(prefix) else p


def _facts(paths: list[Path]) -> tuple[list[tuple[str, int | None, bool]], list[list[str]]]:
    """(commands as (command, exit code, exit code recorded?), changed files per patch) in order."""
    commands: list[tuple[str, int | None, bool]] = []
    files: list[list[str]] = []
    for path in paths:
        t = Transcript(path)
        for it in t.items():
            if isinstance(it, ShellCommand) and it.executed is not Executed.NO and not it.whole_script:
                # an exit code is missing only where the rollout has no evidence for it (below)
                # (a script ``yes`` without an exit code is proven, not recorded: the proof of execution)
                recorded = not (it.origin is Origin.SCRIPT and (it.executed is Executed.UNKNOWN or it.exit_code is None))
                commands.append((unwrap_command(it.command), it.exit_code, recorded))
            elif isinstance(it, PatchItem) and it.executed is Executed.YES:
                files.append(sorted(_norm_path(f.path, "/home/user/project") for f in it.files))
    return commands, files


PAIRS = [p for p in sorted((CORPUS / "realcodex").glob("*/*.rollout.jsonl"))
         if (e := p.with_name(p.name.replace(".rollout.jsonl", ".exec.jsonl"))).exists() and e.stat().st_size]


@pytest.mark.parametrize("rollout", PAIRS, ids=[str(p.relative_to(CORPUS / "realcodex")) for p in PAIRS])
def test_witness_rollout_agrees_with_exec_stream(rollout: Path) -> None:
    """Two independent records of one run must tell the same story.

    The only excused difference is a true format difference, understood: before 0.150 a rollout does
    not record what a code-mode cell ran (no CommandExecution records, codex-formats.md §9), so those
    commands come from the script alone with ``executed: unknown`` and no exit code; their command
    text must still agree, in order.
    """
    stream = [rollout.with_name(rollout.name.replace(".rollout.jsonl", ".exec.jsonl"))]
    turn2 = rollout.with_name(rollout.name.replace(".rollout.jsonl", ".exec.turn2.jsonl"))
    if turn2.exists():  # `codex exec resume --last` printed the second turn to its own stream
        stream.append(turn2)
    r_cmds, r_files = _facts([rollout])
    e_cmds, e_files = _facts(stream)
    assert [c for c, _, _ in r_cmds] == [c for c, _, _ in e_cmds]
    for (cmd, r_code, recorded), (_, e_code, _) in zip(r_cmds, e_cmds, strict=True):
        if recorded:
            assert r_code == e_code, cmd
        else:
            version = tuple(int(x) for x in rollout.parent.name.split(".")[:2])
            assert version < (0, 150) and r_code is None, f"{cmd}: exit code missing in a rollout with records"
    assert r_files == e_files


def test_witness_covers_every_era() -> None:
    eras = {p.parent.name for p in PAIRS}
    assert len(PAIRS) >= 50 and {"0.20.0", "0.40.0", "0.50.0", "0.150.0", "0.171.0"} <= eras, sorted(eras)
    assert os.path.isdir(CORPUS / "realcodex")
