"""An analysis as plain JSON data: the one definition of the ``script --json`` shape.

    {"parser": str, "parse_error": null | {"message", "line", "column"}, "pragma": object | null,
     "calls": [{"name", "start": {"offset", "line", "column"}, "end": {...}, "computed": bool,
                "argument": value | null, "argument_source": str}],
     "entries": [{"kind": "shell_command" | "stdin_write" | "patch" | "tool_call",
                  "executed": "unknown", "order": int, ...}],
     "findings": [{"code", "message", "offset"}]}

Non-finite numbers (``1e400``) become null so the output stays strict JSON. What a script contains never
makes the output fail: a lone UTF-16 surrogate (``"echo \\uD800"`` decodes to one, which UTF-8 cannot
carry) is written as its escape, the six characters ``\\ud800``, as the script wrote it
(:func:`json_text`); a value nested deeper than :data:`MAX_JSON_DEPTH` is cut there (JSON encoders stop
at a fixed depth: orjson at 255 levels, Python at its recursion limit).
"""

from __future__ import annotations

import math
import re
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

__all__ = ["MAX_JSON_DEPTH", "analysis_to_json", "call_to_json", "entry_to_json", "json_text", "json_value"]


#: Levels of nesting a value keeps in the output; deeper, it is :data:`TOO_DEEP` (the envelope around a
#: value adds a few levels, and every encoder the output meets must still accept the whole).
MAX_JSON_DEPTH = 200
#: What stands for a value nested deeper than :data:`MAX_JSON_DEPTH`.
TOO_DEEP = f"[nested deeper than {MAX_JSON_DEPTH} levels]"
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def json_text(text: str) -> str:
    """``text`` that any JSON encoder can write as UTF-8: each lone surrogate becomes its escape,
    the six characters ``\\udXXX`` (a JavaScript string may hold one; UTF-8 has no encoding for it)."""
    if text.isascii() or _LONE_SURROGATE.search(text) is None:
        return text
    return _LONE_SURROGATE.sub(_escape, text)


def json_value(value: Any, depth: int = 0) -> Any:
    """A decoded literal made safe for strict JSON: no NaN/Infinity (null), lone surrogates escaped
    (:func:`json_text`), nesting cut at :data:`MAX_JSON_DEPTH`."""
    if isinstance(value, str):
        return value if value.isascii() else json_text(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict | list | tuple) and depth >= MAX_JSON_DEPTH:
        return TOO_DEEP
    if isinstance(value, dict):
        return {json_text(str(k)): json_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, depth + 1) for v in value]
    return value


def _position(p: Position) -> dict[str, int]:
    return {"offset": p.offset, "line": p.line, "column": p.column}


def call_to_json(call: ToolCall) -> dict[str, Any]:
    return {
        "name": json_text(call.name),
        "start": _position(call.start),
        "end": _position(call.end),
        "computed": call.computed,
        "argument": json_value(call.argument),
        "argument_source": json_text(call.argument_source),
    }


def _patch_file(f: PatchFile) -> dict[str, Any]:
    return {"path": json_text(f.path), "op": str(f.op), "move_to": json_value(f.move_to), "added": f.added,
            "removed": f.removed}


def entry_to_json(entry: Entry) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": str(entry.kind), "executed": entry.executed, "order": entry.order}
    if isinstance(entry, ShellCommandEntry):
        out.update(
            command=json_text(entry.command),
            cwd=json_value(entry.cwd),
            whole_script=entry.whole_script,
            options=json_value(dict(entry.options)),
            call_names=list(entry.call_names),
        )
        if entry.holes:  # a template command: which of its text is a hole, as written
            out.update(parts=[json_text(p) for p in entry.parts], holes=[json_text(h) for h in entry.holes])
    elif isinstance(entry, StdinWriteEntry):
        out.update(session_id=json_value(entry.session_id), chars=json_value(entry.chars))
    elif isinstance(entry, PatchEntry):
        out.update(files=[_patch_file(f) for f in entry.files], unresolved_paths=entry.unresolved_paths,
                   error=json_value(entry.error))  # a malformed patch is reported, not guessed
    elif isinstance(entry, ToolCallEntry):
        out.update(
            name=json_text(entry.name), argument=json_value(entry.argument),
            argument_source=json_text(entry.argument_source)
        )
    return out


def analysis_to_json(a: Analysis) -> dict[str, Any]:
    err = a.parse_error
    return {
        "parser": str(a.parser),
        "parse_error": None
        if err is None
        else {"message": json_text(err.message), "line": err.line, "column": err.column},
        "pragma": json_value(dict(a.pragma)) if a.pragma is not None else None,
        "calls": [call_to_json(c) for c in a.calls],
        "entries": [entry_to_json(e) for e in a.entries],
        "findings": [{"code": f.code, "message": json_text(f.message), "offset": f.offset} for f in a.findings],
    }
