"""An analysis as plain JSON data: the one definition of the ``script --json`` shape (issue #2).

    {"parser": str, "parse_error": null | {"message", "line", "column"}, "pragma": object | null,
     "calls": [{"name", "start": {"offset", "line", "column"}, "end": {...}, "computed": bool,
                "argument": value | null, "argument_source": str}],
     "entries": [{"kind": "shell_command" | "stdin_write" | "patch" | "tool_call",
                  "executed": "unknown", "order": int, ...}],
     "findings": [{"code", "message", "offset"}]}

Non-finite numbers (``1e400``) become null so the output stays strict JSON.
"""

from __future__ import annotations

import math
from typing import Any

from exec_grammar.model import (
    Analysis,
    Entry,
    PatchEntry,
    PatchFile,
    Position,
    ShellCommandEntry,
    StdinWriteEntry,
    ToolCall,
    ToolCallEntry,
)

__all__ = ["analysis_to_json", "call_to_json", "entry_to_json", "json_value"]


def json_value(value: Any) -> Any:
    """A decoded literal made safe for strict JSON (no NaN/Infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value


def _position(p: Position) -> dict[str, int]:
    return {"offset": p.offset, "line": p.line, "column": p.column}


def call_to_json(call: ToolCall) -> dict[str, Any]:
    return {
        "name": call.name,
        "start": _position(call.start),
        "end": _position(call.end),
        "computed": call.computed,
        "argument": json_value(call.argument),
        "argument_source": call.argument_source,
    }


def _patch_file(f: PatchFile) -> dict[str, Any]:
    return {"path": f.path, "op": str(f.op), "move_to": f.move_to, "added": f.added, "removed": f.removed}


def entry_to_json(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": str(entry.kind), "executed": entry.executed, "order": entry.order}
    if isinstance(entry, ShellCommandEntry):
        out.update(
            command=entry.command,
            cwd=entry.cwd,
            whole_script=entry.whole_script,
            options=json_value(dict(entry.options)),
            call_names=list(entry.call_names),
        )
    elif isinstance(entry, StdinWriteEntry):
        out.update(session_id=json_value(entry.session_id), chars=entry.chars)
    elif isinstance(entry, PatchEntry):
        out.update(files=[_patch_file(f) for f in entry.files], unresolved_paths=entry.unresolved_paths,
                   error=entry.error)  # a malformed patch is reported, not guessed (QA F22)
    elif isinstance(entry, ToolCallEntry):
        out.update(
            name=entry.name, argument=json_value(entry.argument), argument_source=entry.argument_source
        )
    return out


def analysis_to_json(a: Analysis) -> dict[str, Any]:
    err = a.parse_error
    return {
        "parser": str(a.parser),
        "parse_error": None
        if err is None
        else {"message": err.message, "line": err.line, "column": err.column},
        "pragma": json_value(dict(a.pragma)) if a.pragma is not None else None,
        "calls": [call_to_json(c) for c in a.calls],
        "entries": [entry_to_json(e) for e in a.entries],
        "findings": [{"code": f.code, "message": f.message, "offset": f.offset} for f in a.findings],
    }
