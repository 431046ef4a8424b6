"""The rollout envelope (0.40 → 0.171): ``{timestamp, type, payload}`` lines, with the later ``ordinal``,
``metadata``, ``world_state``, ``token_usage_record``, ``additional_tools`` and the PascalCase
``event_msg/item_completed`` items (0.150+). This module is the only reader of those keys; it knows
nothing about pairing (see ``transcript_reader.assembly``).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

import orjson

from transcript_reader.providers.codex.common import command_from_argv, decode_response_item, output_text
from transcript_reader.providers.codex.patch_text import file_changes
from transcript_reader.providers.codex.tokens import token_count_event
from transcript_reader.providers.records import (
    DECODED,
    NOISE,
    UNKNOWN,
    UNREADABLE,
    Call,
    Decoded,
    ExecEnd,
    Message,
    Meta,
    NoticeRec,
    PatchEnd,
    ReasoningRec,
    Record,
    Rollback,
    ToolEnd,
    TurnAborted,
    TurnContext,
    TurnEnd,
    TurnStart,
)

#: Top-level line types that carry nothing for the timeline (state snapshots, per-request usage copies).
NOISE_TOP = frozenset(
    {"world_state", "token_usage_record", "inter_agent_communication", "inter_agent_communication_metadata",
     "retained_context", "security_risk_score", "realtime_item"}
)

#: event_msg types that repeat what another line already says, or are UI-only.
NOISE_EVENTS = frozenset(
    {"exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin", "web_search_begin", "item_started",
     "exec_command_output_delta", "agent_message_delta", "agent_reasoning_delta", "agent_reasoning_raw_content",
     "agent_reasoning_raw_content_delta", "agent_reasoning_section_break", "turn_diff", "thread_settings_applied",
     "thread_name_updated", "session_configured", "mcp_startup_update", "mcp_startup_complete", "background_event",
     "plan_update", "get_history_entry_response", "mcp_list_tools_response", "list_custom_prompts_response",
     "shutdown_complete", "raw_response_item", "guardian_assessment", "thread_goal_updated",
     "sub_agent_activity", "injected_message", "rate_limits", "user_message_delta", "reasoning_content_delta",
     "dynamic_tool_call_begin", "dynamic_tool_call_request", "collab_agent_spawn_begin",
     "collab_agent_interaction_begin",
     "collab_waiting_begin", "collab_close_begin", "terminal_interaction", "plan_delta",
     "request_user_input", "elicitation_request", "exec_approval_request", "apply_patch_approval_request"}
)

#: item_completed items that repeat a response_item (Plan: update_plan call; WebSearch: web_search_call).
NOISE_ITEMS = frozenset({"Plan", "WebSearch", "ContextCompaction", "Sleep", "HookPrompt"})


#: Bare Responses items (no envelope) that some public rollout fixtures mix in: read as items.
BARE_ITEMS = frozenset({"message", "function_call", "function_call_output", "reasoning", "custom_tool_call",
                        "custom_tool_call_output", "local_shell_call"})


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _cwd(v: Any) -> str | None:
    """A cwd as a path: records write a file URL (``file:///w``), percent-encoded (``my%20dir``), and a
    Windows drive as ``file:///C:/repo``, whose path is ``C:/repo`` (RFC 8089), not ``/C:/repo``."""
    s = _s(v)
    if s and s.startswith("file://"):
        rest = s[len("file://"):]
        if rest[:10].lower() == "localhost/":  # RFC 8089: the local host, named (any case)
            rest = rest[len("localhost"):]
        elif rest and not rest.startswith("/"):  # a host: a UNC path (\\server\share, \\wsl.localhost\…)
            rest = "//" + rest
        path = unquote(rest)
        if _DRIVE_PATH.match(path):
            path = path[1:]
        return path or None
    return s


_DRIVE_PATH = re.compile(r"/[A-Za-z]:(?:[/\\]|$)")


def _duration(v: Any) -> float | None:
    if isinstance(v, dict):
        secs = v.get("secs", 0)
        nanos = v.get("nanos", 0)
        if isinstance(secs, int | float) and isinstance(nanos, int | float):
            return float(secs) + float(nanos) / 1e9
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v)
    return None


def source_text(src: Any) -> tuple[str | None, str | None]:
    """(source as text, parent session id) from ``session_meta.source`` (string or tagged object)."""
    if isinstance(src, str):
        return src, None
    if isinstance(src, dict):
        if "subagent" in src:
            sub = src["subagent"]
            if isinstance(sub, str):
                return f"subagent:{sub}", None
            if isinstance(sub, dict):
                spawn = sub.get("thread_spawn")
                if isinstance(spawn, dict):
                    return "subagent:thread_spawn", _s(spawn.get("parent_thread_id"))
                other = sub.get("other")
                if isinstance(other, str):
                    return f"subagent:{other}", None
                return "subagent", None
        if "custom" in src:
            return f"custom:{src['custom']}", None
        keys = list(src)
        return (keys[0] if keys else None), None
    return None, None


def _nickname(p: dict[str, Any]) -> str | None:
    """``agent_nickname`` of a sub-agent's session_meta: top level, else inside its thread_spawn source."""
    nick = _s(p.get("agent_nickname"))
    if nick is None:
        sub = _d(_d(p.get("source")).get("subagent"))
        nick = _s(_d(sub.get("thread_spawn")).get("agent_nickname"))
    return nick


def _count(v: Any) -> int | None:
    n = _int(v)
    return n if n is not None and n >= 0 else None


def meta_from(p: dict[str, Any]) -> Meta:
    """The one reader of a ``session_meta`` payload (the full read and the head read both call it)."""
    source, parent = source_text(p.get("source"))
    base = _d(p.get("history_base"))
    return Meta(
        session_id=_s(p.get("id")) or _s(p.get("session_id")),
        cwd=_s(p.get("cwd")),
        originator=_s(p.get("originator")),
        version=_s(p.get("cli_version")),
        source=source,
        parent_session_id=parent or _s(p.get("parent_thread_id")),
        forked_from_id=_s(p.get("forked_from_id")),
        timestamp=_s(p.get("timestamp")),
        model=_s(p.get("model")),
        agent_nickname=_nickname(p),
        history_thread=_s(base.get("thread_id")),
        history_end_ordinal=_count(base.get("end_ordinal_exclusive")),
        history_end_offset=_count(base.get("end_byte_offset")),
        history_mode=_s(p.get("history_mode")),
    )


def history_notice(m: Meta) -> NoticeRec | None:
    """What a ``history_base`` says, as a notice at the top of the file (Codex 0.154+ writes no copy of
    inherited history: the file alone must say where it is). Same thread id: a segment Codex started
    after a rewind, continuing its base file before that ordinal (the base's later lines were rewound
    away). Another id (``forked_from_id``): a fork, whose copied history ends there in the parent."""
    if m.history_thread is None:
        return None
    upto = f"ordinal {m.history_end_ordinal}" if m.history_end_ordinal is not None else "its end"
    if m.history_end_offset is not None:
        upto += f" (byte {m.history_end_offset})"
    if not m.forked_from_id or m.forked_from_id == m.session_id:
        return NoticeRec("segment", f"this file continues thread {m.history_thread} after a rewind: the history "
                                    f"before it is the base file's up to {upto}; the base's later turns were "
                                    f"rewound away")
    parent = m.forked_from_id or m.history_thread
    return NoticeRec("fork", f"forked from session {parent}: the history it copied lives in the parent's file "
                             f"(rollout {m.history_thread}) and ends at {upto}; this session's own work starts here")


def _item_completed(p: dict[str, Any], line: int, ts: str | None) -> Decoded:
    item = p.get("item")
    if not isinstance(item, dict):
        return Decoded(line, UNKNOWN, "item_completed/?", timestamp=ts)
    it = item.get("type")
    if not isinstance(it, str):
        return Decoded(line, UNKNOWN, "item_completed/?", timestamp=ts)
    name = f"item_completed/{it}"
    rec: Record
    if it == "UserMessage":
        content = item.get("content")
        texts: list[str] = []
        images: list[str] = []
        if isinstance(content, list):
            for c in content:
                if not isinstance(c, dict):
                    continue
                if isinstance(c.get("text"), str):
                    texts.append(c["text"])
                elif c.get("type") in ("image", "local_image"):
                    ref = c.get("image_url") or c.get("path")
                    if isinstance(ref, str):
                        images.append(ref if not ref.startswith("data:") else ref[: ref.find(",") + 1] + "…")
        rec = Message(role="user", text="\n".join(texts), src="item", images=tuple(images))
    elif it == "AgentMessage":
        content = item.get("content")
        texts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)] \
            if isinstance(content, list) else []
        if not texts and isinstance(item.get("text"), str):
            texts = [item["text"]]
        rec = Message(role="assistant", text="".join(texts), src="item", phase=_s(item.get("phase")))
    elif it == "Reasoning":
        summ = item.get("summary_text")
        parts = [s for s in summ if isinstance(s, str)] if isinstance(summ, list) else []
        if not parts:
            return Decoded(line, DECODED, name, (), ts)
        rec = ReasoningRec("\n\n".join(parts), "item")
    elif it == "CommandExecution":
        cmd = item.get("command")
        argv = tuple(x for x in cmd if isinstance(x, str)) if isinstance(cmd, list) else None
        command = command_from_argv(argv) if argv else (_s(cmd) or "")
        rec = ExecEnd(call_id=_s(item.get("id")), command=command, argv=argv, cwd=_cwd(item.get("cwd")),
                      exit_code=_int(item.get("exit_code")), output=_s(item.get("aggregated_output")),
                      duration_s=_duration(item.get("duration")), status=_s(item.get("status")), record=True)
    elif it == "FileChange":
        status = _s(item.get("status"))
        out = "".join(x for x in (_s(item.get("stdout")), _s(item.get("stderr"))) if x)
        rec = PatchEnd(call_id=_s(item.get("id")), files=file_changes(item.get("changes")),
                       success=None if status is None else status == "completed", output=out or None, record=True,
                       status=status)
    elif it in ("McpToolCall", "DynamicToolCall", "CollabAgentToolCall", "ImageGeneration"):
        server = _s(item.get("server"))
        tool = _s(item.get("tool")) or _s(item.get("name")) or it
        namespace = _s(item.get("namespace"))
        if namespace and it == "DynamicToolCall":
            tool = f"{namespace}.{tool}"  # named as its dynamic_tool_call_response event names it
        status = _s(item.get("status"))
        res = next((item[k] for k in ("result", "error", "content_items", "contentItems") if item.get(k) is not None),
                   None)
        args = item.get("arguments")
        succ = item.get("success")
        rec = ToolEnd(call_id=_s(item.get("id")), name=f"mcp__{server}__{tool}" if server else tool,
                      arguments=args if isinstance(args, str) else ("" if args is None else orjson.dumps(args).decode()),
                      result=None if res is None else (res if isinstance(res, str) else output_text(res)[0] or str(res)),
                      success=False if isinstance(res, dict) and res.get("isError") is True else (
                          succ if isinstance(succ, bool) else (None if status is None else status == "completed")),
                      record=True)
    elif it == "ImageView":
        # a view_image call a code-mode cell made (public alaarab 0.157.1 fixture, line 22): no status, the
        # record is written once the image was read
        rec = ToolEnd(call_id=_s(item.get("id")), name="view_image", result=_cwd(item.get("path")), success=True,
                      record=True)
    elif it == "InjectedContext":
        # context the harness put before the model ({id, title, preview, sections: [{label, text}]}), which
        # Codex persists because raw response items do not carry it whole (codex-rs rollout policy)
        sections = item.get("sections")
        parts = [f"{sec['label']}:\n{sec['text']}" if isinstance(sec.get("label"), str) and sec["label"] else sec["text"]
                 for sec in (sections if isinstance(sections, list) else [])
                 if isinstance(sec, dict) and isinstance(sec.get("text"), str)]
        title = _s(item.get("title"))
        text = "\n\n".join(parts) or _s(item.get("preview")) or ""
        rec = Message(role="developer", text=f"{title}\n\n{text}" if title else text, src="item",
                      context_label="injected_context")
    elif it in NOISE_ITEMS:
        return Decoded(line, NOISE, name, (), ts)
    else:
        return Decoded(line, UNKNOWN, name, (), ts)
    return Decoded(line, DECODED, "event_msg/item_completed", (rec,), ts)


def mcp_result(res: Any) -> tuple[str | None, bool | None]:
    """(text, success) of an MCP call's result, ``{"Ok": CallToolResult}`` or ``{"Err": message}``: the one
    reader of that result, for a rollout's ``mcp_tool_call_end`` and both exec-stream protocols (the
    thread stream's item carries the ``Ok`` side bare)."""
    if isinstance(res, dict) and "Ok" in res:
        ok = res["Ok"]
        return output_text(ok.get("content") if isinstance(ok, dict) else ok)[0], \
            not (isinstance(ok, dict) and ok.get("isError") is True)
    if isinstance(res, dict) and "Err" in res:
        return str(res["Err"]), False
    return None, None


def decode_event(p: Any, line: int, ts: str | None) -> Decoded:
    if not isinstance(p, dict) or not isinstance(p.get("type"), str):
        return Decoded(line, UNKNOWN, "event_msg/?", timestamp=ts)
    t: str = p["type"]
    if t == "item_completed":  # first: 0.150+ writes one per message, command and patch
        return _item_completed(p, line, ts)
    name = f"event_msg/{t}"
    recs: tuple[Record, ...]
    if t == "user_message":
        msg = _s(p.get("message")) or ""
        imgs = p.get("images")
        images = tuple(i if not i.startswith("data:") else i[: i.find(",") + 1] + "…"
                       for i in imgs if isinstance(i, str)) if isinstance(imgs, list) else ()
        recs = (Message(role="user", text=msg, src="event", images=images),)
    elif t == "agent_message":
        recs = (Message(role="assistant", text=_s(p.get("message")) or "", src="event", phase=_s(p.get("phase"))),)
    elif t == "agent_reasoning":
        recs = (ReasoningRec(_s(p.get("text")) or "", "event"),)
    elif t == "token_count":
        ev = token_count_event(p)
        recs = (ev,) if ev is not None else ()
    elif t in ("task_started", "turn_started"):
        recs = (TurnStart(_s(p.get("turn_id"))),)
    elif t in ("task_complete", "turn_complete"):
        lam = p.get("last_agent_message")
        recs = (TurnEnd(_s(p.get("turn_id")), _s(lam), "last_agent_message" in p),)
        err = p.get("error")
        if err is not None:
            # a turn that ended in an error (public siteboon fixture: a failed remote compaction)
            msg = _s(_d(err).get("message")) or (_s(err) or "turn failed")
            recs = (NoticeRec("error", msg), *recs)
    elif t == "turn_aborted":
        recs = (TurnAborted(_s(p.get("turn_id")), _s(p.get("reason")) or "aborted"),)
    elif t == "context_compacted":
        recs = (NoticeRec("compaction", "context compacted"),)
    elif t == "thread_rolled_back":
        n = _count(p.get("num_turns"))
        recs = (Rollback(n),)
    elif t == "undo_completed":
        ok = p.get("success")
        recs = (NoticeRec("undo", _s(p.get("message")) or ("undo succeeded" if ok else "undo failed")),)
    elif t in ("entered_review_mode", "exited_review_mode"):
        recs = (NoticeRec("review", t.replace("_", " ")),)
    elif t in ("error", "stream_error", "warning"):
        recs = (NoticeRec(t, _s(p.get("message")) or t),)
    elif t == "exec_command_end":
        cmd = p.get("command")
        argv = tuple(x for x in cmd if isinstance(x, str)) if isinstance(cmd, list) else None
        out = _s(p.get("aggregated_output"))
        if out is None:
            out = "".join(x for x in (_s(p.get("stdout")), _s(p.get("stderr"))) if x) or None
        recs = (ExecEnd(call_id=_s(p.get("call_id")), command=command_from_argv(argv) if argv else "", argv=argv,
                        cwd=_cwd(p.get("cwd")), exit_code=_int(p.get("exit_code")), output=out,
                        duration_s=_duration(p.get("duration")), status=_s(p.get("status")), record=False),)
    elif t == "patch_apply_end":
        out = "".join(x for x in (_s(p.get("stdout")), _s(p.get("stderr"))) if x)
        succ = p.get("success")
        recs = (PatchEnd(call_id=_s(p.get("call_id")), files=file_changes(p.get("changes")),
                         success=succ if isinstance(succ, bool) else None, output=out or None, record=False,
                         status=_s(p.get("status"))),)
    elif t == "mcp_tool_call_end":
        inv = p.get("invocation")
        if not isinstance(inv, dict):  # no invocation object: the server and tool, if any, stand beside the result
            inv = p
        text, success = mcp_result(p.get("result"))
        recs = (ToolEnd(call_id=_s(p.get("call_id")),
                        name=f"mcp__{_s(inv.get('server')) or '?'}__{_s(inv.get('tool')) or '?'}",
                        result=text, success=success),)
    elif t == "web_search_end":
        recs = (ToolEnd(call_id=_s(p.get("call_id")), name="web_search", result=_s(p.get("query")), success=True),)
    elif t == "view_image_tool_call":
        recs = (ToolEnd(call_id=_s(p.get("call_id")), name="view_image", result=_s(p.get("path")), success=True),)
    elif t == "image_generation_end":
        st = _s(p.get("status"))
        recs = (ToolEnd(call_id=_s(p.get("call_id")), name="image_generation", result=_s(p.get("saved_path")),
                        success=None if st is None else st == "completed"),)
    elif t == "dynamic_tool_call_response":
        # a tool the client app provides (codex-rs DynamicToolCallResponseEvent: call_id, namespace?, tool,
        # arguments, content_items, success, error?): named and shown like an MCP call
        tool = _s(p.get("tool")) or "dynamic_tool"
        ns = _s(p.get("namespace"))
        args = p.get("arguments")
        items = p.get("content_items")
        text = output_text(items)[0] if isinstance(items, list) else ""
        succ = p.get("success")
        recs = (ToolEnd(call_id=_s(p.get("call_id")), name=f"{ns}.{tool}" if ns else tool,
                        arguments=args if isinstance(args, str) else ("" if args is None else orjson.dumps(args).decode()),
                        result=text or _s(p.get("error")), success=succ if isinstance(succ, bool) else None),)
    elif t in ("collab_agent_spawn_end", "collab_agent_interaction_end", "collab_waiting_end", "collab_close_end"):
        # completion of a sub-agent or dynamic tool call: evidence that the call ran (public codemie fixture)
        status = _s(p.get("status"))
        succ = p.get("success")
        detail = (_s(p.get("new_thread_id")) or _s(p.get("receiver_thread_id"))
                  or (_s(p.get("error")) if p.get("error") is not None else None))
        recs = (ToolEnd(call_id=_s(p.get("call_id")), name=t.removesuffix("_end").removesuffix("_response"),
                        result=detail,
                        success=succ if isinstance(succ, bool) else (None if status is None else status != "failed")),)
    elif t in NOISE_EVENTS or t.endswith(("_delta", "_begin")):
        return Decoded(line, NOISE, name, (), ts)
    else:
        return Decoded(line, UNKNOWN, name, (), ts)
    return Decoded(line, DECODED, name, recs, ts)


def decode_rollout(obj: Any, line: int) -> Decoded:
    """One parsed rollout line -> its accounting class and records; a numbered line (``ordinal``) also
    says its number and the thread and turn ids it names (``codex.numbering`` tells sessions apart by
    them)."""
    d = _decode_line(obj, line)
    if obj.__class__ is dict and (o := obj.get("ordinal")).__class__ is int:
        d.ordinal = o
        p = obj.get("payload")
        if p.__class__ is dict:
            d.thread, d.turn = _line_ids(obj.get("type"), p)
    return d


def _line_ids(t: Any, p: dict[str, Any]) -> tuple[str | None, str | None]:
    """(thread id, turn id) a rollout line's payload names: the header's own id, ``thread_id`` of
    records and settings, the turn of turn events, of records and (0.150+) of every response item."""
    thread = p.get("id") if t == "session_meta" else p.get("thread_id")
    turn = p.get("turn_id")
    if turn is None:
        for key in ("internal_chat_message_metadata_passthrough", "turn_attribution"):
            inner = p.get(key)
            if inner.__class__ is dict:
                turn = inner.get("turn_id")
                break
    return (thread if thread.__class__ is str else None), (turn if turn.__class__ is str else None)


def _decode_line(obj: Any, line: int) -> Decoded:
    if not isinstance(obj, dict):
        return Decoded(line, UNREADABLE, reason="line is JSON but not an object")
    t = obj.get("type")
    ts = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    if not isinstance(t, str):
        # bare items in an envelope file: some public fixtures mix shapes
        if "record_type" in obj:
            return Decoded(line, NOISE, "record_type", timestamp=ts)
        return Decoded(line, UNREADABLE, reason="no 'type' field", timestamp=ts)
    p = obj.get("payload")
    if t == "response_item":
        return decode_response_item(p, line, ts)
    if t == "event_msg":
        return decode_event(p, line, ts)
    if t == "session_meta":
        if not isinstance(p, dict):
            return Decoded(line, UNREADABLE, reason="session_meta without an object payload", timestamp=ts)
        meta = meta_from(p)
        notice = history_notice(meta)
        return Decoded(line, DECODED, t, (meta,) if notice is None else (meta, notice), ts)
    if t == "turn_context":
        if not isinstance(p, dict):
            return Decoded(line, UNREADABLE, reason="turn_context without an object payload", timestamp=ts)
        return Decoded(line, DECODED, t, (TurnContext(model=_s(p.get("model")), cwd=_s(p.get("cwd")),
                                                      turn_id=_s(p.get("turn_id")),
                                                      tier=_s(p.get("service_tier"))),), ts)
    if t == "compacted":
        msg = _s(p.get("message")) if isinstance(p, dict) else None
        return Decoded(line, DECODED, t, (NoticeRec("compaction", msg or "history compacted"),), ts)
    if t in NOISE_TOP:
        return Decoded(line, NOISE, t, (), ts)
    if t in BARE_ITEMS and p is None:
        return decode_response_item(obj, line, ts)
    return Decoded(line, UNKNOWN, t, (), ts)


__all__ = ["decode_rollout", "decode_event", "meta_from", "mcp_result", "file_changes", "Call"]
