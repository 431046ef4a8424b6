"""The events of both ``codex exec --json`` protocols as decode records, for ``ExecStreamDecoder``:

- the 0.50+ *thread* stream: ``thread.started`` / ``turn.*`` / ``item.started|updated|completed{item}`` /
  ``error`` / ``request_user_input`` (and the 0.20-0.40 stream's leading config and ``{"prompt"}`` lines);
- the older ``{id, msg}`` *protocol* stream: raw protocol events, the same events a rollout's
  ``event_msg`` lines carry, so messages, reasoning and the ends of commands and patches are read by the
  rollout's reader (``rollout.decode_event``); what differs is named where it is read.

An item becomes a ``Call`` with ``origin=STREAM``: its first event places it, later ones move it (the
assembler), its completion carries its end (``Call.end``). Items still open when their turn ends are
ended ``in_progress`` by the decoder (``ExecStreamDecoder.open_ends``). Turns, answers, pairing, test
runs and excerpts are the assembler's; the turn records say which final-answer rule applies.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from exec_grammar.shell import command_from_argv
from transcript_reader.model import Origin, TokenUsage
from transcript_reader.providers.codex.exec_run import header_config, session_configured
from transcript_reader.providers.codex.exec_values import (
    Malformed,
    OpenItem,
    as_int,
    as_str,
    json_text,
    split_shell_command,
    thread_changes,
)
from transcript_reader.providers.codex.patch_text import file_changes
from transcript_reader.providers.codex.rollout import decode_event, mcp_result
from transcript_reader.providers.codex.sniff import PROTOCOL_HEADER_KEYS
from transcript_reader.providers.codex.tokens import add_tokens, token_count_usage
from transcript_reader.providers.records import (
    Call,
    ExecEnd,
    Message,
    NoticeRec,
    PatchEnd,
    ReasoningRec,
    Record,
    ToolEnd,
    TurnEnd,
    TurnStart,
)


class StreamDecoder(Protocol):
    """What the events need of the stream's decoder (``exec_stream.ExecStreamDecoder``): its run state
    (``exec_run.RunState``) and the steps that change it. Given in, not imported: the decoder reads its
    lines through these events."""

    turns: int
    in_turn: bool
    loose: bool
    turn_messages: int
    open: dict[str, OpenItem]
    pending_error: str | None
    thread_id: str | None
    model: str | None
    cwd: str | None
    usage_sum: list[int]
    usage_turns: int
    usage_cumulative: TokenUsage | None
    usage_flat: int

    def noise(self, name: str) -> None: ...
    def unknown(self, name: str) -> None: ...
    def start_turn(self, *, protocol: bool) -> list[Record]: ...
    def close_turn(self, *, completed: bool, why: str = "") -> list[Record]: ...
    def message(self) -> None: ...
    def fail(self, message: str) -> None: ...
    def failure_notice(self, category: str, message: str) -> list[Record]: ...
    def error_notice(self, message: str, category: str = "error") -> list[Record]: ...
    def add_usage(self, usage: dict[str, Any]) -> None: ...

STREAM = Origin.STREAM
R = TypeVar("R")

#: Thread-stream events recognised and deliberately not used (the completed item carries the text).
_THREAD_NOISE = frozenset({"item.plan.delta"})

#: An item type as a notice names it.
_ITEM_WORDS = {"agent_message": "the message", "reasoning": "the reasoning", "command_execution": "the command",
               "file_change": "the file change", "mcp_tool_call": "the tool call", "error": "the warning"}
_THREAD_ITEM_TYPES = frozenset({"agent_message", "reasoning", "command_execution", "file_change", "mcp_tool_call",
                                "collab_tool_call", "web_search", "todo_list", "plan", "error"})

#: Protocol events recognised and deliberately not used: deltas repeat what an ``*_end``/full message
#: carries, ``turn_diff`` repeats the patches, the rest are UI or session plumbing. `codex exec` of that
#: era ran with approval "never": a request is never answered in the stream, and what ran still shows as
#: exec_command_begin/end or patch_apply_begin/end.
_PROTOCOL_NOISE = frozenset({
    "agent_message_delta", "agent_reasoning_delta", "agent_reasoning_raw_content_delta",
    "agent_reasoning_section_break", "exec_command_output_delta", "turn_diff", "background_event",
    "get_history_entry_response", "mcp_list_tools_response", "list_custom_prompts_response", "shutdown_complete",
    "conversation_path", "exec_approval_request", "apply_patch_approval_request", "web_search_begin",
    "mcp_tool_call_begin", "entered_review_mode", "exited_review_mode", "mcp_startup_update",
    "mcp_startup_complete", "session_configured_v2",
})

_FINISHED = ("completed", "failed")


def _read(msg: dict[str, Any], kind: type[R]) -> R:
    """The ``kind`` record of a protocol event, as the rollout's event reader gives it (the payload is
    the one a rollout's ``event_msg`` line carries)."""
    rec = decode_event(msg, 0, None).records[-1]  # the event's own record (a notice may stand before it)
    if not isinstance(rec, kind):
        raise Malformed(f"{msg['type']} read as {type(rec).__name__}")
    return rec


def _end_as_call(end: ToolEnd, arguments: str, *, keep_result: bool) -> Call:
    """The stream's call of a protocol tool end the rollout's reader gave: complete on its line, with
    ``arguments``; its end keeps its result (an MCP result) or, where that result was what the call
    asked (a query, a path), none."""
    if not keep_result:
        end.result = None
    end.status = "completed"
    return Call(kind="tool", tool=end.name, name=end.name, arguments=arguments, call_id=end.call_id, origin=STREAM,
                end=end)


def tool_call(name: str, arguments: object, call_id: str | None, *, result: str | None = None,
              success: bool | None = None, status: str | None = "completed") -> Call:
    """A tool item of either stream, complete on its line (``status`` None: nothing says it ran)."""
    return Call(kind="tool", tool=name, name=name, arguments=json_text(arguments), call_id=call_id, origin=STREAM,
                end=ToolEnd(call_id, name, result=result, success=success, status=status))


def open_status(status: str | None) -> str:
    """The status of an item its turn's end found unfinished: what it last said, but never that it
    finished (it did not: its completion was never printed)."""
    return status if status and status not in _FINISHED else "in_progress"


def thread_tool(item: dict[str, Any], iid: str | None, status: str | None, *, finished: bool) -> Call:
    """A thread stream's tool item (MCP, collab, web search, todo list, plan) as a tool call."""
    item_type = item.get("type")
    if item_type == "mcp_tool_call":
        error = item.get("error")
        raw_result = item.get("result")
        # the item carries the Ok side of the result bare: read by the rollout's MCP result reader
        result, ok = mcp_result({"Ok": raw_result}) if raw_result is not None else (None, None)
        if isinstance(error, dict) and error.get("message"):
            result, ok = json_text(error.get("message")), False
        if status == "failed":
            ok = False
        elif status == "completed" and ok is None:
            ok = True
        name = f"mcp__{as_str(item.get('server')) or '?'}__{as_str(item.get('tool')) or '?'}"
        return tool_call(name, item.get("arguments"), iid, result=result, success=ok, status=status)
    if item_type == "collab_tool_call":
        args = {k: item.get(k) for k in ("prompt", "receiver_thread_ids", "sender_thread_id") if k in item}
        states = item.get("agents_states")
        return tool_call(as_str(item.get("tool")) or "collab_tool_call", args, iid,
                         result=json_text(states) if states else None,
                         success={"completed": True, "failed": False}.get(status or ""), status=status)
    done = "completed" if finished else None
    if item_type == "web_search":
        query = as_str(item.get("query")) or ""
        action = item.get("action")
        return tool_call("web_search", query if not action else {"query": query, "action": action}, iid,
                         success=True if finished else None, status=done)
    if item_type == "todo_list":
        steps = item.get("items")
        lines = [f"[{'x' if step.get('completed') else ' '}] {as_str(step.get('text')) or ''}"
                 for step in (steps if isinstance(steps, list) else ()) if isinstance(step, dict)]
        return tool_call("update_plan", "\n".join(lines), iid, status=done)
    return tool_call("plan", as_str(item.get("text")) or "", iid, status=done)


def proto_command(data: dict[str, Any], call_id: str | None) -> Call:
    """A protocol command (its begin, or its begin and end merged) as a call: an argv, or a command line."""
    raw_command = data.get("command")
    argv: tuple[str, ...] | None
    if isinstance(raw_command, list) and all(isinstance(a, str) for a in raw_command):
        argv = tuple(raw_command)
        command = command_from_argv(argv)
    elif isinstance(raw_command, str):
        command, argv = split_shell_command(raw_command)
    else:
        command, argv = "", None
    return Call(kind="shell", tool="command_execution", call_id=call_id, command=command, argv=argv,
                cwd=as_str(data.get("cwd")), origin=STREAM)


class StreamEvents:
    """Both protocols' events, read into the decoder's state and decode records."""

    def __init__(self, d: StreamDecoder) -> None:
        self.d = d

    # ------------------------------------------------------------------ the thread stream (0.50+)

    def header(self, obj: dict[str, Any]) -> list[Record]:
        """The 0.20-0.40 stream's first two lines: a config summary, then ``{"prompt": …}``."""
        if "prompt" in obj and isinstance(obj["prompt"], str):
            # the prompt opens the turn it asks for (the next task_started names the same turn)
            return [TurnStart(f"turn-{self.d.turns + 1}", last_item_answers=True),
                    Message(role="user", text=obj["prompt"], src="stream")]
        if set(obj) & PROTOCOL_HEADER_KEYS:
            model, cwd = header_config(obj)
            self.d.model = model or self.d.model
            self.d.cwd = cwd or self.d.cwd
            return []
        self.d.unknown("<object without type>")
        return []

    def thread(self, obj: dict[str, Any]) -> list[Record]:
        d = self.d
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise Malformed("'type' is not a string")
        if kind in _THREAD_NOISE:
            d.noise(kind)
            return []
        if kind == "thread.started":
            tid = as_str(obj.get("thread_id"))
            if tid is not None and d.thread_id is not None and tid != d.thread_id:
                # another run appended to the same file (``codex exec --json … >> log``): the file keeps
                # its first thread's id, as a rollout keeps its own header, and says where the next begins
                return [NoticeRec("thread", f"another run starts here (thread {tid}); the figures cover every run "
                                            "in this file, the session id is the first run's")]
            d.thread_id = tid or d.thread_id
            return []
        if kind == "turn.started":
            return d.start_turn(protocol=False)
        if kind == "turn.completed":
            usage = obj.get("usage")
            if usage is not None and not isinstance(usage, dict):
                raise Malformed("turn.completed 'usage' is not an object")
            if usage:
                d.add_usage(usage)
                d.usage_turns += 1
            d.pending_error = None  # the turn completed: its error events were retried, not fatal
            if not d.in_turn:  # a turn.completed with no turn.started: still the end of a turn
                d.turns = max(d.turns, 1)
            return d.close_turn(completed=True)
        if kind == "turn.failed":
            error = obj.get("error")
            message = (as_str(error.get("message")) if isinstance(error, dict) else as_str(error)) or "turn failed"
            d.fail(d.pending_error or message)
            d.pending_error = None
            return [*d.error_notice(message), *d.close_turn(completed=False)]
        if kind == "error":
            # Codex prints a fatal error and a retried stream error ("Reconnecting… 1/5") alike; only what
            # follows tells them apart: turn.failed (or no end at all) vs. turn.completed.
            message = as_str(obj.get("message")) or "error"
            if d.pending_error is None:
                d.pending_error = message
            return d.error_notice(message)
        if kind == "request_user_input":
            return [tool_call("request_user_input", obj.get("questions"),
                              as_str(obj.get("call_id")) or as_str(obj.get("id")), status=None)]
        if kind in ("item.started", "item.updated", "item.completed"):
            return self.item_event(kind, obj)
        d.unknown(kind)
        return []

    def item_event(self, kind: str, obj: dict[str, Any]) -> list[Record]:
        d = self.d
        item = obj.get("item")
        if not isinstance(item, dict):
            raise Malformed(f"{kind} without an item object")
        item_type = item.get("type")
        if not isinstance(item_type, str):
            raise Malformed(f"{kind} item without a string type")
        if item_type not in _THREAD_ITEM_TYPES:
            d.unknown(f"item:{item_type}")
            return []
        item_id = as_str(item.get("id"))
        key = f"item:{item_id}" if item_id is not None else None
        # an item whose first event comes once its turn has ended (after ``turn.completed`` or
        # ``turn.failed``, before any next ``turn.started``) belongs to no open turn: said, once an item
        # (fixture exec_streams/after_turn_completed)
        late: list[Record] = []
        if not d.in_turn and d.turns and (key is None or key not in d.open):
            late = [NoticeRec("after_turn", f"{_ITEM_WORDS.get(item_type, item_type)} {item_id or ''} came after "
                                            f"turn {d.turns} had ended: it belongs to no open turn".replace("  ", " "))]
        if kind != "item.completed":
            if key is None:
                return late  # nothing to pair it with; the completed event will carry the item
            d.open[key] = OpenItem(item)
            if item_type in ("agent_message", "reasoning", "error"):
                return late  # shown once complete (or, never completed, when its turn ends)
            return [*late, self.thread_call(item, finished=None)]
        if key is not None:
            d.open.pop(key, None)
        return [*late, *self.thread_item(item, finished=True)]

    def thread_item(self, item: dict[str, Any], *, finished: bool) -> list[Record]:
        """A completed item's records (``finished``), or those of one its turn's end found open."""
        item_type = item.get("type")
        if item_type == "agent_message":
            if finished:
                self.d.message()
            else:  # started, never completed: not an answer, wherever it stands
                self.d.loose = True
            return [Message(role="assistant", text=as_str(item.get("text")) or "", src="stream",
                            phase=as_str(item.get("phase")))]
        if item_type == "reasoning":
            return [ReasoningRec(as_str(item.get("text")) or "", "stream")]
        if item_type == "error":
            # Non-fatal: real streams use it for warnings (corpus code_mode_flag); never a run failure.
            return [NoticeRec("warning", as_str(item.get("message")) or "", item=True)]
        call = self.thread_call(item, finished=finished)
        return [call] if finished else [call.end] if call.end is not None else []

    def thread_call(self, item: dict[str, Any], *, finished: bool | None) -> Call:
        """A thread item as a call; ``finished`` True: with its end; None: its start (no end yet); False:
        with the end its turn's end gives it (unfinished)."""
        item_type = item.get("type")
        iid = as_str(item.get("id"))
        raw_status = as_str(item.get("status"))
        status = raw_status if finished else open_status(raw_status)
        end: ExecEnd | PatchEnd | ToolEnd | None
        if item_type == "command_execution":
            command, argv = split_shell_command(as_str(item.get("command")) or "")
            cwd = as_str(item.get("cwd"))
            end = ExecEnd(iid, command, argv, cwd, as_int(item.get("exit_code")), as_str(item.get("aggregated_output")),
                          None, status, record=False)
            call = Call(kind="shell", tool="command_execution", call_id=iid, command=command, argv=argv, cwd=cwd,
                        origin=STREAM)
        elif item_type == "file_change":
            success = {"completed": True, "failed": False}.get(raw_status or "") if finished else None
            end = PatchEnd(iid, thread_changes(item.get("changes")), success, None, record=False, status=status)
            call = Call(kind="patch", tool="file_change", call_id=iid, origin=STREAM)
        else:
            call = thread_tool(item, iid, raw_status, finished=bool(finished))
            end = call.end
            if not finished and isinstance(end, ToolEnd):
                end.status = open_status(end.status if raw_status is None else raw_status)
        call.end = end if finished is not None else None
        return call

    # ------------------------------------------------------------------ the protocol stream (up to 0.40)

    def protocol(self, obj: dict[str, Any]) -> list[Record]:
        d = self.d
        msg = obj["msg"]
        if not isinstance(msg, dict):
            raise Malformed("'msg' is not an object")
        kind = msg.get("type")
        if not isinstance(kind, str):
            raise Malformed("msg without a string type")
        if kind in _PROTOCOL_NOISE:
            d.noise(kind)
            return []
        if kind in ("user_message", "agent_message", "agent_reasoning"):  # the rollout's event reader
            if kind == "agent_message":
                d.message()
            return list(decode_event(msg, 0, None).records)
        handler = _PROTOCOL.get(kind)
        if handler is None:
            d.unknown(kind)
            return []
        return handler(self, msg)

    def p_session_configured(self, msg: dict[str, Any]) -> list[Record]:
        session_id, model = session_configured(msg)
        self.d.thread_id = self.d.thread_id or session_id  # the first run's
        self.d.model = model or self.d.model
        return []

    def p_task_started(self, msg: dict[str, Any]) -> list[Record]:
        return self.d.start_turn(protocol=True)

    def p_task_complete(self, msg: dict[str, Any]) -> list[Record]:
        last = _read(msg, TurnEnd).last_agent_message
        recs: list[Record] = []
        if last and self.d.turn_messages == 0:  # the turn's only message is the one task_complete names
            self.d.turn_messages += 1
            recs.append(Message(role="assistant", text=last, src="stream"))
        return recs + self.d.close_turn(completed=True)

    def p_turn_aborted(self, msg: dict[str, Any]) -> list[Record]:
        reason = as_str(msg.get("reason")) or "unknown reason"
        return [*self.d.failure_notice("turn_aborted", f"turn aborted: {reason}"),
                *self.d.close_turn(completed=False, why="its turn was aborted")]

    def p_error(self, msg: dict[str, Any]) -> list[Record]:
        return self.d.failure_notice("error", _read(msg, NoticeRec).message)

    def p_stream_error(self, msg: dict[str, Any]) -> list[Record]:
        # A transient retry ("Reconnecting…"): shown, never a run failure.
        return [_read(msg, NoticeRec)]

    def p_reasoning_raw(self, msg: dict[str, Any]) -> list[Record]:
        return [ReasoningRec(as_str(msg.get("text")) or "", "event")]  # noise in a rollout, the only copy here

    def p_token_count(self, msg: dict[str, Any]) -> list[Record]:
        # the rollout's token_count reader; what differs is what the figure means: cumulative under
        # ``info``, or (0.20/0.29, flat fields) the usage of one request, which the stream sums
        usage = token_count_usage(msg)
        if usage is None:
            return []
        if "info" in msg:
            self.d.usage_cumulative = usage
        else:
            add_tokens(self.d.usage_sum, usage)
            self.d.usage_flat += 1
        return []

    def p_begin(self, msg: dict[str, Any]) -> list[Record]:
        call_id = as_str(msg.get("call_id"))
        if call_id is None:
            return []
        patch = msg["type"] == "patch_apply_begin"
        self.d.open[f"proto:{'patch' if patch else 'exec'}:{call_id}"] = OpenItem(msg)
        return [Call(kind="patch", tool="file_change", call_id=call_id, origin=STREAM) if patch
                else proto_command(msg, call_id)]

    def p_exec_end(self, msg: dict[str, Any]) -> list[Record]:
        call_id = as_str(msg.get("call_id"))
        begin = self.d.open.pop(f"proto:exec:{call_id}", None) if call_id is not None else None
        merged = dict(begin.data) if begin else {}
        merged.update({k: v for k, v in msg.items() if v is not None})
        ee = next(r for r in decode_event(msg, 0, None).records if isinstance(r, ExecEnd))
        call = proto_command(merged, call_id)
        status = ee.status
        if status is None and ee.exit_code is not None:
            status = "completed" if ee.exit_code == 0 else "failed"
        call.end = ExecEnd(call_id, call.command, call.argv, call.cwd, ee.exit_code, ee.output, ee.duration_s, status,
                           record=False)
        return [call]

    def p_patch_end(self, msg: dict[str, Any]) -> list[Record]:
        call_id = as_str(msg.get("call_id"))
        begin = self.d.open.pop(f"proto:patch:{call_id}", None) if call_id is not None else None
        pe = next(r for r in decode_event(msg, 0, None).records if isinstance(r, PatchEnd))
        files = pe.files if msg.get("changes") or begin is None else file_changes(begin.data.get("changes"))
        declined = as_str(msg.get("status")) == "declined"
        end = PatchEnd(call_id, files, pe.success, as_str(msg.get("stderr")) or None, record=False,
                       status="declined" if declined else "failed" if pe.success is False else "completed")
        return [Call(kind="patch", tool="file_change", call_id=call_id, origin=STREAM, end=end)]

    def p_mcp_end(self, msg: dict[str, Any]) -> list[Record]:
        # the rollout's reader names the call and reads its result; the stream has no function_call
        # line, so the call's arguments are the invocation's
        invocation = msg.get("invocation")
        arguments = (invocation if isinstance(invocation, dict) else msg).get("arguments")
        return [_end_as_call(_read(msg, ToolEnd), json_text(arguments), keep_result=True)]

    def p_end_as_call(self, msg: dict[str, Any]) -> list[Record]:
        """``web_search_end`` / ``view_image_tool_call``, read by the rollout's reader: what a rollout
        shows as the end's result (the query, the path) is, with no call line in the stream, the call's
        arguments."""
        end = _read(msg, ToolEnd)
        return [_end_as_call(end, end.result or "", keep_result=False)]

    def p_plan_update(self, msg: dict[str, Any]) -> list[Record]:
        steps = msg.get("plan")
        lines = [as_str(msg.get("explanation"))] if msg.get("explanation") else []
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, dict):
                lines.append(f"[{as_str(step.get('status')) or '?'}] {as_str(step.get('step')) or ''}")
        return [tool_call("update_plan", "\n".join(x for x in lines if x), None, success=True)]

    def protocol_unfinished(self, entry: OpenItem) -> list[Record]:
        """The end its turn's end gives a command or patch begun and never ended: unknown."""
        data = entry.data
        call_id = as_str(data.get("call_id"))
        if "changes" in data:
            return [PatchEnd(call_id, file_changes(data.get("changes")), None, None, record=False, status="in_progress")]
        call = proto_command(data, call_id)
        return [ExecEnd(call_id, call.command, call.argv, call.cwd, None, None, None,
                        open_status(as_str(data.get("status"))), record=False)]


_PROTOCOL = {
    "session_configured": StreamEvents.p_session_configured,
    "task_started": StreamEvents.p_task_started,
    "turn_started": StreamEvents.p_task_started,
    "task_complete": StreamEvents.p_task_complete,
    "turn_complete": StreamEvents.p_task_complete,
    "turn_aborted": StreamEvents.p_turn_aborted,
    "error": StreamEvents.p_error,
    "stream_error": StreamEvents.p_stream_error,
    "agent_reasoning_raw_content": StreamEvents.p_reasoning_raw,
    "token_count": StreamEvents.p_token_count,
    "exec_command_begin": StreamEvents.p_begin,
    "exec_command_end": StreamEvents.p_exec_end,
    "patch_apply_begin": StreamEvents.p_begin,
    "patch_apply_end": StreamEvents.p_patch_end,
    "mcp_tool_call_end": StreamEvents.p_mcp_end,
    "web_search_end": StreamEvents.p_end_as_call,
    "plan_update": StreamEvents.p_plan_update,
    "view_image_tool_call": StreamEvents.p_end_as_call,
}
