"""Claude Code's ``--output-format stream-json`` output (``claude -p … --output-format stream-json --verbose``,
and the SDKs, which read the same stream) -> decode records.

It is not a session file: every line names ``session_id`` (snake case, never the file's ``sessionId``) and
the events are those of one or more runs of the CLI's print mode. What each kind becomes (read off
recordings of the real CLI through ``corpus_tools.record.claude_recorder``, ``fixtures/claude/recorded``):

- ``system``/``init`` opens a run: the session's id, cwd, model and CLI version (``claude_code_version``),
  and the start of a turn. A second ``init`` in one stream is another run of the same session (a
  background sub-agent's notification woke the model: recording ``task_background``); the run before it
  ended then, even though its ``result`` line may come later.
- ``user``: a tool result (paired with its ``tool_use`` by id, ``tool_use_result`` being the tool's
  structured result the session file calls ``toolUseResult``), or a prompt. The top-level prompt is in the
  stream only when the CLI echoes it (``--input-format stream-json --replay-user-messages``: ``isReplay``);
  ``claude -p PROMPT`` prints no prompt, so such a run's turn has none (never a sub-agent's in its place).
- ``parent_tool_use_id``: the line is a sub-agent's (the ``Task``/``Agent`` call it names). Its first user
  text is the task prompt the parent wrote, never a person's prompt; its assistant texts are its report, never
  the turn's answer; its tool calls are real calls, read as such. Notices mark where a sub-agent's lines
  start and stop (a background sub-agent's interleave with the parent's).
- ``assistant``: one line per content block, as in a session file. Its ``usage`` is the API's
  ``message_start`` snapshot (``output_tokens`` 1 whatever was written), so it is not counted.
- ``result`` ends a run: its ``result`` text is the turn's answer; ``is_error`` (``error_max_turns``,
  ``error_during_execution``…) makes the run failed and the turn answerless; its ``usage`` is what the run's
  main conversation spent (cache writes and reads kept apart), one usage event a run; ``num_turns``,
  ``duration_ms`` and ``total_cost_usd`` (the cost as Claude Code states it) go into the run's notice.
- ``system``/``task_started``, ``task_notification``: a sub-agent started / ended (notices);
  ``compact_boundary``: a compaction; ``permission_denied`` (the denied call's result says it too),
  ``task_progress``, ``task_updated``, ``background_tasks_changed``, ``thinking_tokens``, ``status``, hooks,
  and the partial-message and control events of the SDK protocol are known noise; anything else is unknown.

A stream that ends with a run still open (no ``result``: the process was killed or the output cut) is an
``incomplete`` run, its turn unanswered; a stream with no run in it at all is ``no_report``.
"""

from __future__ import annotations

from typing import Any

from transcript_reader.model import TokenUsage
from transcript_reader.providers.claude.decode import ClaudeDecoder, typed_line
from transcript_reader.providers.records import (
    DECODED,
    FLUSH,
    NOISE,
    UNKNOWN,
    Decoded,
    Meta,
    NoticeRec,
    Record,
    RunReport,
    TurnContext,
    TurnEnd,
    TurnStart,
    UsageEvent,
)

#: ``type`` values of stream-json events.
EVENT_TYPES = frozenset({"system", "user", "assistant", "result"})
#: Events of the SDK protocol that carry nothing a reader shows (partial messages, control, keep-alives).
NOISE_EVENTS = frozenset({
    "stream_event", "keep_alive", "control_request", "control_response", "control_cancel_request",
    "rate_limit_event", "tool_progress", "auth_status",
})
#: ``system`` subtypes that are bookkeeping (what they say, another line says for the reader).
NOISE_SUBTYPES = frozenset({
    "task_progress", "task_updated", "background_tasks_changed", "thinking_tokens", "status", "hook_started",
    "hook_progress", "hook_response", "permission_denied", "files_persisted",
})
#: Runs whose model messages are counted (a hostile file of a million ``init`` lines grows no list).
MAX_RUNS_COUNTED = 4096
#: ``source`` of the usage a stream's ``result`` lines state.
SOURCE = "sum of the result lines' usage (Claude Code stream-json, one per run)"


def _s(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _n(v: Any) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0 else None


def result_usage(u: Any) -> TokenUsage | None:
    """A ``result`` line's ``usage`` as a token figure (the session file's per-message rule: input is
    uncached input + cache writes + cache reads), or None when it carries none."""
    if not isinstance(u, dict):
        return None
    uncached, writes, reads, out = (_n(u.get(k)) for k in (
        "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"))
    details = u.get("output_tokens_details")
    thinking = _n(details.get("thinking_tokens")) if isinstance(details, dict) else 0
    inp = uncached + writes + reads
    return TokenUsage(input=inp, cached_input=reads, cache_write=writes, output=out, reasoning=thinking,
                      total=inp + out, source=SOURCE)


class StreamDecoder(ClaudeDecoder):
    """Line -> ``Decoded`` for a stream-json output. Besides the session decoder's state (open tool uses),
    the runs: how many began (``init``), how many ended (``result``), which sub-agent the previous line
    was (for the notices), and how the runs went."""

    def __init__(self) -> None:
        super().__init__()
        self.file_is_sidechain = False
        self.runs = 0  # runs begun (system/init)
        self.results = 0  # runs ended (result)
        self.turn_open = False  # the current run's turn has not ended
        self.parent: str | None = None  # the sub-agent (its Task/Agent call id) of the previous line
        self.failure: str | None = None
        self.session_id: str | None = None
        self.prompt_seen = True  # the current run's prompt was echoed, or said to be absent
        # the main conversation's model messages (distinct ids) of each run, in the order runs began:
        # what Claude Code's ``num_turns`` counts (tests/test_claude_stream.py)
        self.model_turns: list[int] = []
        self.last_message: str | None = None

    def decode(self, obj: Any, n: int) -> Decoded:
        typed = typed_line(obj, n)
        if isinstance(typed, Decoded):
            return typed
        t, ts = typed
        if t == "user" or t == "assistant":
            recs: list[Record] = []
            self._agent(obj, recs)
            msg = obj.get("message")
            if not isinstance(msg, dict):
                return Decoded(n, UNKNOWN, f"{t}/(no message)", tuple(recs), ts)
            if t == "user":
                if not self.prompt_seen and self.parent is None and obj.get("isReplay") is True:
                    self.prompt_seen = True
                self._user(_as_session_line(obj), msg, recs)
            else:
                if self.parent is None:
                    self._count_turn(msg)
                if not self.prompt_seen and self.parent is None:
                    # ``claude -p PROMPT`` prints no prompt: the turn has none, said once (never another's)
                    self.prompt_seen = True
                    recs.insert(0, NoticeRec("prompt", f"run {self.runs}: its prompt is not in the stream (claude -p "
                                                       "prints none; --replay-user-messages echoes it)"))
                self._assistant(_as_session_line(obj), msg, recs)
            return Decoded(n, DECODED, t, tuple(recs), ts)
        if t == "result":
            return Decoded(n, DECODED, f"result/{_s(obj.get('subtype')) or '?'}", tuple(self._result(obj)), ts)
        if t == "system":
            return self._system_event(obj, n, ts)
        if t in NOISE_EVENTS:
            return Decoded(n, NOISE, t, (), ts)
        return Decoded(n, UNKNOWN, t, (), ts)

    # ------------------------------------------------------------ runs

    def _system_event(self, obj: dict[str, Any], n: int, ts: str | None) -> Decoded:
        sub = _s(obj.get("subtype")) or "?"
        name = f"system/{sub}"
        if sub == "init":
            return Decoded(n, DECODED, name, tuple(self._init(obj)), ts)
        if sub == "task_started":
            what = _s(obj.get("description")) or _s(obj.get("subagent_type")) or "a task"
            bg = " in the background" if obj.get("is_backgrounded") is True else ""
            rec = NoticeRec("subagent", f"sub-agent started{bg} (call {_s(obj.get('tool_use_id')) or '?'}): {what}")
            return Decoded(n, DECODED, name, (rec,), ts)
        if sub == "task_notification":
            status = _s(obj.get("status")) or "ended"
            summary = _s(obj.get("summary"))
            rec = NoticeRec("error" if status == "failed" else "subagent",
                            f"sub-agent {status} (call {_s(obj.get('tool_use_id')) or '?'})"
                            + (f": {summary}" if summary else ""))
            return Decoded(n, DECODED, name, (rec,), ts)
        if sub in NOISE_SUBTYPES:
            return Decoded(n, NOISE, name, (), ts)
        recs: list[Record] = []
        self._system(obj, recs)  # compact_boundary, and any system line that says something (content)
        return Decoded(n, DECODED if recs else UNKNOWN, name, tuple(recs), ts)

    def _init(self, obj: dict[str, Any]) -> list[Record]:
        recs: list[Record] = []
        sid = _s(obj.get("session_id"))
        model = _s(obj.get("model"))
        if self.runs == 0:
            self.session_id = sid
            recs.append(Meta(session_id=sid, cwd=_s(obj.get("cwd")), originator="claude-code",
                             version=_s(obj.get("claude_code_version")), source="stream-json", model=model))
        elif sid is not None and sid != self.session_id:
            # two outputs put end to end (a run of another session): said, never merged silently
            recs.append(NoticeRec("session", f"run {self.runs + 1} belongs to another session ({sid}) than the "
                                             f"stream's first run ({self.session_id})"))
        if self.parent is not None:
            recs.append(NoticeRec("sidechain", f"end of the sub-agent's work (call {self.parent})"))
            self.parent = None
            self.sidechain = False
        if self.turn_open:
            # a run began before the previous one's result: that run is over (its result comes later)
            recs.append(TurnEnd(turn_id=self._turn_id(), completed=True))
        self.runs += 1
        if len(self.model_turns) < MAX_RUNS_COUNTED:
            self.model_turns.append(0)
        self.turn_open = True
        self.prompt_seen = False
        recs.append(TurnStart(turn_id=self._turn_id()))
        recs.append(TurnContext(model=model, cwd=_s(obj.get("cwd"))))
        return recs

    def _count_turn(self, msg: dict[str, Any]) -> None:
        mid = _s(msg.get("id"))
        if mid is not None and mid == self.last_message:
            return  # another content block of the same message
        self.last_message = mid
        if not self.model_turns:
            self.model_turns.append(0)  # the stream's head (its init) was cut
        self.model_turns[-1] += 1

    def _turn_id(self) -> str:
        return f"run-{self.runs}"

    def _result(self, obj: dict[str, Any]) -> list[Record]:
        recs: list[Record] = []
        self.results += 1
        index = self.results
        failed = obj.get("is_error") is True
        sub = _s(obj.get("subtype")) or "?"
        text = obj.get("result") if isinstance(obj.get("result"), str) else None
        errors = obj.get("errors")
        why = "; ".join(e for e in errors if isinstance(e, str)) if isinstance(errors, list) else ""
        why = why or (text if failed and text else "") or sub
        if failed and self.failure is None:
            self.failure = f"{sub}: {why}" if why != sub else sub
        recs.append(NoticeRec("error" if failed else "run", _run_notice(index, obj, failed, sub, why)))
        usage = result_usage(obj.get("usage"))
        if usage is not None:
            recs.append(UsageEvent(call=usage, key=_s(obj.get("uuid")) or f"result-{index}"))
        if self.turn_open and index >= self.runs:
            # the result of the run that is open: it ends its turn (an error: the turn has no answer)
            self.turn_open = False
            self.parent = None
            recs.append(TurnEnd(turn_id=self._turn_id(), completed=not failed, last_agent_message=text,
                                has_last_agent_message=text is not None and not failed))
        elif self.runs == 0 and self.results == 1:
            # a result with no init before it (the head of the stream was cut): the run is this line's
            self.runs = 1
            recs.append(TurnStart(turn_id=self._turn_id()))
            recs.append(TurnEnd(turn_id=self._turn_id(), completed=not failed, last_agent_message=text,
                                has_last_agent_message=text is not None and not failed))
        recs.append(self.report())
        return recs

    def report(self, *, end: bool = False) -> RunReport:
        """How the runs went so far (the last report stands): failed when one failed; incomplete when the
        stream ended with a run open; no_report when no run was seen."""
        if self.failure is not None:
            status = "failed"
        elif self.runs == 0 and self.results == 0:
            status = "no_report"
        elif self.turn_open or self.results < self.runs:
            status = "incomplete" if end else "running"
        else:
            status = "completed"
        error = self.failure
        if status == "incomplete":
            error = (f"the stream ended before the result of run {self.results + 1} of {self.runs} "
                     "(the process was stopped, or the output cut)")
        return RunReport(status=status, error=error, turns=max(self.runs, self.results))

    def close(self, n: int) -> Decoded:
        """The end of the stream: an open run's turn ends unanswered; the final run report."""
        recs: list[Record] = []
        if self.turn_open:
            self.turn_open = False
            recs.append(NoticeRec("error", f"run {self.runs} has no result line: the stream ended while it ran "
                                           "(the process was stopped, or the output cut); its turn has no answer"))
            recs.append(TurnEnd(turn_id=self._turn_id(), completed=False))
        recs.append(self.report(end=True))
        return Decoded(n, FLUSH, records=tuple(recs))

    # ------------------------------------------------------------ sub-agents

    def _agent(self, obj: dict[str, Any], recs: list[Record]) -> None:
        """A sub-agent's lines (``parent_tool_use_id``): read as an inline sidechain is, with a notice where
        the stream passes from one conversation to another."""
        parent = _s(obj.get("parent_tool_use_id"))
        if parent != self.parent:
            if parent is not None:
                recs.append(NoticeRec("sidechain", f"the sub-agent of call {parent}: its work follows"))
            else:
                recs.append(NoticeRec("sidechain", f"end of the sub-agent's work (call {self.parent})"))
        self.parent = parent
        self.sidechain = parent is not None

    def _usage(self, msg: dict[str, Any], obj: dict[str, Any]) -> UsageEvent | None:
        return None  # an assistant line's usage is the message_start snapshot: the run's result states it


def _run_notice(index: int, obj: dict[str, Any], failed: bool, sub: str, why: str) -> str:
    facts = []
    turns = obj.get("num_turns")
    if isinstance(turns, int) and not isinstance(turns, bool):
        facts.append(f"model turns {turns}")
    ms = _num(obj.get("duration_ms"))
    if ms is not None:
        facts.append(f"{ms / 1000:.3g} s")
    cost = _num(obj.get("total_cost_usd"))
    if cost is not None:
        # the session's cost so far (a resumed session's earlier runs included), as Claude Code states it
        facts.append(f"session cost so far ${cost:.4f} as Claude Code states it (total_cost_usd)")
    head = f"run {index} failed ({sub}): {why}" if failed else f"run {index} ended ({sub})"
    return head + (f": {', '.join(facts)}" if facts else "")


def _as_session_line(obj: dict[str, Any]) -> dict[str, Any]:
    """The keys the session decoder reads, by the names a session file gives them: the tool's structured
    result (``tool_use_result`` -> ``toolUseResult``) and a rejected permission decision."""
    tur = obj.get("tool_use_result")
    meta = obj.get("tool_result_meta")
    if tur is None and meta is None:
        return obj
    view = dict(obj)
    view["toolUseResult"] = tur
    if isinstance(meta, list):
        for m in meta:
            pd = m.get("permission_decision") if isinstance(m, dict) else None
            if isinstance(pd, dict) and pd.get("decision") == "reject":
                view["permissionDecision"] = pd
                break
    return view
