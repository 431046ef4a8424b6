"""What every rendering of a timeline shares (terminal, Markdown, HTML): how items group into turns,
how a command's status, ``executed`` and origin are worded, how outputs fold, how figures read.

Wording lives here once so the three renderings tell the same story: ``executed`` is always shown as
"ran" / "did not run" / "unknown" (never hidden: a wrong "ran" is worse than "unknown"), and the
origin says where a command came from: a direct call, a code cell's script, a record Codex wrote.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from transcript_reader.model import (
    AnyItem,
    Executed,
    Format,
    Origin,
    PatchItem,
    RawOutput,
    SessionInfo,
    ShellCommand,
    TestResult,
    TestRun,
    ToolCallItem,
    UserMessage,
)

#: Lines of a command's output shown before folding (``--full`` shows all).
FOLD_LINES = 6

#: A user prompt, answer or reasoning text longer than this is folded in ``show`` (QA F27: a pasted 20 MB
#: log printed 250,000 lines and rich needed ~20x the text in memory); ``--full`` shows all.
MESSAGE_FOLD_LINES = 60
MESSAGE_FOLD_CHARS = 8_000

EXECUTED_LABEL = {Executed.YES: "ran", Executed.NO: "did not run", Executed.UNKNOWN: "unknown"}
ORIGIN_LABEL = {Origin.DIRECT: "call", Origin.SCRIPT: "code cell", Origin.RECORD: "record", Origin.STREAM: "stream"}

#: --commands etc. map onto the reader's projections (issue #3).
FILTER_PROJECTIONS = {
    "commands": "shell_commands",
    "changes": "file_changes",
    "tests": "tests",
    "conversation": "conversation",
    "final": "final",
}

#: Tools whose input is a code-mode JavaScript cell.
SCRIPT_TOOLS = frozenset({"exec", "code_mode"})


@dataclass(frozen=True, slots=True)
class Options:
    """Rendering choices shared by show and export."""

    full: bool = False
    diff: bool = False
    scripts: bool = False
    fold_lines: int = FOLD_LINES
    message_fold_lines: int = MESSAGE_FOLD_LINES
    message_fold_chars: int = MESSAGE_FOLD_CHARS
    session_cwd: str | None = None


@dataclass(slots=True)
class Turn:
    """A user prompt and what followed it (``prompt`` is None for items before the first prompt)."""

    index: int
    prompt: UserMessage | None
    items: list[AnyItem] = field(default_factory=list)


def group_turns(items: Iterable[AnyItem]) -> list[Turn]:
    """Sections for the reader: a new turn at each user message (the only thing a person sees as a
    turn boundary); raw outputs are not listed (they are attached to their command by call_id)."""
    turns: list[Turn] = []
    current: Turn | None = None
    prompts = 0
    for item in items:
        if isinstance(item, RawOutput):
            continue
        if isinstance(item, UserMessage):
            # numbered by prompts: items before the first one (a fork's notice) do not make it Turn 2
            prompts += 1
            current = Turn(index=prompts, prompt=item)
            turns.append(current)
            continue
        if current is None:
            current = Turn(index=0, prompt=None)
            turns.append(current)
        current.items.append(item)
    return turns


def raw_outputs(items: Iterable[AnyItem]) -> dict[str, str]:
    """Full outputs by call_id (present when the reader was asked to include ``raw_output``)."""
    return {i.call_id: i.text for i in items if isinstance(i, RawOutput) and i.call_id}


def fold(text: str, lines: int, full: bool) -> tuple[str, int]:
    """``(shown text, lines cut)``: the first ``lines`` lines unless ``full``."""
    rows = text.rstrip("\n").split("\n") if text else []
    if full or len(rows) <= lines:
        return "\n".join(rows), 0
    return "\n".join(rows[:lines]), len(rows) - lines


@dataclass(frozen=True, slots=True)
class Folded:
    """The head of a long text and what was left out of it."""

    shown: str
    cut_lines: int = 0
    cut_chars: int = 0

    def note(self) -> str | None:
        """``… 249,940 more lines, 19,995,120 chars (--full)``, or None when nothing was cut."""
        if not self.cut_chars:
            return None
        lines = f"{self.cut_lines:,} more line{'s' if self.cut_lines != 1 else ''}, " if self.cut_lines else ""
        return f"… {lines}{self.cut_chars:,} more chars (--full)"


def fold_message(text: str, lines: int, chars: int, full: bool) -> Folded:
    """The first ``lines`` lines of ``text``, at most ``chars`` characters, unless ``full``. Walks
    only the shown head (no split of the whole text): a huge prompt costs no copy of itself."""
    if full:
        return Folded(text)
    end = -1
    for _ in range(lines):
        end = text.find("\n", end + 1, chars + 1)
        if end < 0:
            break
    if end < 0:  # fewer lines than the limit within the first ``chars`` characters
        end = min(len(text), chars)
    shown = text[:end].rstrip()
    rest_start = len(shown)
    if rest_start >= len(text.rstrip()):
        return Folded(text)
    cut_lines = text.count("\n", end, len(text.rstrip()))  # whole lines after the cut (the cut line's rest is chars)
    return Folded(shown, cut_lines=cut_lines, cut_chars=len(text) - rest_start)


def short_cwd(cwd: str | None, session_cwd: str | None) -> str | None:
    """A command's cwd relative to the session's when below it (``.`` when equal)."""
    if not cwd:
        return None
    if session_cwd:
        c, s = os.path.normpath(cwd), os.path.normpath(session_cwd)
        if c == s:
            return "."
        if c.startswith(s.rstrip(os.sep) + os.sep):
            return os.path.relpath(c, s)
    return cwd


def agent_version(info: SessionInfo, codex: str = "codex") -> str | None:
    """``codex 0.171.0`` / ``claude 2.1.332``: which agent wrote the session, at which version."""
    if not info.version:
        return None
    agent = ("Claude Code" if codex[0].isupper() else "claude") if info.format is Format.CLAUDE else codex
    return f"{agent} {info.version}"


def duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms" if seconds >= 0.001 else "0s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    m, s = divmod(int(round(seconds)), 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    return f"{h}h{m:02d}m"


def count(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def status_word(item: ShellCommand) -> tuple[str, str]:
    """``(word, tone)`` for a command; tone is ok / bad / warn / dim."""
    if item.executed is Executed.NO:
        return ("not run", "dim")
    if item.exit_code is None:
        if item.session_id:
            return ("running", "warn")
        return ("exit ?", "warn")
    return (f"exit {item.exit_code}", "ok" if item.exit_code == 0 else "bad")


def provenance(executed: Executed, origin: Origin) -> str:
    """``ran · code cell``: whether it ran, and where the entry came from."""
    return f"{EXECUTED_LABEL[executed]} · {ORIGIN_LABEL[origin]}"


def patch_summary(item: PatchItem) -> list[tuple[str, str, int, int]]:
    """``(op letter, path, added, removed)`` per file."""
    out = []
    for f in item.files:
        letter = {"add": "A", "update": "M", "delete": "D"}.get(f.op, "?")
        path = f"{f.path} → {f.move_to}" if f.move_to else f.path
        out.append((letter, path, f.added, f.removed))
    return out


def test_summary(item: TestRun) -> str:
    parts = []
    if item.passed is not None:
        parts.append(f"{item.passed} passed")
    if item.failed is not None:
        parts.append(f"{item.failed} failed")
    if item.skipped:
        parts.append(f"{item.skipped} skipped")
    return ", ".join(parts) if parts else "no counts in output"


def is_script_cell(item: AnyItem) -> bool:
    return isinstance(item, ToolCallItem) and item.name in SCRIPT_TOOLS


@dataclass(frozen=True, slots=True)
class Totals:
    turns: int
    commands: int
    commands_failed: int
    files_changed: int
    tests_passed: int
    tests_failed: int


def totals(items: Sequence[AnyItem], info: SessionInfo | None) -> Totals:
    cmds = [i for i in items if isinstance(i, ShellCommand)]
    files = {f.move_to or f.path for i in items if isinstance(i, PatchItem) and i.success is not False
             for f in i.files}
    tests = [i for i in items if isinstance(i, TestRun)]
    turns = info.turns if info is not None and info.turns else sum(1 for i in items if isinstance(i, UserMessage))
    return Totals(
        turns=turns,
        commands=len(cmds),
        commands_failed=sum(1 for c in cmds if c.exit_code not in (None, 0)),
        files_changed=len(files),
        tests_passed=sum(1 for t in tests if t.result is TestResult.PASS),
        tests_failed=sum(1 for t in tests if t.result is TestResult.FAIL),
    )


def footer_parts(items: Sequence[AnyItem], info: SessionInfo | None) -> list[str]:
    t = totals(items, info)
    parts = [f"{t.turns} turn{'s' if t.turns != 1 else ''}",
             f"{t.commands} command{'s' if t.commands != 1 else ''}"
             + (f" ({t.commands_failed} failed)" if t.commands_failed else ""),
             f"{t.files_changed} file{'s' if t.files_changed != 1 else ''} changed"]
    if t.tests_passed or t.tests_failed:
        parts.append(f"test runs {t.tests_passed} passed, {t.tests_failed} failed")
    if info is not None:
        tok = info.tokens
        if tok.source != "unknown" and tok.total:
            parts.append(f"tokens {tok.total:,} (input {tok.input:,}, cached {tok.cached_input:,}, "
                         f"output {tok.output:,})")
        if info.duration_s is not None:
            parts.append(f"duration {duration(info.duration_s)}")
    return parts
