"""The rules of assembly that need no state: limits, excerpts, the ``executed`` verdict of a direct call,
diffs and paths, record matching, and the items a completion record or a test run becomes."""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from transcript_reader.model import (
    AnyItem,
    Executed,
    FileChange,
    Notice,
    Origin,
    PatchItem,
    ShellCommand,
    TestRun,
    ToolCallItem,
)
from transcript_reader.providers.codex.patch_text import cap_diff
from transcript_reader.providers.records import UNKNOWN_COMMAND, ExecEnd, PatchEnd, ToolEnd

if TYPE_CHECKING:
    from transcript_reader.providers.codex.common import ParsedOutput



class _Lazy:
    """exec_grammar (the analyzer, with its parsers) and testruns, imported at their first use: a reading
    of messages only (``final``, ``conversation``) never loads them, and their import is most of its
    start-up. Each function is kept once imported (an import statement run per call costs more than
    most calls: a shell command asks for ``detect_test_run`` each time)."""

    def __getattr__(self, name: str) -> Any:
        f: Any
        if name == "detect_test_run":
            from transcript_reader.testruns import detect_test_run as f
        elif name == "parse_patch":
            from exec_grammar import parse_patch as f
        elif name == "unwrap_command":
            from exec_grammar.shell import unwrap_command as f
        else:
            raise AttributeError(name)
        setattr(self, name, f)
        return f


_lazy: Any = _Lazy()

#: Longest excerpt kept in ``output`` / ``arguments`` / ``result`` fields; the full text of a call's
#: output is its ``raw_output`` item.
EXCERPT_CHARS = 4000

#: Items allowed to wait behind an unanswered call or an undecided message before the oldest is
#: released as it stands (keeps memory bounded on a pathological file; documented in the README).
MAX_PENDING = 4096

#: Distinct unknown/noise type names listed in the accounting; the rest count under "(other types)".
MAX_TYPE_NAMES = 200

#: How far apart (in lines) Codex's two copies of one message may be. They are written together: in the
#: whole shared corpus the copies are 1 or 2 lines apart.
DEDUPE_WINDOW = 16

#: First release whose rollouts record every command/patch a code-mode cell ran (codex-formats.md §9).
RECORDS_SINCE = (0, 150)

#: Output kept for a command that kept running (unified exec), gathered from its session's later chunks
#: (head and tail; test summaries are at the end).
RUNNING_OUTPUT_CHARS = 64_000


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """``text`` cut to ``limit`` characters keeping head and tail (errors show at the end)."""
    if len(text) <= limit:
        return text
    half = max(limit // 2, 1)
    return f"{text[:half]}\n[… {len(text) - 2 * half} characters omitted …]\n{text[-half:]}"



def version_tuple(v: str | None) -> tuple[int, ...] | None:
    if not v:
        return None
    m = re.match(r"(\d+)\.(\d+)", v)
    return (int(m.group(1)), int(m.group(2))) if m else None


def iso_seconds(ts: str) -> float | None:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None



def excerpt_or_none(text: str | None) -> str | None:
    return None if text is None else excerpt(text)


def direct_executed(has_evidence: bool, rejected: bool, ee: ExecEnd | None) -> Executed:
    if rejected or (ee is not None and ee.status == "declined"):
        return Executed.NO
    return Executed.YES if has_evidence else Executed.UNKNOWN


def stream_executed(status: str | None, exit_code: int | None = None, *, exit_required: bool = False) -> Executed:
    """``executed`` of an exec stream's item, from what the stream reports at its end: it ran when it
    completed or failed (a command: with an exit code), it did not when it was declined; an item its
    turn's end found unfinished (``in_progress``) is unknown."""
    if status == "declined":
        return Executed.NO
    if status in ("completed", "failed") and (exit_code is not None or not exit_required):
        return Executed.YES
    return Executed.UNKNOWN


def with_diffs(files: tuple[FileChange, ...], hunks: dict[str, str],
                recorded: tuple[FileChange, ...]) -> tuple[FileChange, ...]:
    """``files`` with each one's diff: the recorded one (patch_apply_end / FileChange record: what Codex
    applied) when a recorded file names the same path, else the apply_patch text's hunk for it."""
    out: list[FileChange] = []
    for f in files:
        if f.diff is not None:  # already has one: kept as it is
            out.append(f)
            continue
        diff = None
        for r in recorded:
            if r.diff and same_path(f.path, r.path):
                diff = r.diff
                break
        if diff is None:
            diff = hunks.get(f.path)
            if diff is None:
                for p, h in hunks.items():
                    if same_path(p, f.path) or same_path(f.path, p):
                        diff = h
                        break
        # the constructor, not dataclasses.replace (2.5x slower): every field of FileChange is listed
        out.append(f if diff is None else FileChange(f.path, f.op, f.move_to, f.added, f.removed, cap_diff(diff)))
    return tuple(out)


#: Codex's words when a patch does not match the files: nothing of it was applied.
VERIFICATION_FAILED = "apply_patch verification failed"
PATCH_FAILURE_RE = re.compile(VERIFICATION_FAILED + r":\s*(.+)", re.S)


def patch_failure(script_error: str | None) -> str | None:
    """The message of an apply_patch verification failure a cell's ``Script error`` reports, if any."""
    if not script_error:
        return None
    m = PATCH_FAILURE_RE.search(script_error)
    return m.group(1) if m else None


def orphan_failure(parsed: ParsedOutput, line: int, ts: str | None, turn: str | None,
                   call_id: str | None = None) -> list[AnyItem]:
    """A ``notice`` when an output whose call is not in the transcript reports a failure (a failed or
    terminated script: ``Script error: collab spawn failed``; Codex's refusal, abort or timeout wording,
    ``refusals``; a command's non-zero exit), so that it is not left in a hidden raw output."""
    if parsed.script_status in ("failed", "terminated"):
        detail = parsed.script_error or f"script {parsed.script_status}"
    elif parsed.verdict is not None:
        detail = parsed.body
    elif parsed.exit_code is not None and parsed.exit_code != 0:
        detail = f"exit code {parsed.exit_code}"
    else:
        # not a failure: still shown, saying its call is missing (a real file's output whose call was
        # never written was invisible: only a hidden raw output carried it)
        body = " ".join(parsed.body.split())
        body = body[:200] + ("…" if len(body) > 200 else "")
        return [Notice(line=line, timestamp=ts, turn_id=turn, category="orphan_output",
                       message=f"an output whose call is not in this session{f' (call id {call_id})' if call_id else ''}"
                               f": {body or '(empty)'}")]
    detail = " ".join(detail.split())
    detail = detail[:200] + ("…" if len(detail) > 200 else "")
    return [Notice(line=line, timestamp=ts, turn_id=turn, category="orphan_failure",
                   message=f"an output whose call is not in this session reports a failure: {detail}")]


def record_commands(rec: ExecEnd) -> tuple[str, ...]:
    """The commands a record may show a script's command as. An argv record's ``command`` is already
    the inner command of its shell wrapper (``command_from_argv``): unwrapping it again would strip a
    wrapper the model typed itself, and pair ``make`` with a run of ``bash -lc make``. A
    command-line record is compared unwrapped and as written."""
    if rec.argv is not None:
        return (rec.command.strip(),)
    return (_lazy.unwrap_command(rec.command).strip(), rec.command.strip())


def fits_template(parts: tuple[str, ...], command: str) -> bool:
    """Whether ``command`` is one a template with these literal parts may give (each hole any text):
    how a record shows which command a template command was. The first part opens it, the last ends
    it, the others come in order, each at its leftmost place (if any placement fits, that one does):
    one pass of ``str.find``, whatever the holes."""
    text = command.strip()
    first, last = parts[0].lstrip(), parts[-1].rstrip()
    if not text.startswith(first):
        return False
    pos = len(first)
    for part in parts[1:-1]:
        found = text.find(part, pos)
        if found < 0:
            return False
        pos = found + len(part)
    return len(text) - len(last) >= pos and text.endswith(last)


def error_names_path(message: str, path: str) -> bool:
    """``message`` names ``path`` as a whole path (Codex reports it resolved against the cwd, so a
    relative script path matches the tail of an absolute one, on a ``/`` boundary)."""
    p = path.strip()
    if not p:
        return False
    rel = not p.startswith("/")
    if rel:
        p = p.removeprefix("./")
    # str.find, not a regex built per path: each distinct pattern would take a slot of ``re``'s cache
    # and push out the module-level patterns that other hot paths look up by string
    before = "'\"`(/" if rel else "'\"`("
    i = message.find(p)
    while i >= 0:
        j = i + len(p)
        if (i == 0 or message[i - 1] in before or message[i - 1].isspace()) and (
                j == len(message) or message[j] in ":'\"`)," or message[j].isspace()):
            return True
        i = message.find(p, i + 1)
    return False


def script_cwd(cell_cwd: str | None, e: Any, rec: ExecEnd | None) -> str | None:
    """Where a script's command ran (its record says) or runs unless told otherwise: the entry's
    ``workdir`` against the turn's cwd, as for a direct call (0.144 cells write no records: corpus
    realcodex/0.144.0/code_mode_only). The whole-script fallback names no command, so no turn cwd."""
    if rec is not None and rec.cwd:
        return rec.cwd
    if e.whole_script:
        return e.cwd  # type: ignore[no-any-return]
    return join_cwd(cell_cwd, e.cwd)


#: An absolute path on Windows: ``C:\x``, ``C:/x``, ``\\server\share`` (it was joined to the cwd).
_WINDOWS_ABSOLUTE = re.compile(r"[A-Za-z]:[\\/]|\\\\")


def join_cwd(base: str | None, workdir: str | None) -> str | None:
    if not workdir:
        return base
    if workdir.startswith("/") or base is None or _WINDOWS_ABSOLUTE.match(workdir):
        return workdir
    if workdir in (".", "./", ".\\"):
        return base
    sep = "\\" if "\\" in base and "/" not in base else "/"  # a Windows cwd keeps its separator
    return base.rstrip("/\\") + sep + workdir


def same_tool(script_name: str, record_name: str) -> bool:
    """A script's ``tools.X`` names the tool a record names (MCP: ``mcp__server__tool``), compared
    without case or punctuation differences (a server ``my-srv`` is ``my_srv`` in a script)."""
    def norm(n: str) -> str:
        return re.sub(r"[^0-9a-z]+", "_", n.lower()).strip("_")
    want = norm(script_name)
    # a dynamic tool's record is named ``namespace.tool``; a script may call it by its tool name
    return want == norm(record_name) or ("." in record_name and want == norm(record_name.rsplit(".", 1)[1]))


def same_path(script_path: str, record_path: str) -> bool:
    """A script's relative patch path names the record's absolute one (records resolve against cwd)."""
    s = script_path.strip().lstrip("./") if not script_path.startswith("/") else script_path
    r = record_path.replace("/./", "/")
    return r == s or r.endswith("/" + s)


def patch_files(text: str) -> tuple[tuple[FileChange, ...], str | None]:
    if not text:
        return (), None
    patch = _lazy.parse_patch(text)
    files = tuple(FileChange(path=f.path, op=f.op.value, move_to=f.move_to,
                             added=f.added, removed=f.removed) for f in patch.files)
    return files, patch.error


def test_run_items(sc: ShellCommand, full_output: str | None) -> list[AnyItem]:
    if sc.executed is Executed.NO:
        return []
    info = _lazy.detect_test_run(sc.command, sc.exit_code, full_output)
    if info is None:
        return []
    return [TestRun(line=sc.line, timestamp=sc.timestamp, turn_id=sc.turn_id, framework=info.framework,
                    command=sc.command, result=info.result,
                    passed=info.passed, failed=info.failed, skipped=info.skipped, exit_code=sc.exit_code,
                    call_id=sc.call_id, origin=sc.origin, executed=sc.executed, evidence=sc.evidence)]


def record_items(rec: ExecEnd | PatchEnd | ToolEnd, line: int, ts: str | None, turn: str | None,
                  cell_call: str | None) -> list[AnyItem]:
    if isinstance(rec, ToolEnd):
        return [ToolCallItem(line=line, timestamp=ts, turn_id=turn, name=rec.name,
                             arguments=excerpt(rec.arguments), result=excerpt_or_none(rec.result), success=rec.success,
                             call_id=cell_call or rec.call_id, origin=Origin.RECORD, executed=Executed.YES)]
    if isinstance(rec, ExecEnd):
        executed = Executed.NO if rec.status == "declined" else Executed.YES
        # a record whose command was stripped still ran: its command is said to be unknown
        sc = ShellCommand(line=line, timestamp=ts, turn_id=turn, command=rec.command or UNKNOWN_COMMAND, argv=rec.argv,
                          cwd=rec.cwd, exit_code=rec.exit_code, output=excerpt_or_none(rec.output),
                          output_chars=len(rec.output or ""), duration_s=rec.duration_s, tool="exec_command",
                          call_id=cell_call or rec.call_id, origin=Origin.RECORD, executed=executed,
                          status=rec.status)
        return [sc, *test_run_items(sc, rec.output)]
    return [PatchItem(line=line, timestamp=ts, turn_id=turn, files=rec.files, success=rec.success,
                      error=rec.output if rec.success is False else None, call_id=cell_call or rec.call_id,
                      origin=Origin.RECORD, executed=Executed.NO if rec.status == "declined" else Executed.YES)]


def patch_success(pe: PatchEnd | None, rejected: bool, parsed: Any) -> tuple[bool | None, bool]:
    """``(success, unverified)`` of a direct apply_patch call, from its end event, else its output: the
    exit code, ``Success.`` / ``Done!``, or error words. Codex checks a patch against the files before
    applying any of it: "apply_patch verification failed" means nothing was applied (``unverified``:
    the same failure inside a cell is already "no")."""
    success: bool | None = None
    body = parsed.body if parsed is not None else None
    if pe is not None and pe.success is not None:
        success = pe.success
    elif rejected or (parsed is not None and parsed.verdict is not None):
        success = False  # refused, or cut off by an interrupt (``refusals``)
    elif parsed is not None:
        if parsed.exit_code is not None:
            success = parsed.exit_code == 0
        elif body is not None and body.startswith(("Success.", "Done!")):
            success = True
        elif body is not None and re.search(r"\b(error|failed|invalid)\b", body, re.I):
            success = False
    unverified = body is not None and VERIFICATION_FAILED in body and (pe is None or pe.success is not True)
    return (False if unverified else success), unverified
