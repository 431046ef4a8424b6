"""The only definer of emitted JSON: items, read/search results and session info become plain dicts
(``str``/``int``/``float``/``bool``/``None``/``list``/``dict``). The CLI's ``--json``, the MCP server and
the census all call these, so a field is named once and every surface agrees.

Shape of an item: ``{"kind": …, "line": …, "timestamp": …, "turn_id": …, <the kind's fields>}``; every
field is present (``null`` when unknown) so consumers never guess whether a key was forgotten, except
``evidence``, which is there only when a rule rather than a record settled ``executed`` (``"proof"``):
its absence is the common case, and says the transcript's own records did.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from enum import Enum
from functools import cache
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from exec_grammar.render import MAX_JSON_DEPTH, TOO_DEEP, json_text
from transcript_reader.model import (
    AnyItem,
    FileChange,
    LineAccounting,
    ReadResult,
    ScriptStats,
    SearchMatch,
    SearchResult,
    SessionInfo,
    TokenUsage,
    UsageRow,
)

if TYPE_CHECKING:
    from transcript_reader.sessions.entry import SessionEntry

#: library-only fields: ``ToolCallItem.script`` repeats a cell's whole source, which ``arguments``
#: already carries as an excerpt; emitting it would make every bound (--max-chars, MCP) pay twice
_NOT_RENDERED = frozenset({"script"})


@cache
def _field_names(cls: Any) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.name not in _NOT_RENDERED)


def _value(v: Any, depth: int = 0) -> Any:
    """``v`` as JSON-ready data that every encoder can write, whatever a script put in it: a string's
    lone surrogates escaped, nesting cut at ``MAX_JSON_DEPTH`` (``exec_grammar.render``)."""
    if type(v) is str:
        return v if v.isascii() else json_text(v)
    if v is None or isinstance(v, int | float | bool) and not isinstance(v, Enum):
        return v
    if isinstance(v, Enum):
        return v.value
    if isinstance(v, FileChange):
        return file_change_to_dict(v)
    if isinstance(v, tuple | list | Mapping) and depth >= MAX_JSON_DEPTH:
        return TOO_DEEP
    if isinstance(v, tuple | list):
        return [_value(x, depth + 1) for x in v]
    if isinstance(v, Mapping):
        return {json_text(str(k)): _value(x, depth + 1) for k, x in v.items()}
    if isinstance(v, str):
        return json_text(v)
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, PurePath):
        return json_text(str(v))
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {n: _value(getattr(v, n), depth + 1) for n in _field_names(type(v))}
    return v


def file_change_to_dict(f: FileChange) -> dict[str, Any]:
    return {"path": _value(f.path), "op": f.op, "move_to": _value(f.move_to), "added": f.added,
            "removed": f.removed, "diff": _value(f.diff)}


#: fields rendered only when set (see the module docstring)
_WHEN_SET = frozenset({"evidence"})


def item_to_dict(item: AnyItem) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": item.kind.value}
    for name in _field_names(item.__class__):  # type: ignore[arg-type]
        v = getattr(item, name)
        if v is None and name in _WHEN_SET:
            continue
        d[name] = _value(v)
    return d


def item_to_json(item: AnyItem) -> bytes:
    """``item_to_dict(item)`` as compact JSON bytes, without building the dict's values one by one
    (orjson writes the dataclasses and enums of a field itself): the session store serialises every
    item of every session this way. A value orjson refuses (a lone surrogate) takes the slow path."""
    import orjson

    d: dict[str, Any] = {"kind": item.kind.value}
    for name in _field_names(item.__class__):  # type: ignore[arg-type]
        v = getattr(item, name)
        if v is None and name in _WHEN_SET:
            continue
        d[name] = v
    try:
        return orjson.dumps(d)
    except TypeError:
        import json

        return json.dumps(item_to_dict(item), ensure_ascii=True, separators=(",", ":")).encode("ascii")


def _pairs(pairs: tuple[tuple[str, int], ...]) -> dict[str, int]:
    return {k: v for k, v in pairs}


def tokens_to_dict(t: TokenUsage | None) -> dict[str, Any] | None:
    """A figure as JSON; None (unknown: the file records no usage) stays ``null``, never zeros."""
    if t is None:
        return None
    d = {"input": t.input, "cached_input": t.cached_input, "cache_write": t.cache_write, "output": t.output,
         "reasoning": t.reasoning, "total": t.total, "source": t.source}
    if t.cache_write_1h:  # Claude Code's 1-hour cache writes (a part of cache_write), only when there are
        d["cache_write_1h"] = t.cache_write_1h
    return d


def usage_to_list(rows: tuple[UsageRow, ...]) -> list[dict[str, Any]]:
    """``SessionInfo.usage`` as JSON: a row per model, day and service tier, with its prompt bands
    (``[above, calls, tokens]``; null: not known)."""
    return [{"model": r.model, "day": r.day, "tier": r.tier, "calls": r.calls, "tokens": tokens_to_dict(r.tokens),
             "bands": None if r.bands is None else [[a, n, tokens_to_dict(t)] for a, n, t in r.bands]}
            for r in rows]


def _tokens_from(d: dict[str, Any]) -> TokenUsage:
    return TokenUsage(input=d["input"], cached_input=d["cached_input"], cache_write=d["cache_write"],
                      cache_write_1h=d.get("cache_write_1h", 0), output=d["output"], reasoning=d["reasoning"],
                      total=d["total"], source=d["source"])


def tokens_from_dict(d: dict[str, Any] | None) -> TokenUsage | None:
    """The figure ``tokens_to_dict`` wrote (a stored ``info``'s), read back; ``null`` stays None."""
    return None if d is None else _tokens_from(d)


def usage_from_list(rows: list[dict[str, Any]]) -> tuple[UsageRow, ...]:
    """The rows ``usage_to_list`` wrote (a stored ``info``), read back to be priced."""
    return tuple(UsageRow(model=r["model"], day=r["day"], tier=r["tier"], calls=r["calls"],
                          tokens=_tokens_from(r["tokens"]),
                          bands=None if r["bands"] is None else tuple(
                              (a, n, _tokens_from(t)) for a, n, t in r["bands"]))
                 for r in rows)


def lines_to_dict(a: LineAccounting) -> dict[str, Any]:
    return {"lines": a.lines, "decoded": a.decoded, "known_noise": a.known_noise, "unknown": a.unknown,
            "unreadable": a.unreadable, "blank": a.blank, "unknown_types": _pairs(a.unknown_types),
            "noise_types": _pairs(a.noise_types), "cut_last_line": a.cut_last_line}


def scripts_to_dict(s: ScriptStats) -> dict[str, Any]:
    return {"scripts": s.scripts, "calls_by_tool": _pairs(s.calls_by_tool), "by_parser": _pairs(s.by_parser),
            "executed": _pairs(s.executed), "unresolved_patch_paths": s.unresolved_patch_paths,
            "whole_script_commands": s.whole_script_commands}


def info_to_dict(info: SessionInfo) -> dict[str, Any]:
    """Inspect as JSON. ``SessionInfo.title`` (the first prompt) is left out on purpose: no content."""
    return {
        "path": info.path, "format": info.format.value, "version": info.version, "session_id": info.session_id,
        "cwd": info.cwd, "models": list(info.models), "originator": info.originator, "source": info.source,
        "parent_session_id": info.parent_session_id, "forked_from_id": info.forked_from_id,
        "first_timestamp": info.first_timestamp, "last_timestamp": info.last_timestamp,
        "duration_s": info.duration_s, "turns": info.turns, "counts": _pairs(info.counts),
        "tokens": tokens_to_dict(info.tokens), "usage": usage_to_list(info.usage),
        "scripts": scripts_to_dict(info.scripts),
        "lines": lines_to_dict(info.lines), "run_status": info.run_status, "run_error": info.run_error,
    }  # no title: inspect carries metadata and figures, never content (the MCP contract)


def read_result_to_dict(r: ReadResult) -> dict[str, Any]:
    """``{"ok": true, "path", "format", "projection", "items", "truncated", "stats"}``."""
    stats: dict[str, Any] = {
        "total_items": r.total_items, "returned_items": len(r.items), "dropped_items": r.dropped_items,
        "truncated_chars": r.truncated_chars,
        "truncated_items": sum(1 for i in r.items if i.truncated_chars),
    }
    if r.info is not None:
        stats["lines"] = lines_to_dict(r.info.lines)
        stats["counts"] = _pairs(r.info.counts)
    return {"ok": True, "path": r.path, "format": r.format.value, "projection": r.projection,
            "items": [item_to_dict(i) for i in r.items], "truncated": r.truncated, "stats": stats}


def match_to_dict(m: SearchMatch) -> dict[str, Any]:
    return {"item": item_to_dict(m.item), "before": [item_to_dict(i) for i in m.before],
            "after": [item_to_dict(i) for i in m.after], "excerpt": m.excerpt}


def search_result_to_dict(r: SearchResult) -> dict[str, Any]:
    return {"ok": True, "path": r.path, "format": r.format.value, "query": r.query,
            "matches": [match_to_dict(m) for m in r.matches], "truncated": r.truncated,
            "stats": {"total_matches": r.total_matches, "returned_matches": len(r.matches)}}


def with_cost(d: dict[str, Any]) -> dict[str, Any]:
    """An ``info_to_dict`` (a fresh read's or a stored one) with the session's ``cost`` (usd, source,
    price_date, reason: usd null with the reason when it cannot be priced, never 0), priced from its
    ``usage`` rows. The cost is added here and not in ``info_to_dict`` because pricing imports the price
    data, which a listing never needs (and a stored figure would keep a price the data may since change)."""
    from transcript_reader.usage.pricing import price_rows, provider_of

    price = price_rows(usage_from_list(d["usage"]), provider=provider_of(d["format"]))
    return {**d, "cost": price.as_json()}


def inspect_to_dict(info: SessionInfo) -> dict[str, Any]:
    """``inspect --json`` and the MCP inspect answer: ``info_to_dict`` and the session's ``cost``."""
    return {"ok": True, "path": info.path, "format": info.format.value, "info": with_cost(info_to_dict(info))}


def error_to_dict(code: str, message: str, **context: Any) -> dict[str, Any]:
    """The one JSON error envelope (CLI ``--json``, MCP tool errors, the census): ``{"ok": false,
    <context>, "error": {"code", "message"}}``; ``context`` names what failed (a session, a path)."""
    return {"ok": False, **context, "error": {"code": code, "message": message}}


def session_row(summary: Any) -> dict[str, Any]:
    """A session listing row (``discovery``'s summary dataclass): every field, JSON-ready."""
    return _value(summary)  # type: ignore[no-any-return]


def analysis(a: Any) -> dict[str, Any]:
    """An ``exec_grammar`` Analysis, every field JSON-ready (entries and calls as lists of dicts)."""
    d: dict[str, Any] = _value(a)
    for e, raw in zip(d.get("entries", []), getattr(a, "entries", ()), strict=False):
        e.setdefault("kind", _value(getattr(raw, "kind", None)))
    return d


# Short names used by the MCP server and the terminal commands (same functions).
read_result = read_result_to_dict
search_result = search_result_to_dict
session_info = info_to_dict


def entry_to_dict(e: SessionEntry) -> dict[str, object]:
    """The JSON shape of a listed session (``ls --json``, the MCP ``list_sessions`` tool)."""
    s = e.stats
    tok = e.tokens
    return {
        "id": e.session_id,
        "path": e.path,
        "archived": e.archived,
        "provider": e.provider,
        "format": e.head.format.value if e.head.format else None,
        "started": e.head.timestamp,
        "last_timestamp": e.last_timestamp,
        "duration_s": e.duration_s,
        "title": e.title,
        "name": e.name,
        "first_prompt": e.head.title,
        "cwd": e.head.cwd,
        "model": e.head.model,
        "cli_version": e.head.cli_version,
        "originator": e.head.originator,
        "source": e.head.source,
        "parent_session_id": e.head.parent_session_id,
        "forked_from_id": e.head.forked_from_id,
        "agent_nickname": e.head.agent_nickname,
        "depth": e.depth,
        "parent_note": e.parent_note,
        "thread_files": list(e.thread_files) or [e.path],
        "size": e.size,
        "tokens": None if tok is None else {  # not dataclasses.asdict: ls renders 10,000 of these
            "input": tok.input, "cached_input": tok.cached_input, "cache_write": tok.cache_write,
            "output": tok.output, "reasoning": tok.reasoning, "total": tok.total, "source": tok.source},
        "stats": None if s is None else {
            "turns": s.turns, "commands": s.commands, "commands_failed": s.commands_failed,
            "files_changed": s.files_changed, "tests_passed": s.tests_passed, "tests_failed": s.tests_failed,
        },
        "error": e.head.error,
    }
