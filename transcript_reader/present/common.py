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
from datetime import UTC, datetime

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
from transcript_reader.timestamps import parse_time

#: Lines of a command's output shown before folding (``--full`` shows all).
FOLD_LINES = 6
#: A failed command or test run shows its first and last lines (the failure and the summary are there).
FAIL_HEAD_LINES = 3
FAIL_TAIL_LINES = 15

#: A user prompt, answer or reasoning text longer than this is folded in ``show`` (a pasted 20 MB
#: log printed 250,000 lines and rich needed ~20x the text in memory); ``--full`` shows all.
MESSAGE_FOLD_LINES = 60
MESSAGE_FOLD_CHARS = 8_000

EXECUTED_LABEL = {Executed.YES: "ran", Executed.NO: "did not run", Executed.UNKNOWN: "unknown"}
ORIGIN_LABEL = {Origin.DIRECT: "call", Origin.SCRIPT: "code cell", Origin.RECORD: "record", Origin.STREAM: "stream"}

#: --commands etc. map onto the reader's projections.
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
    fail_head_lines: int = FAIL_HEAD_LINES
    fail_tail_lines: int = FAIL_TAIL_LINES
    message_fold_lines: int = MESSAGE_FOLD_LINES
    message_fold_chars: int = MESSAGE_FOLD_CHARS
    session_cwd: str | None = None
    #: a command longer than this is cut in the folded view (``--full`` shows it whole)
    command_chars: int = 2000
    #: ``(line, command)`` of the commands whose test run failed (exports know them up front)
    failing_runs: frozenset[tuple[int, str]] = frozenset()


#: What a view says in the section of a turn that recorded no item (a ``codex exec`` turn that ended
#: without a message).
NOTHING_RECORDED = "(this turn recorded nothing to show)"


@dataclass(slots=True)
class Turn:
    """A turn and what happened in it: ``prompt`` is the user message that opened it (None for a turn
    whose first item is not a prompt, and for items before the first turn: ``index`` 0)."""

    index: int
    prompt: UserMessage | None
    items: list[AnyItem] = field(default_factory=list)


class Sections:
    """Where a reader's "Turn N" sections begin: at the first item of each turn, by turn id (a user
    message typed into a running turn stays in it; a turn without a prompt still gets its section), so
    the sections are the turns the footer and ``inspect`` count. An item without a turn id follows the
    older rule, a new section at each user message."""

    __slots__ = ("count", "current", "seen")

    def __init__(self) -> None:
        self.count = 0
        self.current: str | None = None
        self.seen: set[str] = set()

    def opens(self, item: AnyItem) -> bool:
        """True when ``item`` begins a new section (``count`` is then its number)."""
        tid = item.turn_id
        if tid is None:
            if not isinstance(item, UserMessage):
                return False
        elif tid == self.current or tid in self.seen:
            return False
        else:
            self.seen.add(tid)
        self.current = tid
        self.count += 1
        return True


def group_turns(items: Iterable[AnyItem], turns: int = 0) -> list[Turn]:
    """Sections for the reader (``Sections``); raw outputs are not listed (they are attached to their
    command by call_id). A user message that does not open its turn is one of the turn's items. Of
    ``turns`` (the session's count), those no item showed come last, empty (nothing recorded)."""
    out: list[Turn] = []
    current: Turn | None = None
    sections = Sections()
    for item in items:
        if isinstance(item, RawOutput):
            continue
        if sections.opens(item):
            current = Turn(index=sections.count, prompt=item if isinstance(item, UserMessage) else None)
            out.append(current)
            if current.prompt is not None:
                continue
        if current is None:
            current = Turn(index=0, prompt=None)
            out.append(current)
        current.items.append(item)
    out.extend(Turn(index=n, prompt=None) for n in range(sections.count + 1, turns + 1))
    return out


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
class FoldedOutput:
    """An output as a view shows it: ``head`` lines, then ``cut`` lines left out, then ``tail`` lines."""

    head: list[str]
    cut: int = 0
    tail: list[str] = field(default_factory=list)


def fold_output(text: str, opts: Options, *, failed: bool) -> FoldedOutput:
    """Failure-aware folding: a command or test run that succeeded shows its first lines; one that
    failed shows its first lines and its last ones, where the failure and the summary are (a failed
    unittest run prints its FAIL block and "FAILED (failures=1)" after every "... ok"). ``--full``
    shows everything."""
    rows = text.rstrip("\n").split("\n") if text else []
    if opts.full:
        return FoldedOutput(rows)
    if not failed:
        if len(rows) <= opts.fold_lines:
            return FoldedOutput(rows)
        return FoldedOutput(rows[:opts.fold_lines], len(rows) - opts.fold_lines)
    keep_head, keep_tail = opts.fail_head_lines, opts.fail_tail_lines
    if len(rows) <= keep_head + keep_tail + 1:
        return FoldedOutput(rows)
    return FoldedOutput(rows[:keep_head], len(rows) - keep_head - keep_tail, rows[-keep_tail:])


def failing_runs(items: Iterable[AnyItem]) -> frozenset[tuple[int, str]]:
    """``(line, command)`` of every failing test run: the commands whose output folds as a failure's."""
    return frozenset((i.line, i.command) for i in items if isinstance(i, TestRun) and i.result is TestResult.FAIL)


def folded_text(folded: FoldedOutput, *, note: str = "more lines") -> str:
    """A folded output as one text, the cut marked where it is (exports)."""
    rows = list(folded.head)
    if folded.cut:
        rows.append(f"… {folded.cut:,} {note}")
        rows.extend(folded.tail)
    return "\n".join(rows)


def command_failed(item: ShellCommand, test_result: TestResult | None = None) -> bool:
    """Whether a command's output is read as a failure's: a non-zero exit, a failed status, or a
    failing test run read from it (``pytest | tail`` exits 0)."""
    return (item.exit_code not in (None, 0) or item.status in ("failed", "rejected")
            or test_result is TestResult.FAIL)


def output_text(item: ShellCommand, full_outputs: dict[str, str], opts: Options) -> tuple[str | None, int]:
    """``(text, full length)`` of a command's output. With ``--full`` the whole raw output when the
    excerpt is not whole, with the envelope Codex wraps it in (``Chunk ID``, ``Wall time``, ``Process
    exited with code``, ``Original token count``, ``Output:``) removed exactly as the reader removes it
    from the excerpt: folded and full views show the same text, one longer than the other."""
    text = item.output
    if opts.full and item.origin is Origin.DIRECT and item.output_chars > len(text or ""):
        raw = full_outputs.get(item.call_id or "")
        if raw is not None:
            from transcript_reader.providers import output_body

            body = output_body(raw)
            return body, len(body)
    return text, item.output_chars


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
    claude = info.format in (Format.CLAUDE, Format.CLAUDE_STREAM)
    agent = ("Claude Code" if codex[0].isupper() else "claude") if claude else codex
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


def patch_summary(item: PatchItem) -> list[tuple[str, str, int | str, int | str]]:
    """``(op letter, path, added, removed)`` per file; a count the source did not give is ``?`` (an
    exec stream's file change names the file, not its diff: ``+? -?``, never ``+0 -0``)."""
    out: list[tuple[str, str, int | str, int | str]] = []
    for f in item.files:
        letter = {"add": "A", "update": "M", "delete": "D"}.get(f.op, "?")
        path = f"{f.path} → {f.move_to}" if f.move_to else f.path
        out.append((letter, path, "?" if f.added is None else f.added, "?" if f.removed is None else f.removed))
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


class Tally:
    """The figures of a whole session, counted as its items go by (every item, whatever a view
    filters): a ``--final`` or ``--commands`` view ends with the same summary as the full timeline.
    A command that did not run is not counted as a command (it is said apart)."""

    __slots__ = ("prompts", "commands", "commands_failed", "not_run", "files", "runs_passed", "runs_failed",
                 "runs_other", "first_ts", "last_ts")

    def __init__(self) -> None:
        self.prompts = self.commands = self.commands_failed = self.not_run = 0
        self.runs_passed = self.runs_failed = self.runs_other = 0
        self.files: set[str] = set()
        self.first_ts: str | None = None
        self.last_ts: str | None = None

    def add(self, item: AnyItem) -> None:
        ts = item.timestamp
        if ts:
            if self.first_ts is None:
                self.first_ts = ts
            self.last_ts = ts
        if isinstance(item, ShellCommand):
            if item.executed is Executed.NO:
                self.not_run += 1
                return
            self.commands += 1
            if item.exit_code not in (None, 0):
                self.commands_failed += 1
        elif isinstance(item, PatchItem):
            if item.success is not False and item.executed is not Executed.NO:
                self.files.update(f.move_to or f.path for f in item.files)
        elif isinstance(item, TestRun):
            if item.result is TestResult.PASS:
                self.runs_passed += 1
            elif item.result is TestResult.FAIL:
                self.runs_failed += 1
            else:
                self.runs_other += 1
        elif isinstance(item, UserMessage):
            self.prompts += 1

    @classmethod
    def of(cls, items: Iterable[AnyItem]) -> Tally:
        t = cls()
        for i in items:
            t.add(i)
        return t


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def footer_parts(tally: Tally | Sequence[AnyItem], info: SessionInfo | None) -> list[str]:
    """The summary line: turns, commands (failed, not run), files changed, test runs, tokens, duration.
    Given items rather than a tally, they are counted (callers that hold the whole session)."""
    t = tally if isinstance(tally, Tally) else Tally.of(tally)
    turns = info.turns if info is not None and info.turns else t.prompts
    extra = [x for x in (f"{t.commands_failed} failed" if t.commands_failed else "",
                         f"{t.not_run} not run" if t.not_run else "") if x]
    parts = [_plural(turns, "turn"), _plural(t.commands, "command") + (f" ({', '.join(extra)})" if extra else ""),
             _plural(len(t.files), "file") + " changed"]
    runs = t.runs_passed + t.runs_failed + t.runs_other
    if runs:
        bits = [f"{n} {w}" for n, w in ((t.runs_passed, "passing"), (t.runs_failed, "failing"),
                                        (t.runs_other, "without a result")) if n]
        parts.append(f"{_plural(runs, 'test run')}: {', '.join(bits)}")
    if info is not None:
        tok = info.tokens
        if tok is not None:
            parts.append(f"tokens {tok.total:,} (input {tok.input:,}, cached {tok.cached_input:,}, "
                         f"output {tok.output:,})")
        if info.duration_s is not None:
            parts.append(f"duration {duration(info.duration_s)}")
    return parts


# ---- time -------------------------------------------------------------------------------------------


class Clock:
    """One time convention for every text view: local time (the zone named once, in the header or a
    column title), or UTC with ``--utc``. JSON keeps the transcript's ISO UTC timestamps."""

    def __init__(self, utc: bool = False) -> None:
        self.utc = utc

    def _dt(self, ts: str | datetime | None) -> datetime | None:
        if ts is None or ts == "":
            return None
        if isinstance(ts, datetime):
            dt = ts
        else:
            parsed = parse_time(ts)
            if parsed is None:
                return None
            dt = parsed
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC) if self.utc else dt.astimezone()

    def zone(self, ts: str | datetime | None = None) -> str:
        """The zone's name (``UTC``, ``CET``…), of ``ts`` when given (daylight saving), else of now."""
        dt = self._dt(ts) or self._dt(datetime.now(UTC))
        assert dt is not None
        return "UTC" if self.utc else (dt.tzname() or dt.strftime("%z"))

    def stamp(self, ts: str | datetime | None, *, seconds: bool = True, zone: bool = False) -> str:
        """``2026-11-30 17:59:09`` (``+ UTC`` with ``zone``); "" when absent, the text itself when unreadable."""
        dt = self._dt(ts)
        if dt is None:
            return ts if isinstance(ts, str) else ""
        out = dt.strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")
        return f"{out} {self.zone(dt)}" if zone else out

    def time(self, ts: str | None) -> str:
        dt = self._dt(ts)
        return dt.strftime("%H:%M:%S") if dt is not None else ""
