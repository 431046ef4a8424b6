"""Claude Code session files (``~/.claude/projects/<slug>/<session>.jsonl``) -> decode records.

One JSON object a line; ``type`` says what it is. What each kind becomes (read off recordings of the real
CLI, ``fixtures/claude/recorded``, and public transcripts, ``fixtures/claude/public``):

- ``user``: a person's prompt (a string, or text and image blocks; a slash command reads as what was typed,
  ``/init``, and its expansion is context), unless it is a tool result (its
  ``tool_result`` blocks pair with their ``tool_use`` by id and are never prompts), harness context
  (``isMeta``, ``<command-name>``/``<local-command-stdout>`` slash-command echoes, ``<system-reminder>``,
  the summary that opens a compacted session: ``isCompactSummary``, a background sub-agent's
  ``<task-notification>``, any line whose ``origin`` is not a person), or an interruption
  (``[Request interrupted by user…]``: the turn is aborted, so it has no final answer).
- ``assistant``: one line per content block (Claude Code splits one API message over several lines that
  repeat its ``message.id`` and usage): ``text`` is assistant text (the last one before the next prompt is
  the turn's final answer), ``thinking`` is reasoning, ``tool_use`` a call (``tools.py``). An API error
  Claude Code wrote as an assistant line (``isApiErrorMessage``) is an error notice.
- ``summary`` (a session's title line) and ``system`` lines (``compact_boundary``: a compaction; others:
  informational or error notices) are notices.
- Harness bookkeeping (``queue-operation``, ``attachment``, ``file-history-snapshot`` and its
  ``file-history-delta`` updates, ``progress``,
  ``api-request*``, ``cost-state``, ``last-prompt``…) is known noise; any other type is ``unknown``.

Token usage: each API message is one usage event (by ``message.id``; its copies on later lines are
skipped), with the model and service tier it names; :mod:`transcript_reader.usage` sums them. ``input``
is every prompt token the API read: uncached input + cache writes (``cache_creation_input_tokens``, also
kept apart as ``cache_write``) + cache reads (``cache_read_input_tokens``, ``cached_input``); ``output``
the output tokens (thinking included, as the API counts it); ``reasoning`` the thinking tokens when the
line reports them; ``total`` = input + output. The same
sum is what ``--output-format stream-json`` reports in its ``result`` event (tests/test_claude_witness.py).

Sub-agents: a ``Task``/``Agent`` call's own lines are ``isSidechain`` lines, written (before 2.0) into the
parent's file between the call and its result, or (since) into ``<session>/subagents/agent-<id>.jsonl``.
Inline sidechain stretches are bracketed by notices; a sub-agent file is its own session whose parent is
the session id its lines carry (``source: subagent``).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import orjson

from transcript_reader.model import TokenUsage
from transcript_reader.providers.claude.tools import call_record, result_records
from transcript_reader.providers.records import (
    DECODED,
    NOISE,
    UNKNOWN,
    Call,
    Decoded,
    Message,
    Meta,
    NoticeRec,
    ReasoningRec,
    Record,
    TurnAborted,
    TurnContext,
    UsageEvent,
)

#: Line types that are harness bookkeeping: counted as known noise.
NOISE_TYPES = frozenset({
    "queue-operation", "attachment", "file-history-snapshot", "file-history-delta", "progress", "api-request",
    "api-request-shape",
    "api-request-blob", "atis-latch", "tools-used", "last-prompt", "cost-state", "mode", "custom-title",
    "agent-name", "tag", "pr-link", "permission-mode", "worktree-state", "ai-title",
})
#: The ``type`` values of a line that carries a conversation message.
MESSAGE_TYPES = frozenset({"user", "assistant"})
SRC = "claude"
#: Tool uses waiting for their result (a hostile file cannot grow the table without bound).
MAX_OPEN_CALLS = 4096
#: API message ids remembered for the usage de-duplication (copies of a message are adjacent lines).
MAX_MESSAGE_IDS = 4096
_CONTEXT_PREFIXES = (
    ("<local-command-stdout>", "local_command"), ("<local-command-stderr>", "local_command"),
    ("<local-command-caveat>", "local_command"), ("Caveat: The messages below were generated", "local_command"),
    ("<system-reminder>", "system_reminder"), ("<bash-input>", "bash_mode"), ("<bash-stdout>", "bash_mode"),
    ("<bash-stderr>", "bash_mode"), ("<user-memory-input>", "memory"),
    ("<task-notification>", "task_notification"),
)
_INTERRUPT = "[Request interrupted by user"


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def typed_line(obj: Any, n: int) -> tuple[str, str | None] | Decoded:
    """Line ``n``'s ``type`` and ``timestamp``, or, for a line that is no object or names no string
    ``type``, its decoding as an unknown line: the one opening of both Claude Code shapes (the session
    file and the stream-json stream)."""
    if not isinstance(obj, dict):
        return Decoded(n, UNKNOWN, type(obj).__name__)
    t = obj.get("type")
    ts = _s(obj.get("timestamp"))
    if not isinstance(t, str):
        return Decoded(n, UNKNOWN, "(no type)", (), ts)
    return t, ts


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _int(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


_COMMAND = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


def _slash_command(text: str) -> str | None:
    """``/name args`` of a slash-command line (``<command-message>…<command-name>/init</command-name>``)."""
    head = text.lstrip()
    if not head.startswith(("<command-name>", "<command-message>")):
        return None
    m = _COMMAND.search(text)
    if m is None:
        return None
    name = m.group(1)
    args = _ARGS.search(text)
    tail = args.group(1).strip() if args else ""
    return f"{name if name.startswith('/') else '/' + name} {tail}".rstrip()


#: ``source`` of Claude Code's per-message usage.
SOURCE = "sum of per-message usage (Claude Code, one count per API message)"


class ClaudeDecoder:
    """Line -> ``Decoded``; the state is what pairing and usage need: open tool uses (name and input, for
    reading their results) and the running usage sum."""

    def __init__(self) -> None:
        self.open_calls: OrderedDict[str, tuple[Call, dict[str, Any]]] = OrderedDict()
        self.message_ids: OrderedDict[str, None] = OrderedDict()
        self.usage = [0, 0, 0, 0, 0]  # uncached input, cache writes, cache reads, output, thinking
        self.usage_seen = False
        self.meta_seen = False
        self.sidechain: bool | None = None  # the current line's isSidechain, in a main (non-sidechain) file
        self.file_is_sidechain: bool | None = None

    def decode(self, obj: Any, n: int) -> Decoded:
        typed = typed_line(obj, n)
        if isinstance(typed, Decoded):
            return typed
        t, ts = typed
        if t in MESSAGE_TYPES:
            recs: list[Record] = []
            self._meta(obj, recs)
            self._sidechain(obj, recs)
            msg = obj.get("message")
            if not isinstance(msg, dict):
                return Decoded(n, UNKNOWN, f"{t}/(no message)", tuple(recs), ts)
            if t == "user":
                self._user(obj, msg, recs)
            else:
                self._assistant(obj, msg, recs)
            return Decoded(n, DECODED, t, tuple(recs), ts)
        if t == "summary":
            text = _s(obj.get("summary"))
            recs = [NoticeRec("summary", f"session summary: {text}")] if text else []
            return Decoded(n, DECODED, t, tuple(recs), ts)
        if t == "system":
            recs = []
            self._meta(obj, recs)
            self._system(obj, recs)
            return Decoded(n, DECODED if recs else NOISE, f"system/{obj.get('subtype') or '?'}", tuple(recs), ts)
        if t in NOISE_TYPES:
            name = t if t != "attachment" else f"attachment/{(obj.get('attachment') or {}).get('type', '?')}"
            return Decoded(n, NOISE, name, (), ts)
        return Decoded(n, UNKNOWN, t, (), ts)

    # ------------------------------------------------------------ session

    def _meta(self, obj: dict[str, Any], recs: list[Record]) -> None:
        if self.meta_seen or not _s(obj.get("sessionId")):
            return
        self.meta_seen = True
        sid = _s(obj.get("sessionId"))
        agent = _s(obj.get("agentId"))
        side = obj.get("isSidechain") is True
        self.file_is_sidechain = side
        if side and agent:
            # a sub-agent file: its lines carry the parent's session id and their own agent id
            recs.append(Meta(session_id=f"agent-{agent}", cwd=_s(obj.get("cwd")), originator="claude-code",
                             version=_s(obj.get("version")), source="subagent", parent_session_id=sid,
                             timestamp=_s(obj.get("timestamp"))))
            return
        recs.append(Meta(session_id=sid, cwd=_s(obj.get("cwd")), originator="claude-code",
                         version=_s(obj.get("version")), source=_s(obj.get("entrypoint")) or "cli",
                         timestamp=_s(obj.get("timestamp"))))

    def _sidechain(self, obj: dict[str, Any], recs: list[Record]) -> None:
        """Inline sidechains (a sub-agent's lines inside its parent's file): a notice where one starts and
        ends, so its work is not read as the parent's own."""
        if self.file_is_sidechain:
            return
        side = obj.get("isSidechain") is True
        if side and not self.sidechain:
            recs.append(NoticeRec("sidechain", "a sub-agent's work (sidechain) starts here"))
        elif not side and self.sidechain:
            recs.append(NoticeRec("sidechain", "end of the sub-agent's work (sidechain)"))
        self.sidechain = side

    def _system(self, obj: dict[str, Any], recs: list[Record]) -> None:
        sub = obj.get("subtype")
        content = _s(obj.get("content"))
        if sub == "compact_boundary":
            meta = _d(obj.get("compactMetadata"))
            how = f" ({meta.get('trigger')}, {meta.get('preTokens')} tokens before)" if meta.get("trigger") else ""
            recs.append(NoticeRec("compaction", (content or "conversation compacted") + how))
        elif content:
            level = _s(obj.get("level"))
            recs.append(NoticeRec("error" if level == "error" or sub == "api_error" else str(sub or "system"),
                                  content))

    # ------------------------------------------------------------ messages

    def _user(self, obj: dict[str, Any], msg: dict[str, Any], recs: list[Record]) -> None:
        content = msg.get("content")
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
        texts: list[str] = []
        images: list[str] = []
        for b in blocks:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt == "tool_result":
                cid = b.get("tool_use_id")
                pending = self.open_calls.pop(cid, None) if isinstance(cid, str) else None
                call, inp = pending if pending is not None else (None, {})
                recs.extend(result_records(call, inp, b, obj))
            elif bt == "text" and isinstance(b.get("text"), str):
                texts.append(b["text"])
            elif bt == "image":
                src = _d(b.get("source"))
                images.append(f"[image {src.get('media_type')}]" if src.get("media_type") else "[image]")
        text = "\n".join(texts)
        if not text and not images:
            return
        command = _slash_command(text)
        if command is not None and not self.sidechain:
            # what the person typed: "/init", "/review 12" (its expansion follows as an isMeta line)
            recs.append(Message(role="user", text=command, src=SRC))
            return
        label = self._context_label(obj, text)
        if label is None and self.sidechain and not self.file_is_sidechain:
            label = "sidechain"  # the task prompt of an inline sub-agent is not a person's prompt
        if label == "interrupt":
            recs.append(TurnAborted(reason="interrupted by the user"))
        elif label is not None:
            recs.append(Message(role="user", text=text, src=SRC, context_label=label))
        else:
            recs.append(Message(role="user", text=text, src=SRC, images=tuple(images)))

    @staticmethod
    def _context_label(obj: dict[str, Any], text: str) -> str | None:
        if obj.get("isCompactSummary") is True:
            return "compaction_summary"
        if obj.get("isMeta") is True:
            return "meta"
        origin = obj.get("origin")
        if isinstance(origin, dict) and isinstance(origin.get("kind"), str) and origin["kind"] != "human":
            # the harness wrote it (a background task's notification: recording task_background)
            return origin["kind"].replace("-", "_")
        head = text.lstrip()
        if head.startswith(_INTERRUPT):
            return "interrupt"
        for prefix, label in _CONTEXT_PREFIXES:
            if head.startswith(prefix):
                return label
        return None

    def _assistant(self, obj: dict[str, Any], msg: dict[str, Any], recs: list[Record]) -> None:
        model = _s(msg.get("model"))
        if model and model != "<synthetic>":
            recs.append(TurnContext(model=model))
        counted = self._usage(msg, obj)
        content = msg.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else (
            content if isinstance(content, list) else [])
        api_error = obj.get("isApiErrorMessage") is True
        cwd = _s(obj.get("cwd"))
        for b in blocks:
            if not isinstance(b, dict):
                continue
            bt = b.get("type")
            if bt == "text" and isinstance(b.get("text"), str):
                if api_error:
                    recs.append(NoticeRec("error", b["text"]))
                elif b["text"].strip():
                    # an inline sub-agent's text is its report to the parent, never the turn's answer
                    inline = self.sidechain and not self.file_is_sidechain
                    recs.append(Message(role="assistant", text=b["text"], src=SRC,
                                        context_label="sidechain" if inline else None))
            elif bt == "thinking" and isinstance(b.get("thinking"), str) and b["thinking"].strip():
                recs.append(ReasoningRec(text=b["thinking"], src=SRC))
            elif bt == "redacted_thinking":
                recs.append(ReasoningRec(text="[redacted thinking]", src=SRC))
            elif bt in ("tool_use", "server_tool_use"):
                call = call_record(b, cwd)
                if call is None:
                    continue
                recs.append(call)
                if call.call_id:
                    if len(self.open_calls) >= MAX_OPEN_CALLS:
                        self.open_calls.popitem(last=False)
                    inp = b.get("input")
                    self.open_calls[call.call_id] = (call, inp if isinstance(inp, dict) else {})
            elif isinstance(bt, str) and bt.endswith("_tool_result"):
                # a server tool's result inside the assistant message itself (web_search_tool_result)
                cid = b.get("tool_use_id")
                pending = self.open_calls.pop(cid, None) if isinstance(cid, str) else None
                result = {"tool_use_id": cid, "content": orjson.dumps(b.get("content")).decode()}
                recs.extend(result_records(pending[0] if pending else None, {}, result, obj))
        if counted is not None:
            recs.append(counted)

    # ------------------------------------------------------------ usage

    def _usage(self, msg: dict[str, Any], obj: dict[str, Any]) -> UsageEvent | None:
        """This line's API message usage as a usage event, once per message (its copies on later lines
        give None); ``self.usage`` keeps the running sum the peers' tests compare."""
        u = msg.get("usage")
        if not isinstance(u, dict):
            return None
        mid = _s(msg.get("id")) or _s(obj.get("requestId")) or _s(obj.get("uuid"))
        if mid is not None:
            if mid in self.message_ids:
                return None  # another content block of a message already counted
            if len(self.message_ids) >= MAX_MESSAGE_IDS:
                self.message_ids.popitem(last=False)
            self.message_ids[mid] = None
        details = _d(u.get("output_tokens_details"))
        figures = [_int(v) for v in (u.get("input_tokens"), u.get("cache_creation_input_tokens"),
                                      u.get("cache_read_input_tokens"), u.get("output_tokens"),
                                      details.get("thinking_tokens"))]
        for i, v in enumerate(figures):
            self.usage[i] += v
        self.usage_seen = True
        uncached, writes, reads, out, thinking = figures
        inp = uncached + writes + reads
        hour = min(writes, _int(_d(u.get("cache_creation")).get("ephemeral_1h_input_tokens")))
        model = _s(msg.get("model"))
        # the tier that ran: the service tier, and the speed (fast mode is priced apart) when not standard
        tier = "+".join(t for t in (_s(u.get("service_tier")), _s(u.get("speed"))) if t not in (None, "standard"))
        return UsageEvent(
            call=TokenUsage(input=inp, cached_input=reads, output=out, reasoning=thinking, total=inp + out,
                            source=SOURCE, cache_write=writes, cache_write_1h=hour),
            key=mid, model=model if model != "<synthetic>" else None,
            tier=tier or None)
