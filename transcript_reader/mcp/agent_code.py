"""The ``agent-code`` wire profile: the origin's exact shapes (peers.md §1, the origin's
``agentTranscriptTypes.ts``), so a client written for the origin's three tools works unchanged.

Our profile stays the default; this one reshapes our answers: epoch-millisecond timestamps, camelCase
fields (``exitCode``, ``outputExcerpt``), the origin's seven item kinds, its stats object, its windowing
(``tail`` keeps the last N items, then ``maxItems`` the first of those; ``maxChars`` keeps the first items
whose joined text fits, dropping the rest and setting ``truncated``; a text over ``maxCharsPerItem`` keeps
its head and a ``[truncated]`` line, which alone never sets ``truncated``), and its error shape: a
*non-error* result ``{"ok": false, "error": <code>, "message": …}`` with the origin's codes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from transcript_reader.mcp.names import ErrorCode, ToolFailure, ToolName

MARK = "\n[truncated]"

#: our codes -> the origin's (it has no root policy: every refusal of a path is file_not_readable)
ERRORS = {
    ErrorCode.PATH_REQUIRED: "path_required",
    ErrorCode.FILE_NOT_FOUND: "file_not_found",
    ErrorCode.SESSION_NOT_FOUND: "file_not_found",
    ErrorCode.NOT_A_FILE: "transcript_read_failed",
    ErrorCode.HARD_LINKED: "file_not_readable",
    ErrorCode.PERMISSION_DENIED: "file_not_readable",
    ErrorCode.OUTSIDE_ALLOWED_ROOTS: "file_not_readable",
    ErrorCode.TOO_LARGE: "file_not_readable",
    ErrorCode.TIMEOUT: "transcript_read_failed",
    ErrorCode.UNSUPPORTED_FORMAT: "provider_detection_failed",
    ErrorCode.PROVIDER_DETECTION_FAILED: "provider_detection_failed",
    ErrorCode.INTERNAL_ERROR: "transcript_read_failed",
}

STAT_KINDS = {"user_message": "userMessages", "assistant_message": "assistantMessages", "tool_call": "toolReads",
              "raw_output": "toolReads", "stdin_write": "toolWrites", "shell_command": "shellCommands",
              "patch": "patches", "test_run": "testRuns"}


def error_body(failure: ToolFailure) -> dict[str, Any]:
    """The one error envelope (``render.error_to_dict``) in the origin's flat form: ``error`` is the
    origin's code, ``message`` ours and the reason."""
    from transcript_reader.projections.render import error_to_dict

    known = failure.code in ErrorCode.__members__.values()
    code = ERRORS.get(ErrorCode(failure.code), failure.code) if known else failure.code
    envelope = error_to_dict(failure.code, failure.message)
    return {**envelope, "error": code, "message": f"{failure.code}: {failure.message}"}


def epoch_ms(value: Any) -> int | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _cut(text: str, limit: int) -> str:
    """The origin's per-field cut: the head (limit - 24 characters) and a marker line."""
    return text if len(text) <= limit else text[: max(0, limit - 24)] + MARK


def origin_item(item: dict[str, Any], per_item: int) -> dict[str, Any] | None:
    """One of our rendered items in the origin's shape, or None for kinds the origin has no name for
    (reasoning, context, notices: only our include flags ask for them)."""
    kind = item.get("kind")
    out: dict[str, Any] = {}
    if kind in ("user_message", "assistant_message"):
        out = {"kind": kind, "text": _cut(str(item.get("text") or ""), per_item)}
        if kind == "assistant_message" and item.get("final"):
            out["final"] = True
    elif kind == "shell_command":
        out = {"kind": kind, "cwd": item.get("cwd"), "command": _cut(str(item.get("command") or ""), per_item),
               "exitCode": item.get("exit_code"), "outputExcerpt": _excerpt(item.get("output"), per_item)}
    elif kind == "test_run":
        out = {"kind": kind, "command": _cut(str(item.get("command") or ""), per_item),
               "result": item.get("result") if item.get("result") in ("pass", "fail") else "unknown"}
    elif kind == "patch":
        files = [f.get("move_to") or f.get("path") for f in item.get("files") or () if isinstance(f, dict)]
        out = {"kind": kind, "files": files}
        more = int(item.get("more_files") or 0)
        if more:
            out["summary"] = f"…and {more} more files"
    elif kind == "tool_call":
        out = {"kind": "tool_read", "tool": str(item.get("name") or "tool"),
               "excerpt": _excerpt(item.get("arguments"), per_item)}
    elif kind == "raw_output":
        out = {"kind": "tool_read", "tool": "function_call_output", "excerpt": _excerpt(item.get("output"), per_item)}
    elif kind == "stdin_write":
        out = {"kind": "tool_write", "tool": "write_stdin", "target": item.get("session_id"),
               "summary": _excerpt(item.get("chars"), per_item)}
    else:
        return None
    ts = epoch_ms(item.get("timestamp"))
    if ts is not None:
        out = {"kind": out["kind"], "timestamp": ts, **{k: v for k, v in out.items() if k != "kind"}}
    return {k: v for k, v in out.items() if v is not None}


def _excerpt(value: Any, limit: int) -> str | None:
    return _cut(value, limit) if isinstance(value, str) and value else None


def search_text(item: dict[str, Any]) -> str:
    """The origin's ``itemSearchText``: what its size bound counts."""
    parts: list[Any] = []
    kind = item["kind"]
    if kind in ("user_message", "assistant_message"):
        parts = [item.get("text")]
    elif kind in ("tool_read", "tool_write"):
        parts = [item.get("tool"), item.get("target"), item.get("excerpt"), item.get("summary")]
    elif kind in ("shell_command", "test_run"):
        parts = [item.get("cwd"), item.get("command"), item.get("outputExcerpt")]
    elif kind == "patch":
        parts = [*item.get("files", ()), item.get("summary")]
    return "\n".join(str(p) for p in parts if p)


def stats(payload: dict[str, Any], returned: int) -> dict[str, Any]:
    st = payload.get("stats") or {}
    info = payload.get("info") or {}
    counts = st.get("counts") or info.get("counts") or {}
    lines = st.get("lines") or info.get("lines") or {}
    out = {"totalEvents": int(lines.get("lines") or 0) - int(lines.get("blank") or 0), "returnedItems": returned,
           "userMessages": 0, "assistantMessages": 0, "toolReads": 0, "toolWrites": 0, "shellCommands": 0,
           "patches": 0, "testRuns": 0, "parseErrors": int(lines.get("unreadable") or 0)}
    for kind, n in counts.items():
        key = STAT_KINDS.get(kind)
        if key is not None:
            out[key] += int(n)
    return out


def reshape_read(payload: dict[str, Any], max_chars: int, per_item: int, projection: str) -> dict[str, Any]:
    items = [o for o in (origin_item(i, per_item) for i in payload["items"]) if o is not None]
    kept, used = [], 0
    truncated = bool(payload.get("stats", {}).get("dropped_items"))
    for item in items:
        size = len(search_text(item))
        if used + size > max_chars:
            truncated = True
            break
        kept.append(item)
        used += size
    return {"ok": True, "path": payload["path"], "provider": payload.get("provider", "codex"), "projection": projection, "items": kept,
            "truncated": truncated, "stats": stats(payload, len(kept))}


def reshape_search(payload: dict[str, Any], per_match: int) -> dict[str, Any]:
    matches = []
    for m in payload["matches"]:
        item = origin_item(m["item"], per_match)
        if item is None:
            continue
        out: dict[str, Any] = {"item": item}
        for side in ("before", "after"):
            ctx = [o for o in (origin_item(i, per_match) for i in m.get(side) or ()) if o is not None]
            if ctx:
                out[side] = ctx
        matches.append(out)
    return {"ok": True, "path": payload["path"], "provider": payload.get("provider", "codex"), "query": payload["query"], "matches": matches,
            "truncated": bool(payload.get("truncated")), "stats": stats(payload, len(matches))}


def reshape_inspect(payload: dict[str, Any]) -> dict[str, Any]:
    info = payload["info"]
    out: dict[str, Any] = {"ok": True, "path": payload["path"], "provider": payload.get("provider", "codex")}
    for ours, theirs in (("first_timestamp", "firstTimestamp"), ("last_timestamp", "lastTimestamp")):
        ms = epoch_ms(info.get(ours))
        if ms is not None:
            out[theirs] = ms
    out["stats"] = stats(payload, 0)
    return out


def reshape(tool: ToolName, payload: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """Our payload for ``tool`` in the origin's shape (list_sessions and analyze are ours: unchanged)."""
    if tool is ToolName.READ:
        return reshape_read(payload, int(arguments.get("maxChars") or 24_000),
                            int(arguments.get("maxCharsPerItem") or 4_000), str(arguments.get("projection")))
    if tool is ToolName.SEARCH:
        return reshape_search(payload, int(arguments.get("maxCharsPerMatch") or 2_000))
    if tool is ToolName.INSPECT:
        return reshape_inspect(payload)
    return payload
