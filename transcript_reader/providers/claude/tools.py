"""Claude Code tools -> decode records: what a ``tool_use`` block is, and what its ``tool_result`` says.

Claude Code writes a call as a ``tool_use`` block of an assistant line and its result as a ``tool_result``
block of a later ``user`` line, paired by id; the line of the result may also carry ``toolUseResult``, the
tool's structured result (Bash: stdout/stderr/interrupted; Edit/Write: ``structuredPatch``, the diff it
applied; a failure: the error string). These rules were read off recordings of the real CLI
(``fixtures/claude/recorded``) and public transcripts (``fixtures/claude/public``):

- **Bash** (and ``PowerShell``) is a shell command. A non-zero exit is an error result whose text starts
  ``Exit code N``; a result that is not an error is exit 0, unless the command was interrupted
  (``toolUseResult.interrupted``: it ran, its exit is unknown) or sent to the background (still running).
- **Edit / MultiEdit / Write / NotebookEdit** are patches: files with +/- counts and the diff, from
  ``structuredPatch`` where recorded, else from the call's own input (old/new strings, the written text).
- **A denied or refused call** (a permission denial, ``<tool_use_error>`` input validation, a tool use the
  person interrupted before it ran) did not run: the result is marked ``declined`` and the call becomes
  ``executed: no``.
- **TodoWrite** is a plan update (``update_plan``, as Codex names it); ``Task``/``Agent`` is a sub-agent
  call whose result is the sub-agent's report; everything else (Read, Grep, Glob, WebFetch, WebSearch,
  ``mcp__server__tool``…) is a tool call with its input as arguments.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from transcript_reader.model import FileChange
from transcript_reader.providers.records import Call, ExecEnd, Output, PatchEnd, Record, ToolEnd

SHELL_TOOLS = frozenset({"Bash", "PowerShell"})
PATCH_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
AGENT_TOOLS = frozenset({"Task", "Agent"})
#: Claude Code's plan tool, named as the model reads a plan update (Codex: ``update_plan``).
PLAN_NAME = "update_plan"

_EXIT = re.compile(r"^(?:Error: )?Exit code (-?\d+)\b")
# A call that never ran: permission denials (interactive: "The user doesn't want to proceed…"; -p mode:
# "… haven't granted it yet" or "… needs approval"), input validation, a tool use interrupted before it ran.
_DECLINED = re.compile(
    r"^(?:Error: )?(?:<tool_use_error>|The user doesn't want to (?:proceed|take this action)|"
    r"Claude requested permissions? to |Permission to use \S+ (?:has been|was) denied|"
    r"\[Request interrupted by user for tool use\])"
    r"|haven't granted it yet|needs approval\b",
)


def call_record(block: dict[str, Any], cwd: str | None) -> Call | None:
    """The record of one ``tool_use`` (or ``server_tool_use``) block."""
    name = block.get("name")
    if not isinstance(name, str):
        return None
    cid = block.get("id") if isinstance(block.get("id"), str) else None
    inp = block.get("input")
    inp = inp if isinstance(inp, dict) else {}
    args = orjson.dumps(inp).decode()
    if name in SHELL_TOOLS:
        cmd = inp.get("command")
        return Call(kind="shell", tool=name, call_id=cid, command=cmd if isinstance(cmd, str) else "", cwd=cwd,
                    arguments=args)
    if name in PATCH_TOOLS:
        return Call(kind="patch", tool=name, call_id=cid, name=name, arguments=args)
    return Call(kind="tool", tool=name, call_id=cid, name=PLAN_NAME if name == "TodoWrite" else name,
                arguments=args)


def result_text(content: Any) -> str:
    """A ``tool_result``'s content as text: a string, or its text blocks joined (an image is ``[image]``)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return "" if content is None else str(content)
    parts = []
    for b in content:
        if isinstance(b, dict):
            if b.get("type") == "text" and isinstance(b.get("text"), str):
                parts.append(b["text"])
            elif b.get("type") == "image":
                parts.append("[image]")
    return "\n".join(parts)


def declined(text: str, line: dict[str, Any]) -> bool:
    """The call did not run: Claude Code recorded a denial, or the result text says it refused."""
    pd = line.get("permissionDecision")
    if isinstance(pd, dict) and pd.get("decision") == "reject":
        return True
    return bool(line.get("toolDenialKind")) or _DECLINED.search(text[:400]) is not None


def result_records(call: Call | None, inp: dict[str, Any], block: dict[str, Any],
                   line: dict[str, Any]) -> list[Record]:
    """Records of one ``tool_result`` block: the completion its tool kind needs, then the output text.
    ``call`` is the paired ``tool_use`` (None: its call is not in this file, e.g. history before a
    compaction); ``inp`` its input."""
    cid = block.get("tool_use_id") if isinstance(block.get("tool_use_id"), str) else None
    text = result_text(block.get("content"))
    is_error = block.get("is_error") is True
    tur = line.get("toolUseResult")
    # a command the person stopped while it ran (``interrupted``) did run, whatever its result text says
    ran_then_stopped = isinstance(tur, dict) and tur.get("interrupted") is True
    refused = is_error and not ran_then_stopped and declined(text, line)
    out = Output(call_id=cid, text=text, success=None if call is None else not is_error, declined=refused)
    if call is None or refused:
        return [out]
    if call.kind == "shell":
        return [_exec_end(call, cid, text, is_error, tur), out]
    if call.kind == "patch":
        files = patch_files(call.tool, inp, tur if isinstance(tur, dict) else None, text)
        return [PatchEnd(call_id=cid, files=files, success=not is_error, output=text if is_error else None,
                         record=False), out]
    return [ToolEnd(call_id=cid, name=call.name, arguments=call.arguments, result=text, success=not is_error), out]


def _exec_end(call: Call, cid: str | None, text: str, is_error: bool, tur: Any) -> ExecEnd:
    info = tur if isinstance(tur, dict) else {}
    exit_code: int | None
    status: str
    m = _EXIT.match(text)
    if m:
        exit_code = int(m.group(1))
        status = "completed" if exit_code == 0 else "failed"
    elif info.get("interrupted") is True:
        exit_code, status = None, "interrupted"
    elif info.get("backgroundTaskId") or text.startswith("Command running in background"):
        exit_code, status = None, "running"
    elif is_error:
        exit_code, status = None, "failed"  # a timeout or a harness error: ran, exit not told
    else:
        exit_code, status = 0, "completed"
    return ExecEnd(call_id=cid, command=call.command, argv=None, cwd=call.cwd, exit_code=exit_code, output=None,
                   duration_s=None, status=status, record=False)


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def _hunks_change(path: str, op: str, hunks: list[Any]) -> FileChange:
    added = removed = 0
    parts = []
    for h in hunks:
        if not isinstance(h, dict):
            continue
        raw = h.get("lines")
        lines = [x for x in raw if isinstance(x, str)] if isinstance(raw, list) else []
        added += sum(1 for x in lines if x.startswith("+"))
        removed += sum(1 for x in lines if x.startswith("-"))
        parts.append(f"@@ -{h.get('oldStart', 0)},{h.get('oldLines', 0)} +{h.get('newStart', 0)},"
                     f"{h.get('newLines', 0)} @@\n" + "\n".join(lines))
    return FileChange(path=path, op=op, added=added, removed=removed, diff="\n".join(parts) or None)


def _replace_change(path: str, pairs: list[tuple[str, str]]) -> FileChange:
    """An edit read from its input alone (no structured patch recorded): every old line removed, every
    new line added (an upper bound when old and new share lines; said in the README)."""
    added = removed = 0
    parts = []
    for old, new in pairs:
        removed += _lines(old)
        added += _lines(new)
        parts.append("@@\n" + "".join(f"-{x}\n" for x in old.splitlines()) + "".join(f"+{x}\n" for x in new.splitlines()))
    return FileChange(path=path, op="update", added=added, removed=removed, diff="".join(parts).rstrip("\n") or None)


def patch_files(tool: str, inp: dict[str, Any], tur: dict[str, Any] | None, text: str) -> tuple[FileChange, ...]:
    """The files a patch tool changed, with +/- counts and diff."""
    path = inp.get("file_path") or inp.get("notebook_path") or (tur or {}).get("filePath") or ""
    path = path if isinstance(path, str) else ""
    hunks = (tur or {}).get("structuredPatch")
    kind = (tur or {}).get("type")
    if tool == "Write":
        content = _str(inp.get("content"))
        created = kind == "create" or (kind is None and text.startswith("File created"))
        if created:
            body = "".join(f"+{x}\n" for x in content.splitlines()).rstrip("\n")
            return (FileChange(path=path, op="add", added=_lines(content), diff=body or None),)
        if isinstance(hunks, list):
            return (_hunks_change(path, "update", hunks),)
        return (FileChange(path=path, op="update", added=_lines(content)),)
    if tool == "NotebookEdit":
        src = _str(inp.get("new_source"))
        mode = inp.get("edit_mode")
        return (FileChange(path=path, op="update", added=0 if mode == "delete" else _lines(src)),)
    if isinstance(hunks, list):
        return (_hunks_change(path, "update", hunks),)
    if tool == "MultiEdit":
        edits = inp.get("edits")
        pairs = [(e.get("old_string", ""), e.get("new_string", "")) for e in edits or () if isinstance(e, dict)] \
            if isinstance(edits, list) else []
    else:
        pairs = [(inp.get("old_string", ""), inp.get("new_string", ""))]
    return (_replace_change(path, [(o, n) for o, n in pairs if isinstance(o, str) and isinstance(n, str)]),)
