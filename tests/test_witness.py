"""Independent witness: for every real recording that has both a rollout and a
``codex exec --json`` stream of the same run, what the reader says ran, read from the rollout, equals
what the exec stream reports, in order.

The two files are written by different code in Codex (the session recorder vs. the exec event
processor) and read by different decoders here, so agreement is evidence that neither invents, drops
nor reorders a command or a file change. Compared per entry:

- shell commands: the command (as a person would type it, ``bash -lc`` unwrapped) and the exit code;
- patches: the set of (path relative to the session cwd, operation), and success when both know it.

How ``executed`` is held to account:

- ``yes``: the stream lists the same entry at that place, with the same exit code;
- ``no`` (a rejected patch, a branch a cell never took): left out of the rollout side; the stream must not
  list it either, which the ordered comparison shows;
- ``unknown`` (e.g. 0.144 code-mode cells, written before Codex recorded what a cell ran): it claims
  nothing, so it may match the next stream entry (then with no exit code invented by the reader) or be
  absent from the stream (a branch a pre-0.150 cell never took). A patch whose verification failure the
  cell's ``Script error`` names is ``no`` even without records (0.144 ``code_mode_multi_cell``, pinned
  below);
- from 0.150 on, Codex records what each cell ran, so nothing compared may stay ``unknown``.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path

import pytest

import transcript_reader
from transcript_reader.model import Executed, PatchItem, ShellCommand

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "realcodex"


@dataclass(frozen=True)
class Pair:
    version: str
    scenario: str
    rollout: Path
    streams: tuple[Path, ...]  # NAME.exec.jsonl, then NAME.exec.turn2.jsonl (a resumed second turn)

    @property
    def id(self) -> str:
        return f"{self.version}/{self.scenario}"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def find_pairs(root: Path) -> list[Pair]:
    pairs = []
    for rollout in sorted(root.glob("*/*.rollout.json*")):
        scenario = rollout.name.split(".rollout.", 1)[0]
        streams = sorted(rollout.parent.glob(f"{scenario}.exec*.jsonl"), key=lambda p: (".turn" in p.name, p.name))
        if streams:
            pairs.append(Pair(rollout.parent.name, scenario, rollout, tuple(streams)))
    return sorted(pairs, key=lambda p: (_version_key(p.version), p.scenario))


def _relative(path: str, cwd: str | None) -> str:
    norm = posixpath.normpath(path)
    if cwd and posixpath.isabs(norm):
        base = posixpath.normpath(cwd)
        if norm.startswith(base + "/"):
            return norm[len(base) + 1:]
    return norm


@dataclass(frozen=True)
class Fact:
    """One thing that ran, in the terms both files can state."""

    what: str  # "command" or "patch"
    text: str  # the command, or the sorted "op path" list of a patch
    exit_code: int | None = None
    success: bool | None = None
    executed: Executed = Executed.YES
    line: int = 0

    def describe(self) -> str:
        extra = f" exit={self.exit_code}" if self.what == "command" else f" success={self.success}"
        return f"{self.what} {self.text!r}{extra} [{self.executed.value}, line {self.line}]"


def facts(path: Path, cwd: str | None) -> tuple[list[Fact], str | None]:
    """Commands and patches the reader lists as run (or possibly run) in one file, and its cwd."""
    result = transcript_reader.read(path, projection="timeline")
    cwd = (result.info.cwd if result.info else None) or cwd
    out: list[Fact] = []
    for item in result.items:
        if isinstance(item, ShellCommand) and item.executed is not Executed.NO:
            out.append(Fact("command", item.command, exit_code=item.exit_code, executed=item.executed,
                            line=item.line))
        elif isinstance(item, PatchItem) and item.executed is not Executed.NO:
            files = sorted(f"{f.op} {_relative(f.path, cwd)}" for f in item.files)
            out.append(Fact("patch", ", ".join(files), success=item.success, executed=item.executed,
                            line=item.line))
    return out, cwd


def agree(from_rollout: Fact, from_stream: Fact) -> bool:
    if (from_rollout.what, from_rollout.text) != (from_stream.what, from_stream.text):
        return False
    if from_rollout.what == "command":
        if from_rollout.executed is Executed.UNKNOWN or from_rollout.exit_code is None:
            # the reader never invents an exit code; a ``yes`` without one is a proven call of a cell
            # whose session records nothing (0.144: exec_grammar's proof of execution)
            return from_rollout.exit_code is None
        return from_rollout.exit_code == from_stream.exit_code
    if from_rollout.success is not None and from_stream.success is not None:
        return from_rollout.success == from_stream.success
    return True


def align(rollout: list[Fact], stream: list[Fact]) -> bool:
    """The stream is the rollout's sequence, in order, less some ``unknown`` entries that did not run."""
    return skipped(rollout, stream) is not None


def skipped(rollout: list[Fact], stream: list[Fact]) -> list[Fact] | None:
    """The ``unknown`` rollout facts the stream does not list, or None when the two disagree."""
    i = 0
    left_out: list[Fact] = []
    for fact in rollout:
        if i < len(stream) and agree(fact, stream[i]):
            i += 1
        elif fact.executed is not Executed.UNKNOWN:
            return None
        else:
            left_out.append(fact)
    return left_out if i == len(stream) else None


ALL_PAIRS = find_pairs(CORPUS) if CORPUS.is_dir() else []
#: Pairs with something to compare: the TypeScript CLI (0.1.x) printed nothing for `codex exec --json`.
PAIRS = [p for p in ALL_PAIRS if any(s.stat().st_size for s in p.streams)]


def test_the_corpus_has_pairs() -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not present at {CORPUS}")
    assert len(PAIRS) >= 100, f"expected the whole realcodex corpus, found {len(PAIRS)} pairs"
    silent = sorted({p.version for p in ALL_PAIRS if p not in PAIRS})
    assert all(v.startswith("0.1.") for v in silent), f"only the TypeScript CLI prints no stream: {silent}"


@pytest.mark.parametrize(
    "pair",
    PAIRS or [pytest.param(None, marks=pytest.mark.skip(reason=f"real corpus not present at {CORPUS}"))],
    ids=[p.id for p in PAIRS] or ["no-corpus"],
)
def test_rollout_agrees_with_exec_stream(pair: Pair) -> None:
    rollout_facts, cwd = facts(pair.rollout, None)
    stream_facts: list[Fact] = []
    for stream in pair.streams:
        found, _ = facts(stream, cwd)
        stream_facts.extend(found)

    assert align(rollout_facts, stream_facts), (
        f"{pair.id}: rollout and exec stream disagree\n  rollout:\n"
        + "\n".join(f"    {f.describe()}" for f in rollout_facts)
        + "\n  exec stream:\n"
        + "\n".join(f"    {f.describe()}" for f in stream_facts)
    )
    assert all(f.executed is Executed.YES for f in stream_facts), "a stream reports only what ran"
    if _version_key(pair.version) >= (0, 150):
        unproven = [f.describe() for f in rollout_facts if f.executed is not Executed.YES]
        assert not unproven, f"{pair.id}: Codex recorded these runs, yet the reader left them unknown: {unproven}"


# The comparison itself, on made-up facts: it must be able to fail.
_LS = Fact("command", "ls", exit_code=0)
_PATCH = Fact("patch", "update calc.py", success=True)


@pytest.mark.parametrize(
    ("rollout", "stream", "expected"),
    [
        ([_LS, _PATCH], [_LS, _PATCH], True),
        ([_PATCH, _LS], [_LS, _PATCH], False),  # order matters
        ([_LS], [_LS, _PATCH], False),  # the stream ran something the reader does not list
        ([_LS, _PATCH], [_LS], False),  # the reader says a patch ran that the stream never saw
        ([Fact("command", "ls", exit_code=1)], [_LS], False),  # exit codes differ
        ([Fact("command", "ls", executed=Executed.UNKNOWN)], [_LS], True),
        ([Fact("command", "ls", exit_code=0, executed=Executed.UNKNOWN)], [_LS], False),  # invented exit code
        ([_LS, Fact("patch", "update gone.py", executed=Executed.UNKNOWN)], [_LS], True),  # unknown, absent
        ([Fact("patch", "update calc.py", success=False)], [_PATCH], False),
        ([Fact("patch", "update calc.py")], [_PATCH], True),  # success unknown on one side
    ],
)
def test_align(rollout: list[Fact], stream: list[Fact], expected: bool) -> None:
    assert align(rollout, stream) is expected


def test_the_witness_compares_real_work() -> None:
    """Not vacuous: the multi-step scenario's streams carry commands and patches in every version."""
    multi = [p for p in PAIRS if p.scenario == "multi_step"]
    if not multi:
        pytest.skip(f"real corpus not present at {CORPUS}")
    for pair in multi:
        stream_facts = [f for s in pair.streams for f in facts(s, "/home/user/project")[0]]
        kinds = sorted({f.what for f in stream_facts})
        assert kinds == ["command", "patch"] and len(stream_facts) >= 3, pair.id


def test_a_patch_a_cell_rejected_is_no_before_records() -> None:
    """0.144 writes no records for a cell, yet its ``Script error`` names the file whose apply_patch
    verification failed: that patch is ``no`` (left out of the comparison), so nothing the reader lists
    for this run is missing from the stream."""
    pair = next((p for p in PAIRS if p.id == "0.144.0/code_mode_multi_cell"), None)
    if pair is None:
        pytest.skip(f"real corpus not present at {CORPUS}")
    rejected = [i for i in transcript_reader.read(pair.rollout, projection="file_changes").items
                if isinstance(i, PatchItem) and any(f.path.endswith("does_not_exist.py") for f in i.files)]
    assert [(i.executed, i.success) for i in rejected] == [(Executed.NO, False)]
    rollout_facts, cwd = facts(pair.rollout, None)
    stream_facts = [f for s in pair.streams for f in facts(s, cwd)[0]]
    assert skipped(rollout_facts, stream_facts) == []
