"""The 0.50+ ``codex exec --json`` thread stream: ``thread.started`` / ``turn.*`` / ``item.*`` / ``error``
events (and the 0.20-0.40 stream's leading config and prompt lines), read for ``ExecStreamDecoder``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from transcript_reader.model import (
    AnyItem,
    AssistantMessage,
    Executed,
    Notice,
    Origin,
    PatchItem,
    RawOutput,
    Reasoning,
    ShellCommand,
    ToolCallItem,
    UserMessage,
)
from transcript_reader.providers.codex.exec_values import (
    Malformed,
    OpenItem,
    as_int,
    as_str,
    excerpt,
    json_text,
    mcp_result_text,
    split_shell_command,
    thread_changes,
)
from transcript_reader.providers.codex.sniff import PROTOCOL_HEADER_KEYS

if TYPE_CHECKING:
    from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder

#: Thread-stream events recognised and deliberately not used (the completed item carries the text).
_THREAD_NOISE = frozenset({"item.plan.delta"})

_THREAD_ITEM_TYPES = frozenset(
    {
        "agent_message",
        "reasoning",
        "command_execution",
        "file_change",
        "mcp_tool_call",
        "collab_tool_call",
        "web_search",
        "todo_list",
        "plan",
        "error",
    }
)


class ThreadEvents:
    """The thread stream's events, read into the decoder's state and items."""

    def __init__(self, d: ExecStreamDecoder) -> None:
        self.d = d

    def header(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        """The 0.20-0.40 stream's first two lines: a config summary, then ``{"prompt": …}``."""
        if "prompt" in obj and isinstance(obj["prompt"], str):
            self.d._decoded()
            self.d._pending_prompt_turn = f"turn-{self.d._turns + 1}"
            yield UserMessage(line=lineno, turn_id=self.d._pending_prompt_turn, text=obj["prompt"])
            return
        if set(obj) & PROTOCOL_HEADER_KEYS:
            self.d._decoded()
            self.d._model = as_str(obj.get("model")) or self.d._model
            self.d._cwd = as_str(obj.get("workdir")) or self.d._cwd
            return
        self.d._unknown("<object without type>")

    def thread(self, lineno: int, obj: dict[str, Any]) -> Iterator[AnyItem]:
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise Malformed("'type' is not a string")
        if kind in _THREAD_NOISE:
            self.d._noise(kind)
            return
        if kind == "thread.started":
            self.d._decoded()
            tid = as_str(obj.get("thread_id"))
            if tid is not None and self.d._thread_id is not None and tid != self.d._thread_id:
                # another run appended to the same file (``codex exec --json … >> log``): the file keeps
                # its first thread's id, as a rollout keeps its own header, and says where the next begins
                # (usage is summed over the file's runs)
                yield Notice(line=lineno, turn_id=self.d._turn_id(), category="thread",
                             message=f"another run starts here (thread {tid}); the figures cover every run in "
                                     "this file, the session id is the first run's")
            else:
                self.d._thread_id = tid or self.d._thread_id
        elif kind == "turn.started":
            self.d._decoded()
            yield from self.d._start_turn(protocol=False)
        elif kind == "turn.completed":
            usage = obj.get("usage")
            if usage is not None and not isinstance(usage, dict):
                raise Malformed("turn.completed 'usage' is not an object")
            self.d._decoded()
            if usage:
                self.d._add_usage(usage)
                self.d._usage_turns += 1
            self.d._pending_error = None  # the turn completed: its error events were retried, not fatal
            if self.d._in_turn:
                yield from self.d._close_turn(completed=True)
            else:  # a turn.completed with no turn.started: still the end of a turn
                self.d._turns = max(self.d._turns, 1)
                yield from self.d._close_turn(completed=True)
        elif kind == "turn.failed":
            error = obj.get("error")
            message = (as_str(error.get("message")) if isinstance(error, dict) else as_str(error)) or "turn failed"
            self.d._decoded()
            self.d._fail(self.d._pending_error or message)
            self.d._pending_error = None
            yield from self.d._error_notice(lineno, message)
            yield from self.d._close_turn(completed=False)
        elif kind == "error":
            # Codex prints a fatal error and a retried stream error ("Reconnecting… 1/5") alike; only what
            # follows tells them apart: turn.failed (or no end at all) vs. turn.completed.
            self.d._decoded()
            message = as_str(obj.get("message")) or "error"
            if self.d._pending_error is None:
                self.d._pending_error = message
            yield from self.d._error_notice(lineno, message)
        elif kind == "request_user_input":
            self.d._decoded()
            yield from self.d._flush_held(final=False)
            yield ToolCallItem(
                line=lineno,
                turn_id=self.d._turn_id(),
                name="request_user_input",
                arguments=excerpt(json_text(obj.get("questions"))),
                call_id=as_str(obj.get("call_id")) or as_str(obj.get("id")),
                origin=Origin.STREAM,
            )
        elif kind in ("item.started", "item.updated", "item.completed"):
            yield from self.item_event(lineno, kind, obj)
        else:
            self.d._unknown(kind)

    def item_event(self, lineno: int, kind: str, obj: dict[str, Any]) -> Iterator[AnyItem]:
        item = obj.get("item")
        if not isinstance(item, dict):
            raise Malformed(f"{kind} without an item object")
        item_type = item.get("type")
        if not isinstance(item_type, str):
            raise Malformed(f"{kind} item without a string type")
        if item_type not in _THREAD_ITEM_TYPES:
            self.d._unknown(f"item:{item_type}")
            return
        self.d._decoded()
        item_id = as_str(item.get("id"))
        key = f"item:{item_id}" if item_id is not None else None
        if kind != "item.completed":
            if key is None:
                return  # nothing to pair it with; the completed event will carry the item
            previous = self.d._open.get(key)
            turn_id = previous.turn_id if previous else self.d._turn_id()
            if previous is None and item_type != "agent_message":
                yield from self.d._flush_held(final=False)  # another item follows: the message was commentary
            self.d._open[key] = OpenItem(data=item, line=lineno, turn_id=turn_id)
            return
        entry = self.d._open.pop(key, None) if key is not None else None
        turn_id = entry.turn_id if entry else self.d._turn_id()
        if item_type == "agent_message":
            text = as_str(item.get("text")) or ""
            yield from self.d._hold(text, lineno, turn_id, as_str(item.get("phase")))
            return
        yield from self.d._flush_held(final=False)
        yield from self.thread_item(item, lineno, turn_id, finished=True)

    def thread_item(
        self, item: dict[str, Any], lineno: int, turn_id: str | None, *, finished: bool
    ) -> Iterator[AnyItem]:
        """One thread-stream item as model items. ``finished`` is False for an item never completed."""
        item_type = item.get("type")
        item_id = as_str(item.get("id"))
        status = as_str(item.get("status")) or (None if finished else "in_progress")
        if item_type == "agent_message":
            # Started but never completed: not an answer.
            yield AssistantMessage(line=lineno, turn_id=turn_id, text=as_str(item.get("text")) or "")
        elif item_type == "reasoning":
            yield Reasoning(line=lineno, turn_id=turn_id, text=as_str(item.get("text")) or "")
        elif item_type == "command_execution":
            command, argv = split_shell_command(as_str(item.get("command")) or "")
            exit_code = as_int(item.get("exit_code"))
            if finished and status in ("completed", "failed") and exit_code is not None:
                executed = Executed.YES
            elif status == "declined":
                executed = Executed.NO
            else:
                executed = Executed.UNKNOWN
            output = as_str(item.get("aggregated_output"))
            yield from self.command(
                lineno,
                turn_id,
                command=command,
                argv=argv,
                cwd=as_str(item.get("cwd")),
                exit_code=exit_code,
                output=output,
                duration=None,
                call_id=item_id,
                executed=executed,
                status=status,
            )
        elif item_type == "file_change":
            if finished and status in ("completed", "failed"):
                executed = Executed.YES
            elif status == "declined":
                executed = Executed.NO
            else:
                executed = Executed.UNKNOWN
            success = {"completed": True, "failed": False}.get(status or "") if finished else None
            yield PatchItem(
                line=lineno,
                turn_id=turn_id,
                files=thread_changes(item.get("changes")),
                success=success,
                tool="file_change",
                call_id=item_id,
                origin=Origin.STREAM,
                executed=executed,
            )
        elif item_type == "mcp_tool_call":
            server = as_str(item.get("server")) or "?"
            tool = as_str(item.get("tool")) or "?"
            error = item.get("error")
            result_text, ok = mcp_result_text(item.get("result"))
            if isinstance(error, dict) and error.get("message"):
                result_text, ok = excerpt(json_text(error.get("message"))), False
            if status == "failed":
                ok = False
            elif status == "completed" and ok is None:
                ok = True
            yield self.tool(
                lineno, turn_id, f"mcp__{server}__{tool}", item.get("arguments"), result_text, ok,
                item_id, finished and status in ("completed", "failed"),
            )
        elif item_type == "collab_tool_call":
            args = {k: item.get(k) for k in ("prompt", "receiver_thread_ids", "sender_thread_id") if k in item}
            states = item.get("agents_states")
            ok = {"completed": True, "failed": False}.get(status or "")
            yield self.tool(
                lineno, turn_id, as_str(item.get("tool")) or "collab_tool_call", args,
                excerpt(json_text(states)) if states else None, ok, item_id,
                finished and status in ("completed", "failed"),
            )
        elif item_type == "web_search":
            query = as_str(item.get("query")) or ""
            action = item.get("action")
            yield self.tool(
                lineno, turn_id, "web_search", query if not action else {"query": query, "action": action},
                None, True if finished else None, item_id, finished,
            )
        elif item_type == "todo_list":
            steps = item.get("items")
            lines = []
            for step in steps if isinstance(steps, list) else ():
                if isinstance(step, dict):
                    mark = "x" if step.get("completed") else " "
                    lines.append(f"[{mark}] {as_str(step.get('text')) or ''}")
            yield self.tool(lineno, turn_id, "update_plan", "\n".join(lines), None, None, item_id, finished)
        elif item_type == "plan":
            yield self.tool(
                lineno, turn_id, "plan", as_str(item.get("text")) or "", None, None, item_id, finished
            )
        elif item_type == "error":
            # Non-fatal: real streams use it for warnings (corpus code_mode_flag); never a run failure.
            yield Notice(line=lineno, turn_id=turn_id, category="warning", message=as_str(item.get("message")) or "")

    def tool(
        self,
        lineno: int,
        turn_id: str | None,
        name: str,
        arguments: object,
        result: str | None,
        success: bool | None,
        call_id: str | None,
        ran: bool,
    ) -> ToolCallItem:
        return ToolCallItem(
            line=lineno,
            turn_id=turn_id,
            name=name,
            arguments=excerpt(json_text(arguments)),
            result=result,
            success=success,
            call_id=call_id,
            origin=Origin.STREAM,
            executed=Executed.YES if ran else Executed.UNKNOWN,
        )

    def command(
        self,
        lineno: int,
        turn_id: str | None,
        *,
        command: str,
        argv: tuple[str, ...] | None,
        cwd: str | None,
        exit_code: int | None,
        output: str | None,
        duration: float | None,
        call_id: str | None,
        executed: Executed,
        status: str | None,
    ) -> Iterator[AnyItem]:
        """A ShellCommand, then its full output (RawOutput), in the order the rollout reader gives them
        (the assembler puts a TestRun after the command when it ran a test runner, as for rollouts)."""
        sc = ShellCommand(
            line=lineno,
            turn_id=turn_id,
            command=command,
            argv=argv,
            cwd=cwd,
            exit_code=exit_code,
            output=excerpt(output) if output is not None else None,
            output_chars=len(output) if output else 0,
            duration_s=duration,
            tool="command_execution",
            call_id=call_id,
            origin=Origin.STREAM,
            executed=executed,
            status=status,
        )
        if output:
            self.d._full_output[id(sc)] = output  # test runs are read from the whole output (assembly)
        yield sc
        if output:
            yield RawOutput(line=lineno, turn_id=turn_id, call_id=call_id, tool="command_execution", text=output)
