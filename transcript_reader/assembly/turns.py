"""Turns and final answers: where a turn begins and ends, which assistant message answers it, and the
de-duplication of Codex's two copies of a message.

A turn is a turn id (``task_started`` / ``turn_context``), not a user message: a person may type into a
running turn (steering), and those messages belong to it. Eras without turn ids (0.40-0.80, early Rust,
the TS CLI) open a turn at each prompt. Which user messages are prompts is ``prompts``' job.

Two final-answer rules, chosen per turn by its turn records (``last_item_answers``) and applied only
here (``settle_held`` and ``interrupt``):

- a rollout's: the assistant message ``task_complete`` names (its last one when it names none), or one
  whose ``phase`` is ``final_answer``; calls and reasoning after a message do not make it commentary;
- ``codex exec --json``'s: the turn's last item, when it is an assistant message and the turn
  completed. Any other item of the turn after it (a call, reasoning, a message, an ``error`` item)
  makes it commentary; a turn that failed, was cut or never started answers nothing.

Two ways a completed answer stops being one:

- **Interrupted.** A turn opened by ``task_started`` that gets neither ``task_complete`` nor
  ``turn_aborted`` before the next turn starts was cut off (the process died; the session was resumed
  later): a ``notice`` says so, and its last message is not its final answer.
- **Rewound.** ``thread_rolled_back {num_turns}`` inside one file (the legacy history; paginated history
  starts a segment file instead: ``transcript_reader.reading.threads``) rewinds the last ``num_turns`` turns. Their
  final answers are marked by a ``rewound`` notice and are not final. Because the rollback comes after
  those turns completed, a whole-file read keeps each final answer back until ``ROLLBACK_HOLD`` more
  turns completed (or the file ends); a live read (``follow``) holds nothing, and a rollback that reaches
  an answer already given says so in its notice.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Any

from transcript_reader.assembly import rules
from transcript_reader.assembly.prompts import Prompts
from transcript_reader.assembly.state import Held, HeldFinal, Slot
from transcript_reader.model import AssistantMessage, ContextMessage, Format, Notice, Reasoning, UserMessage
from transcript_reader.providers.head import session_title
from transcript_reader.providers.records import (
    Message,
    ReasoningRec,
    Rollback,
    TurnAborted,
    TurnEnd,
    TurnStart,
)

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import Peers

#: Completed turns whose final answers a whole-file read keeps back for a later ``thread_rolled_back``.
ROLLBACK_HOLD = 4


#: ``Turns.is_dup``: a text up to this long is part of its pool's key; a longer one is pooled by its
#: length and its first and last ``_POOL_ENDS`` characters.
_POOLED_WHOLE = 256
_POOL_ENDS = 64

class Turns:
    """The current turn, the assistant message waiting to learn whether it is the answer, and the
    recent messages seen (for de-duplication)."""

    def __init__(self, a: Peers, *, live: bool = False) -> None:
        self.a = a
        self.prompts = Prompts(a.q, self)
        self.held: Held | None = None
        self.dedupe: dict[tuple[Any, ...], list[tuple[str, int, tuple[Any, ...]]]] = {}
        self.turn_id: str | None = None
        self.answered_turn: str | None = "\0none"  # the last turn a final answer was given for
        self.explicit_turns = False
        self.turn_started = False  # this turn began with task_started: finality needs task_complete
        self.turn_aborted = False
        self.task_open: tuple[int, str | None] | None = None  # (line, ts) of a task_started not yet ended
        self.turn_count = 0
        self.turn_cwd: str | None = None
        #: the most recent turn ids, oldest first (what a rollback can name)
        self.recent: deque[str | None] = deque(maxlen=64)
        self.finals: deque[HeldFinal] = deque()
        self.released: deque[str | None] = deque(maxlen=64)  # turns whose final answer already went out
        self.hold = 0 if live else ROLLBACK_HOLD
        self.last_item = False  # this turn's answer is its last item (see the module docstring)

    def on_turn_start(self, rec: TurnStart, line: int, ts: str | None) -> None:
        if rec.last_item_answers != self.last_item:
            # the held message belongs to what came before (a rollout an exec stream was appended to)
            self.settle_held(not self.turn_started and not self.turn_aborted)
        self.last_item = rec.last_item_answers
        self.turn_start(rec.turn_id, line, ts)
        # a turn replayed from another session (a fork's copy) goes on there, not here; an exec
        # stream says itself how its turns end
        self.task_open = (line, ts) if not self.a.session.replaying and not self.last_item else None

    def on_aborted(self, rec: TurnAborted, line: int, ts: str | None) -> None:
        self.settle_held(False)
        self.turn_aborted = True
        self.task_open = None
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=rec.turn_id or self.turn_id,
                              category="turn_aborted", message=f"turn aborted: {rec.reason}")])

    def on_reasoning(self, rec: ReasoningRec, line: int, ts: str | None) -> None:
        if self.is_dup(("reasoning", rec.text), rec.src, line):
            return
        self.interrupt()
        self.a.q.push([Reasoning(line=line, timestamp=ts, turn_id=self.turn_id, text=rec.text)])

    def turn_start(self, turn_id: str | None, line: int = 0, ts: str | None = None) -> None:
        new = turn_id != self.turn_id or turn_id is None
        if new and self.task_open is not None:
            self.interrupted(line, ts)
        self.settle_held(not self.turn_started and not self.turn_aborted)
        # calls of the previous turn still waiting never got an output (an output may follow
        # turn_aborted, so they are settled only when the next turn begins: public stage0 fixture)
        self.a.calls.settle_turn_calls()
        self.explicit_turns = True
        self.turn_started = True
        self.turn_aborted = False
        if new:
            self.turn_count += 1
        self.turn_id = turn_id or f"turn-{self.turn_count}"
        if new:
            self.recent.append(self.turn_id)

    def interrupted(self, line: int, ts: str | None) -> None:
        """The turn that ``task_started`` opened never ended, and another begins: it was cut off."""
        assert self.task_open is not None
        start_line, start_ts = self.task_open
        self.task_open = None
        gap = ""
        t0, t1 = rules.iso_seconds(start_ts or ""), rules.iso_seconds(ts or "")
        if t0 is not None and t1 is not None and t1 >= t0:
            gap = f", {_span(t1 - t0)} after it started"
        self.settle_held(False)
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category="interrupted",
                              message=f"turn interrupted: it started at line {start_line} and never completed "
                                      f"(no task_complete: the process stopped); the session went on with a new "
                                      f"turn at line {line}{gap}. Its last message is not a final answer")])

    def turn_end(self, rec: TurnEnd, line: int, ts: str | None) -> None:
        self.last_item = self.last_item or rec.last_item_answers
        held = self.held
        if held is not None:
            if not rec.completed or self.last_item:
                self.settle_held(rec.completed, turn_completed=rec.completed)
            elif held.msg.phase == "final_answer":
                self.settle_held(True)
            elif rec.has_last_agent_message:
                lam = rec.last_agent_message
                # a refusal that ends its turn is the turn's answer, even though
                # task_complete names no text for it or only its non-refusal part
                is_answer = held.msg.refusal or (lam is not None and lam.strip() == held.msg.text.strip())
                self.settle_held(is_answer)
                if not is_answer:
                    self.answer_of_task_complete(rec, line, ts)
            else:
                self.settle_held(True)
        elif rec.completed and not self.last_item and rec.has_last_agent_message:
            self.answer_of_task_complete(rec, line, ts)
        for pc in self.a.calls.calls.values():
            pc.turn_done = True
        self.a.cells.settle_closed(turn_over=True)
        self.turn_started = False
        self.task_open = None

    def is_dup(self, key: tuple[Any, ...], src: str, line: int) -> bool:
        """True when ``key`` was seen from a different copy within ``rules.DEDUPE_WINDOW`` lines before (that
        sighting is consumed). Codex writes its two copies of a message at the same moment, so only
        recent sightings count: the pool stays tiny however often a text repeats.

        ``key`` is ``("msg", role, text, …)`` or ``("reasoning", text)``. A long text is pooled by its
        length and its two ends, and the whole key is compared only against the sightings in that
        pool: hashing every long text whole (a prompt with its AGENTS.md, a long answer) cost more
        than the rest of reading its line. Each sighting keeps its key; the answer is the same."""
        i = 2 if key[0] == "msg" else 1
        text = key[i]
        pool_key = key if text.__class__ is not str or len(text) <= _POOLED_WHOLE else (
            key[:i] + (len(text), text[:_POOL_ENDS], text[-_POOL_ENDS:]) + key[i + 1:])
        seen = self.dedupe.get(pool_key)
        if seen is None:
            if len(self.dedupe) > 512:
                self.dedupe = {k: v for k, v in self.dedupe.items() if v and v[-1][1] >= line - rules.DEDUPE_WINDOW}
            self.dedupe[pool_key] = [(src, line, key)]
            return False
        horizon = line - rules.DEDUPE_WINDOW
        if seen and seen[0][1] < horizon:
            seen[:] = [s for s in seen if s[1] >= horizon]
        for j, (s, _, k) in enumerate(seen):
            if s != src and k == key:
                del seen[j]
                return True
        seen.append((src, line, key))
        return False

    def message(self, m: Message, line: int, ts: str | None) -> None:
        if m.role == "user" and m.context_label is None and self.a.fmt is Format.ROLLOUT:
            self.prompts.user(m, line, ts)
            return
        # every field is compared; a ``phase`` only one copy carries (item_completed has it, the
        # response_item copy not: public alaarab 0.157.1 fixture) is compared through _phase_dup
        key = ("msg", m.role, m.text, m.images, m.refusal, m.context_label)
        if self.is_dup(key, m.src, line) and self.phase_dup(m):
            return
        self.interrupt()
        if m.context_label is not None:
            self.a.q.push([ContextMessage(line=line, timestamp=ts, turn_id=self.turn_id, role=m.role,
                                       label=m.context_label, text=m.text)])
            return
        if m.role == "user":
            if m.text.strip() or m.images:
                self.open_prompt(m, line, ts)
            else:
                self.a.q.push([self.prompts.empty_notice(line, ts)])
            return
        if m.role != "assistant":
            self.a.q.push([ContextMessage(line=line, timestamp=ts, turn_id=self.turn_id, role=m.role, label=m.role,
                                       text=m.text)])
            return
        if not self.last_item and (m.phase == "commentary" or (m.phase == "final_answer" and self.task_open is None)):
            self.settle_held(False)
            if m.phase == "final_answer":
                self.answered_turn = self.turn_id
            self.a.q.push([self.assistant(m, line, ts, self.turn_id, m.phase == "final_answer")])
            return
        # a final_answer in a turn task_started opened waits for task_complete: a turn cut off
        # before it completes gives no final answer
        self.settle_held(False)
        slot = self.a.q.pending()
        held = Held(m, line, ts, self.turn_id, slot)
        slot.owner = held
        self.held = held

    def open_prompt(self, m: Message, line: int, ts: str | None, slot: Slot | None = None) -> None:
        """A person's prompt (``m``'s text and images) at ``line``, in ``slot`` when its place was kept."""
        if not self.explicit_turns or not self.turn_started:
            # eras without turn events: a person's message opens the next turn
            self.settle_held(not self.turn_aborted)
            if not self.explicit_turns:
                self.a.calls.settle_turn_calls()
                self.turn_count += 1
                self.turn_id = f"turn-{self.turn_count}"
                self.recent.append(self.turn_id)
                self.turn_aborted = False
        if self.a.session.title is None and m.text.strip():
            self.a.session.title = session_title(m.text)
        item = UserMessage(line=line, timestamp=ts, turn_id=self.turn_id, text=m.text, images=m.images)
        if slot is None:
            self.a.q.push([item])
        else:
            slot.items = [item]

    def phase_dup(self, m: Message) -> bool:
        """The second copy of a message was seen: is its phase compatible with the first's? When the
        held (undecided) copy lacks the phase this copy has, the phase is taken over."""
        h = self.held
        if m.role == "assistant" and h is not None and h.msg.text == m.text and h.msg.role == m.role:
            if h.msg.phase is None and m.phase is not None:
                h.msg.phase = m.phase
                if m.phase == "commentary" or (m.phase == "final_answer" and self.task_open is None):
                    self.settle_held(m.phase == "final_answer")
                return True
            return h.msg.phase == m.phase or m.phase is None
        return True

    def assistant(self, m: Message, line: int, ts: str | None, turn: str | None, final: bool) -> AssistantMessage:
        return AssistantMessage(line=line, timestamp=ts, turn_id=turn, text=m.text, final=final,
                                refusal=m.refusal, phase=m.phase)

    def interrupt(self) -> None:
        """Another item of the turn arrived: under the last-item rule the held message is commentary."""
        if self.last_item and self.held is not None:
            self.settle_held(False)

    def answer_of_task_complete(self, rec: TurnEnd, line: int, ts: str | None) -> None:
        """A completed turn whose answer only ``task_complete.last_agent_message`` carries (no assistant
        message of the turn has its text: real files where the answer was never written as a message):
        that text is the turn's final answer, shown at the task_complete line."""
        text = rec.last_agent_message
        if not text or not text.strip() or self.answered_turn == self.turn_id:
            return
        m = Message(role="assistant", text=text, src="task_complete")
        slot = self.a.q.pending()
        slot.owner = held = Held(m, line, ts, self.turn_id, slot)
        self.held = held
        self.settle_held(True)

    def settle_held(self, final: bool, *, turn_completed: bool = False) -> None:
        """The held message's finality is known: ``final`` by the rollout rule; under the last-item rule
        only the completion of its turn (``turn_completed``) makes it the answer. A final answer is
        kept back (``HeldFinal``) while a rollback may still rewind its turn."""
        h = self.held
        if h is None:
            return
        if self.last_item:
            final = turn_completed
        self.held = None
        if final:
            self.answered_turn = h.turn
        item = self.assistant(h.msg, h.line, h.ts, h.turn, final)
        if final and self.hold:
            # kept back: a thread_rolled_back may yet rewind its turn
            h.slot.owner = held = HeldFinal(item, h.turn, h.slot)
            self.finals.append(held)
            if len({f.turn for f in self.finals}) > self.hold:
                self.release_final()
            return
        if final:
            self.released.append(h.turn)
        h.slot.items = [item]

    def release_final(self) -> None:
        """The oldest answer kept back goes out as final."""
        f = self.finals.popleft()
        self.released.append(f.turn)
        f.slot.items = [f.item]

    def release_finals(self) -> None:
        while self.finals:
            self.release_final()

    def on_rollback(self, rec: Rollback, line: int, ts: str | None) -> None:
        """``thread_rolled_back``: the last ``num_turns`` turns are rewound; their answers are not final."""
        self.settle_held(False)
        n = rec.num_turns
        gone = list(self.recent)[-n:] if n else []
        for _ in gone:
            self.recent.pop()
        gone_set = set(gone)
        kept: deque[HeldFinal] = deque()
        demoted = 0
        for f in self.finals:
            if f.turn in gone_set:
                item = f.item
                assert isinstance(item, AssistantMessage)
                f.slot.items = [Notice(line=item.line, timestamp=item.timestamp, turn_id=f.turn, category="rewound",
                                       message=f"rewound by the thread_rolled_back at line {line}: this turn is no "
                                               f"longer part of the thread, and this answer is not final"),
                                AssistantMessage(line=item.line, timestamp=item.timestamp, turn_id=item.turn_id,
                                                 text=item.text, final=False, refusal=item.refusal, phase=item.phase)]
                demoted += 1
            else:
                kept.append(f)
        self.finals = kept
        text = f"rolled back {n} turn(s)" if n is not None else "rolled back"
        if gone:
            text += f": turn{'s' if len(gone) > 1 else ''} {', '.join(str(g) for g in gone)} rewound away"
        if n and len(gone) < n:
            text += f"{' and' if gone else ':'} {n - len(gone)} earlier turn(s) not in this file"
        if any(g in self.released for g in gone):
            text += "; an answer shown above for a rewound turn is not final"
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=self.turn_id, category="rollback", message=text)])


def _span(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
