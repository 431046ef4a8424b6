"""Turns and final answers: where a turn begins and ends, which assistant message answers it, and the
de-duplication of Codex's two copies of a message.

Two final-answer rules, chosen per turn by its turn records (``last_item_answers``) and applied only
here (``settle_held`` and ``interrupt``):

- a rollout's: the assistant message ``task_complete`` names (its last one when it names none), or one
  whose ``phase`` is ``final_answer``; calls and reasoning after a message do not make it commentary;
- ``codex exec --json``'s: the turn's last item, when it is an assistant message and the turn
  completed. Any other item of the turn after it (a call, reasoning, a message, an ``error`` item)
  makes it commentary; a turn that failed, was cut or never started answers nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from transcript_reader.assembly import rules
from transcript_reader.assembly.state import Held
from transcript_reader.model import AssistantMessage, ContextMessage, Notice, Reasoning, UserMessage
from transcript_reader.providers.head import session_title
from transcript_reader.providers.records import Message, ReasoningRec, TurnAborted, TurnEnd, TurnStart

if TYPE_CHECKING:
    from transcript_reader.assembly.assembler import Assembler


class Turns:
    """The current turn, the assistant message waiting to learn whether it is the answer, and the
    recent messages seen (for de-duplication)."""

    def __init__(self, a: Assembler) -> None:
        self.a = a
        self.held: Held | None = None
        self.dedupe: dict[tuple[Any, ...], list[tuple[str, int]]] = {}
        self.turn_id: str | None = None
        self.explicit_turns = False
        self.turn_started = False  # this turn began with task_started: finality needs task_complete
        self.turn_aborted = False
        self.turn_count = 0
        self.turn_cwd: str | None = None
        self.last_item = False  # this turn's answer is its last item (see the module docstring)

    def on_turn_start(self, rec: TurnStart, line: int, ts: str | None) -> None:
        if rec.last_item_answers != self.last_item:
            # the held message belongs to what came before (a rollout an exec stream was appended to)
            self.settle_held(not self.turn_started and not self.turn_aborted)
        self.last_item = rec.last_item_answers
        self.turn_start(rec.turn_id)

    def on_aborted(self, rec: TurnAborted, line: int, ts: str | None) -> None:
        self.settle_held(False)
        self.turn_aborted = True
        self.a.q.push([Notice(line=line, timestamp=ts, turn_id=rec.turn_id or self.turn_id,
                              category="turn_aborted", message=f"turn aborted: {rec.reason}")])

    def on_reasoning(self, rec: ReasoningRec, line: int, ts: str | None) -> None:
        if self.is_dup(("reasoning", rec.text), rec.src, line):
            return
        self.interrupt()
        self.a.q.push([Reasoning(line=line, timestamp=ts, turn_id=self.turn_id, text=rec.text)])

    def turn_start(self, turn_id: str | None) -> None:
        self.settle_held(not self.turn_started and not self.turn_aborted)
        # calls of the previous turn still waiting never got an output (an output may follow
        # turn_aborted, so they are settled only when the next turn begins: public stage0 fixture)
        self.a.calls.settle_turn_calls()
        self.explicit_turns = True
        self.turn_started = True
        self.turn_aborted = False
        if turn_id != self.turn_id or turn_id is None:
            self.turn_count += 1
        self.turn_id = turn_id or f"turn-{self.turn_count}"

    def turn_end(self, rec: TurnEnd, line: int, ts: str | None) -> None:
        self.last_item = self.last_item or rec.last_item_answers
        held = self.held
        if held is not None:
            if not rec.completed or self.last_item:
                self.settle_held(rec.completed, turn_completed=rec.completed)
            elif rec.has_last_agent_message:
                lam = rec.last_agent_message
                # a refusal that ends its turn is the turn's answer (issue 3 / seed 004), even though
                # task_complete names no text for it or only its non-refusal part
                self.settle_held(held.msg.refusal
                                  or (lam is not None and lam.strip() == held.msg.text.strip()))
            else:
                self.settle_held(True)
        for pc in self.a.calls.calls.values():
            pc.turn_done = True
        self.a.cells.settle_closed(turn_over=True)
        self.turn_started = False

    def is_dup(self, key: tuple[Any, ...], src: str, line: int) -> bool:
        """True when ``key`` was seen from a different copy within ``rules.DEDUPE_WINDOW`` lines before (that
        sighting is consumed). Codex writes its two copies of a message at the same moment, so only
        recent sightings count: the pool stays tiny however often a text repeats."""
        seen = self.dedupe.get(key)
        if seen is None:
            if len(self.dedupe) > 512:
                self.dedupe = {k: v for k, v in self.dedupe.items() if v and v[-1][1] >= line - rules.DEDUPE_WINDOW}
            self.dedupe[key] = [(src, line)]
            return False
        horizon = line - rules.DEDUPE_WINDOW
        if seen and seen[0][1] < horizon:
            seen[:] = [s for s in seen if s[1] >= horizon]
        for i, (s, _) in enumerate(seen):
            if s != src:
                del seen[i]
                return True
        seen.append((src, line))
        return False

    def message(self, m: Message, line: int, ts: str | None) -> None:
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
            if not self.explicit_turns or not self.turn_started:
                # eras without turn events: a person's message opens the next turn
                self.settle_held(not self.turn_aborted)
                if not self.explicit_turns:
                    self.a.calls.settle_turn_calls()
                    self.turn_count += 1
                    self.turn_id = f"turn-{self.turn_count}"
                    self.turn_aborted = False
            if self.a.session.title is None and m.text.strip():
                self.a.session.title = session_title(m.text)
            self.a.q.push([UserMessage(line=line, timestamp=ts, turn_id=self.turn_id, text=m.text, images=m.images)])
            return
        if m.role != "assistant":
            self.a.q.push([ContextMessage(line=line, timestamp=ts, turn_id=self.turn_id, role=m.role, label=m.role,
                                       text=m.text)])
            return
        if (m.phase == "final_answer" or m.phase == "commentary") and not self.last_item:
            self.settle_held(False)
            self.a.q.push([self.assistant(m, line, ts, self.turn_id, m.phase == "final_answer")])
            return
        self.settle_held(False)
        slot = self.a.q.pending()
        held = Held(m, line, ts, self.turn_id, slot)
        slot.owner = held
        self.held = held

    def phase_dup(self, m: Message) -> bool:
        """The second copy of a message was seen: is its phase compatible with the first's? When the
        held (undecided) copy lacks the phase this copy has, the phase is taken over."""
        h = self.held
        if m.role == "assistant" and h is not None and h.msg.text == m.text and h.msg.role == m.role:
            if h.msg.phase is None and m.phase is not None:
                h.msg.phase = m.phase
                if m.phase in ("final_answer", "commentary"):
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

    def settle_held(self, final: bool, *, turn_completed: bool = False) -> None:
        """The held message's finality is known: ``final`` by the rollout rule; under the last-item rule
        only the completion of its turn (``turn_completed``) makes it the answer."""
        h = self.held
        if h is None:
            return
        if self.last_item:
            final = turn_completed
        self.held = None
        h.slot.items = [self.assistant(h.msg, h.line, h.ts, h.turn, final)]
