"""Conformance of a recording: the reader's reading of the rollout must match the ``codex exec --json``
stream of the same run. Both files are read with the library (no private parsing); what is compared:

- commands that ran, with their exit codes, in order (rollout: shell commands with ``executed == yes``;
  stream: its command items);
- changed files, patch by patch in order (paths made relative to the session's cwd: the stream writes
  absolute ones; within one patch the order is not meaningful: the stream lists a patch's files in
  hash-map order), so each patch is compared as a sorted group;
- the final answer's text (of the last turn).

A resumed session has one stream per ``codex exec`` run (``NAME.exec.jsonl``, ``NAME.exec.turn2.jsonl``…);
they are read in order and put end to end.

A difference means the reader (or Codex's format) drifted: that is the point of recording a new release.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Conformance:
    name: str
    rollout: str
    stream: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commands: list[tuple[str, int | None]] = field(default_factory=list)
    files: list[tuple[str, ...]] = field(default_factory=list)
    final: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "problems": self.problems, "notes": self.notes,
                "commands": self.commands,
                "files": self.files, "final": self.final}


def _rel(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when under it; ``./x`` and ``a/./x`` (0.20-0.40 streams) normalised."""
    path = os.path.normpath(path)
    if cwd:
        base = os.path.normpath(cwd)
        if path.startswith(base + "/"):
            return path[len(base) + 1:]
    return path


Reading = tuple[list[tuple[str, int | None]], list[tuple[str, ...]], str | None, list[tuple[str, int | None, bool]]]


def _reading(path: Path, cwd: str | None) -> Reading:
    """Commands that ran (with exit codes), changed files per patch, the final answer, and the commands
    a static reading names without proof that they ran (script entries with ``executed == unknown``)."""
    from transcript_reader import iter_items

    commands: list[tuple[str, int | None]] = []
    maybe: list[tuple[str, int | None, bool]] = []  # (command, exit code, proven to have run)
    files: list[tuple[str, ...]] = []
    final: str | None = None
    for item in iter_items(path):
        kind = str(item.kind)
        executed = str(getattr(item, "executed", ""))
        if kind == "shell_command" and executed == "yes":
            commands.append((item.command, item.exit_code))  # type: ignore[union-attr]
            maybe.append((item.command, item.exit_code, True))  # type: ignore[union-attr]
        elif kind == "shell_command" and executed == "unknown" and not item.whole_script:  # type: ignore[union-attr]
            maybe.append((item.command, None, False))  # type: ignore[union-attr]
        elif kind == "patch" and executed == "yes" and item.success is not False:  # type: ignore[union-attr]
            files.append(tuple(sorted(_rel(f.path, cwd) for f in item.files)))  # type: ignore[union-attr]
        elif kind == "assistant_message" and item.final:  # type: ignore[union-attr]
            final = item.text  # type: ignore[union-attr]
    return commands, files, final, maybe


def _only_unproven_missing(maybe: list[tuple[str, int | None, bool]], ran: list[tuple[str, int | None]]) -> bool:
    """The rollout names the same commands in the same order; those it proves ran agree on exit codes
    where it knows one (a command proven by the static rule, with no record, has none), the others it
    could not prove (no records)."""
    return len(maybe) == len(ran) and all(
        m[0] == r[0] and (not m[2] or m[1] is None or m[1] == r[1]) for m, r in zip(maybe, ran, strict=True))


def check(out: Path, name: str) -> Conformance:
    """Compare ``NAME.rollout.jsonl`` with ``NAME.exec.jsonl`` in ``out``."""
    rollout = next((p for p in (out / f"{name}.rollout.jsonl", out / f"{name}.rollout.json") if p.exists()), None)
    stream = out / f"{name}.exec.jsonl"
    result = Conformance(name, str(rollout), str(stream))
    if rollout is None:
        result.problems.append("no rollout was written")
        return result
    if not stream.exists() or stream.stat().st_size == 0:
        result.problems.append("no exec --json stream")
        return result
    from transcript_reader import inspect

    # the 0.50+ exec stream does not say where it ran, the rollout does; 0.20/0.29 rollouts do not, the
    # protocol stream of the same run does
    cwd = inspect(rollout).cwd or inspect(stream).cwd
    r_cmds, r_files, r_final, r_maybe = _reading(rollout, cwd)
    s_cmds: list[tuple[str, int | None]] = []
    s_files: list[tuple[str, ...]] = []
    s_final: str | None = None
    for part in [stream, *sorted(out.glob(f"{name}.exec.turn*.jsonl"))]:
        p_cmds, p_files, p_final, _ = _reading(part, cwd)
        s_cmds += p_cmds
        s_files += p_files
        s_final = p_final if p_final is not None else s_final
    result.commands, result.files, result.final = r_cmds, r_files, r_final
    if r_cmds != s_cmds and _only_unproven_missing(r_maybe, s_cmds):
        # Before 0.150 a rollout does not record what a code-mode cell ran: the reader names the
        # commands (executed unknown) and the stream shows they ran. Not a drift; said as a note.
        unproven = len(r_maybe) - len(r_cmds)
        no_code = sum(1 for m in r_maybe if m[2] and m[1] is None)
        if unproven:
            result.notes.append(f"{unproven} commands are only statically known in the rollout "
                                "(executed unknown: no records of what the cells ran)")
        if no_code:
            result.notes.append(f"{no_code} commands are proven to have run (unconditional calls of completed "
                                "cells) but the rollout records no exit code for them")
    elif r_cmds != s_cmds:
        result.problems.append(f"commands differ: rollout {r_cmds} vs stream {s_cmds}")
    if r_files != s_files:
        result.problems.append(f"changed files differ: rollout {r_files} vs stream {s_files}")
    if (r_final or "").strip() != (s_final or "").strip():
        result.problems.append(f"final answers differ: rollout {r_final!r} vs stream {s_final!r}")
    return result


def check_dir(out: Path) -> list[Conformance]:
    names = sorted({p.name.split(".")[0] for p in out.glob("*.exec.jsonl")})
    return [check(out, n) for n in names]
