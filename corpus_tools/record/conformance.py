"""Conformance of a recording: the reader's reading of the rollout must match the ``codex exec --json``
stream of the same run. Both files are read with the library (no private parsing); what is compared:

- commands that ran, with their exit codes, in order (rollout: shell commands with ``executed == yes``;
  stream: its command items);
- changed files, in order (paths made relative to the session's cwd: the stream writes absolute ones);
- the final answer's text.

A difference means the reader (or Codex's format) drifted: that is the point of recording a new release.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Conformance:
    name: str
    rollout: str
    stream: str
    problems: list[str] = field(default_factory=list)
    commands: list[tuple[str, int | None]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    final: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "problems": self.problems, "commands": self.commands,
                "files": self.files, "final": self.final}


def _rel(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1:]
    return path


def _reading(path: Path) -> tuple[list[tuple[str, int | None]], list[str], str | None]:
    from transcript_reader import inspect, iter_items

    cwd = inspect(path).cwd
    commands: list[tuple[str, int | None]] = []
    files: list[str] = []
    final: str | None = None
    for item in iter_items(path):
        kind = str(item.kind)
        executed = str(getattr(item, "executed", ""))
        if kind == "shell_command" and executed == "yes":
            commands.append((item.command, item.exit_code))  # type: ignore[union-attr]
        elif kind == "patch" and executed == "yes" and item.success is not False:  # type: ignore[union-attr]
            files.extend(_rel(f.path, cwd) for f in item.files)  # type: ignore[union-attr]
        elif kind == "assistant_message" and item.final:  # type: ignore[union-attr]
            final = item.text  # type: ignore[union-attr]
    return commands, files, final


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
    r_cmds, r_files, r_final = _reading(rollout)
    s_cmds, s_files, s_final = _reading(stream)
    result.commands, result.files, result.final = r_cmds, r_files, r_final
    if r_cmds != s_cmds:
        result.problems.append(f"commands differ: rollout {r_cmds} vs stream {s_cmds}")
    if r_files != s_files:
        result.problems.append(f"changed files differ: rollout {r_files} vs stream {s_files}")
    if (r_final or "").strip() != (s_final or "").strip():
        result.problems.append(f"final answers differ: rollout {r_final!r} vs stream {s_final!r}")
    return result


def check_dir(out: Path) -> list[Conformance]:
    names = sorted({p.name.split(".")[0] for p in out.glob("*.exec.jsonl")})
    return [check(out, n) for n in names]
