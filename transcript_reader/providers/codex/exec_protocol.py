"""The older ``{id, msg}`` protocol stream of ``codex exec --json`` (up to 0.40): raw protocol events
(``task_started``, ``agent_message``, ``exec_command_begin/end``, ``patch_apply_begin/end``,
``token_count``…), read for ``ExecStreamDecoder``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from exec_grammar.shell import command_from_argv
from transcript_reader.model import (
    AnyItem,
    Executed,
    Notice,
    Origin,
    PatchItem,
    Reasoning,
    UserMessage,
)
from transcript_reader.providers.codex.exec_values import (
    Malformed,
    OpenItem,
    as_int,
    as_str,
    duration,
    mcp_result_text,
    split_shell_command,
)
from transcript_reader.providers.codex.patch_text import file_changes
from transcript_reader.providers.codex.tokens import token_count_usage

if TYPE_CHECKING:
    from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder

#: Protocol events recognised and deliberately not used: deltas repeat what an ``*_end``/full message
#: carries, ``turn_diff`` repeats the patches, the rest are UI or session plumbing.
_PROTOCOL_NOISE = frozenset(
    {
        "agent_message_delta",
        "agent_reasoning_delta",
        "agent_reasoning_raw_content_delta",
        "agent_reasoning_section_break",
        "exec_command_output_delta",
        "turn_diff",
        "background_event",
        "get_history_entry_response",
        "mcp_list_tools_response",
        "list_custom_prompts_response",
        "shutdown_complete",
        "conversation_path",
        # `codex exec` of this era ran with approval "never": a request is never answered in the stream,
        # and what ran still shows as exec_command_begin/end or patch_apply_begin/end.
        "exec_approval_request",
        "apply_patch_approval_request",
        "web_search_begin",
        "mcp_tool_call_begin",
        "entered_review_mode",
        "exited_review_mode",
        "mcp_startup_update",
        "mcp_startup_complete",
        "session_configured_v2",
    }
)


class ProtocolEvents:
    """The protocol stream's events, read into the decoder's state and items."""

    def __init__(self, d: ExecStreamDecoder) -> None:
        self.d = d

    def protocol(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        msg = obj["msg"]
        if not isinstance(msg, dict):
            raise Malformed("'msg' is not an object")
        kind = msg.get("type")
        if not isinstance(kind, str):
            raise Malformed("msg without a string type")
        if kind in _PROTOCOL_NOISE:
            self.d._noise(kind)
            return
        handler = _PROTOCOL_HANDLERS.get(kind)
        if handler is None:
            self.d._unknown(kind)
            return
        self.d._decoded()
        yield from handler(self, lineno, msg)

    def p_session_configured(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        self.d._thread_id = self.d._thread_id or as_str(msg.get("session_id"))  # the first run's
        self.d._model = as_str(msg.get("model")) or self.d._model
        return iter(())

    def p_task_started(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._start_turn(protocol=True)

    def p_task_complete(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        last = as_str(msg.get("last_agent_message"))
        if self.d._held is None and last and self.d._turn_messages == 0:
            yield from self.d._hold(last, lineno, self.d._turn_id())
        yield from self.d._close_turn(completed=True)

    def p_turn_aborted(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        reason = as_str(msg.get("reason")) or "unknown reason"
        yield from self.d._failure_notice(lineno, "turn_aborted", f"turn aborted: {reason}")
        yield from self.d._close_turn(completed=False)

    def p_error(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._failure_notice(lineno, "error", as_str(msg.get("message")) or "error")

    def p_stream_error(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        # A transient retry ("Reconnecting…"): shown, never a run failure.
        yield Notice(
            line=lineno, turn_id=self.d._turn_id(), category="stream_error", message=as_str(msg.get("message")) or ""
        )

    def p_agent_message(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._hold(as_str(msg.get("message")) or "", lineno, self.d._turn_id(), as_str(msg.get("phase")))

    def p_user_message(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        yield UserMessage(line=lineno, turn_id=self.d._turn_id(), text=as_str(msg.get("message")) or "")

    def p_reasoning(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        yield Reasoning(line=lineno, turn_id=self.d._turn_id(), text=as_str(msg.get("text")) or "")

    def p_token_count(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        if "info" in msg:
            usage = token_count_usage({"info": msg.get("info")})
            if usage is not None:
                self.d._usage_cumulative = usage
        else:  # 0.20/0.29: flat usage of one request
            self.d._add_usage(msg)
            self.d._usage_flat += 1
        return iter(())

    def p_exec_begin(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        call_id = as_str(msg.get("call_id"))
        if call_id is not None:
            self.d._open[f"proto:exec:{call_id}"] = OpenItem(data=msg, line=lineno, turn_id=self.d._turn_id())

    def p_exec_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        call_id = as_str(msg.get("call_id"))
        begin = self.d._open.pop(f"proto:exec:{call_id}", None) if call_id is not None else None
        merged = dict(begin.data) if begin else {}
        merged.update({k: v for k, v in msg.items() if v is not None})
        exit_code = as_int(msg.get("exit_code"))
        status = as_str(msg.get("status"))
        if status is None and exit_code is not None:
            status = "completed" if exit_code == 0 else "failed"
        if status == "declined":
            executed = Executed.NO
        elif exit_code is not None:
            executed = Executed.YES
        else:
            executed = Executed.UNKNOWN
        output = as_str(msg.get("aggregated_output"))
        if output is None:
            parts = [p for p in (as_str(msg.get("stdout")), as_str(msg.get("stderr"))) if p]
            output = "".join(parts) if parts else None
        yield from self.proto_command(lineno, begin.turn_id if begin else self.d._turn_id(), merged, call_id,
                                       exit_code=exit_code, output=output, executed=executed, status=status,
                                       duration=duration(msg.get("duration")))

    def p_patch_begin(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        call_id = as_str(msg.get("call_id"))
        if call_id is not None:
            self.d._open[f"proto:patch:{call_id}"] = OpenItem(data=msg, line=lineno, turn_id=self.d._turn_id())

    def p_patch_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        call_id = as_str(msg.get("call_id"))
        begin = self.d._open.pop(f"proto:patch:{call_id}", None) if call_id is not None else None
        changes = msg.get("changes") if msg.get("changes") else (begin.data.get("changes") if begin else None)
        success = msg.get("success") if isinstance(msg.get("success"), bool) else None
        status = as_str(msg.get("status"))
        stderr = as_str(msg.get("stderr"))
        yield PatchItem(
            line=lineno,
            turn_id=begin.turn_id if begin else self.d._turn_id(),
            files=file_changes(changes),
            success=success,
            error=stderr if (success is False and stderr) else None,
            tool="file_change",
            call_id=call_id,
            origin=Origin.STREAM,
            executed=Executed.NO if status == "declined" else Executed.YES,
        )

    def p_mcp_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        raw_invocation = msg.get("invocation")
        invocation: dict[str, Any] = raw_invocation if isinstance(raw_invocation, dict) else msg
        server = as_str(invocation.get("server")) or "?"
        tool = as_str(invocation.get("tool")) or "?"
        result_text, ok = mcp_result_text(msg.get("result"))
        yield self.d.thread.tool(
            lineno, self.d._turn_id(), f"mcp__{server}__{tool}", invocation.get("arguments"), result_text, ok,
            as_str(msg.get("call_id")), True,
        )

    def p_web_search_end(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        yield self.d.thread.tool(
            lineno, self.d._turn_id(), "web_search", as_str(msg.get("query")) or "", None, True,
            as_str(msg.get("call_id")), True,
        )

    def p_plan_update(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        steps = msg.get("plan")
        lines = [as_str(msg.get("explanation"))] if msg.get("explanation") else []
        for step in steps if isinstance(steps, list) else ():
            if isinstance(step, dict):
                lines.append(f"[{as_str(step.get('status')) or '?'}] {as_str(step.get('step')) or ''}")
        yield self.d.thread.tool(lineno, self.d._turn_id(), "update_plan", "\n".join(x for x in lines if x), None, True,
                         None, True)

    def p_view_image(self, lineno: int, msg: dict[str, Any]) -> Iterator[AnyItem]:
        yield from self.d._flush_held(final=False)
        yield self.d.thread.tool(lineno, self.d._turn_id(), "view_image", as_str(msg.get("path")) or "", None, True,
                         as_str(msg.get("call_id")), True)

    def proto_command(
        self,
        lineno: int,
        turn_id: str | None,
        data: dict[str, Any],
        call_id: str | None,
        *,
        exit_code: int | None,
        output: str | None,
        executed: Executed,
        status: str | None,
        duration: float | None,
    ) -> Iterator[AnyItem]:
        raw_command = data.get("command")
        argv: tuple[str, ...] | None
        if isinstance(raw_command, list) and all(isinstance(a, str) for a in raw_command):
            argv = tuple(raw_command)
            command = command_from_argv(argv)
        elif isinstance(raw_command, str):
            command, argv = split_shell_command(raw_command)
        else:
            command, argv = "", None
        yield from self.d.thread.command(
            lineno,
            turn_id,
            command=command,
            argv=argv,
            cwd=as_str(data.get("cwd")),
            exit_code=exit_code,
            output=output,
            duration=duration,
            call_id=call_id,
            executed=executed,
            status=status,
        )

    def protocol_unfinished(self, entry: OpenItem) -> Iterator[AnyItem]:
        data = entry.data
        call_id = as_str(data.get("call_id"))
        if "changes" in data:
            yield PatchItem(
                line=entry.line,
                turn_id=entry.turn_id,
                files=file_changes(data.get("changes")),
                tool="file_change",
                call_id=call_id,
                origin=Origin.STREAM,
                executed=Executed.UNKNOWN,
            )
            return
        yield from self.proto_command(
            entry.line,
            entry.turn_id,
            data,
            call_id,
            exit_code=None,
            output=None,
            executed=Executed.UNKNOWN,
            status=as_str(data.get("status")) or "in_progress",
            duration=None,
        )


_PROTOCOL_HANDLERS = {
    "session_configured": ProtocolEvents.p_session_configured,
    "task_started": ProtocolEvents.p_task_started,
    "turn_started": ProtocolEvents.p_task_started,
    "task_complete": ProtocolEvents.p_task_complete,
    "turn_complete": ProtocolEvents.p_task_complete,
    "turn_aborted": ProtocolEvents.p_turn_aborted,
    "error": ProtocolEvents.p_error,
    "stream_error": ProtocolEvents.p_stream_error,
    "agent_message": ProtocolEvents.p_agent_message,
    "user_message": ProtocolEvents.p_user_message,
    "agent_reasoning": ProtocolEvents.p_reasoning,
    "agent_reasoning_raw_content": ProtocolEvents.p_reasoning,
    "token_count": ProtocolEvents.p_token_count,
    "exec_command_begin": ProtocolEvents.p_exec_begin,
    "exec_command_end": ProtocolEvents.p_exec_end,
    "patch_apply_begin": ProtocolEvents.p_patch_begin,
    "patch_apply_end": ProtocolEvents.p_patch_end,
    "mcp_tool_call_end": ProtocolEvents.p_mcp_end,
    "web_search_end": ProtocolEvents.p_web_search_end,
    "plan_update": ProtocolEvents.p_plan_update,
    "view_image_tool_call": ProtocolEvents.p_view_image,
}
