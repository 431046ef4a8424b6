"""Which user-role messages are prompts (what a person typed) and which are context the harness wrote.

Codex writes a person's prompt twice: as a ``response_item`` message (what the model is sent) and as an
*event copy* (``event_msg/user_message`` up to 0.152, ``item_completed/UserMessage`` from 0.150). Its own
context (AGENTS.md, ``<environment_context>``, ``<permissions instructions>``, skills) it writes as
``response_item`` user or developer messages only, never with an event copy, and before or after a
turn's ``task_started`` depending on the era (realcodex 0.100: before; 0.144+: after). The text tags of
context (``common.context_label``) find most of it, but a sanitizer that rewrote the texts (public
alaarab/phren 0.157.1 fixture: every text is "Neutral text N.") leaves only that structure. So, in a
session that writes event copies, the event copy is the prompt and a ``response_item`` user message is
either its copy or context; only in a file that writes no event copies at all (hand-made rollouts) is a
``response_item`` user message a prompt on its own, as before.

A ``response_item`` user message therefore waits, its place in the order kept, until its fate is known:
an event copy arrives (the held copy with the same text is that prompt's copy, the others are context; an
event copy without content takes the text of the last held one), or a record the turn's work makes (an
assistant message, reasoning, a call, the turn's end; not a turn's start, its context or a token count)
shows that no copy is coming. Codex writes the two copies together (1-2 lines apart in every recording).

A user message record without content (no text, no image) never becomes an empty ``user_message``: its
line stays decoded, and when neither copy of it has content a ``notice`` says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from transcript_reader.assembly.state import HeldPrompt
from transcript_reader.model import ContextMessage, Notice
from transcript_reader.providers.records import Message, Record, TurnContext, TurnStart

if TYPE_CHECKING:
    from transcript_reader.assembly.peers import TurnsView
    from transcript_reader.assembly.state import OrderQueue

#: Held user messages at most (a hostile file of consecutive ones): the oldest is settled beyond.
MAX_HELD = 64

#: Record kinds that do not end the prompt stage of a turn: a held message stays held through them.
PROMPT_STAGE: frozenset[type] = frozenset({Message, TurnStart, TurnContext})

#: The label of a user-role message without an event copy in a session that writes them.
UNMARKED = "unmarked_context"


def has_content(m: Message) -> bool:
    return bool(m.text.strip() or m.images)


class Prompts:
    """The user messages waiting for their event copy, and whether the session writes event copies."""

    def __init__(self, q: OrderQueue, t: TurnsView) -> None:
        self.q = q
        self.t = t
        self.held: list[HeldPrompt] = []
        self.event_copies = False  # an event copy was seen: a response_item alone is not a prompt
        # an event copy without content, unpaired, holding its place in the order (its notice, if no
        # response copy with content follows, goes there: before a later unreadable line's item)
        self.empty_event: HeldPrompt | None = None
        self.waiting = False  # held or empty_event: the assembler settles at the next work record

    def before(self, rec: Record) -> None:
        """Called for each record while ``waiting``: a record of the turn's work settles what waits."""
        if type(rec) not in PROMPT_STAGE or (isinstance(rec, Message) and rec.role == "assistant"):
            self.settle()

    def user(self, m: Message, line: int, ts: str | None) -> None:
        """A rollout user message that is not tagged as context."""
        t = self.t
        key = ("msg", "user", m.text, m.images, m.refusal, None)
        if m.src == "response":
            if t.is_dup(key, m.src, line):
                return  # its event copy came first and is already the prompt
            if self.empty_event is not None and has_content(m):
                # the event copy before it named no text: this copy's text is the prompt's
                self.empty_event.slot.items = []
                self.empty_event = None
                self.waiting = bool(self.held)
                t.open_prompt(m, line, ts)
                return
            slot = self.q.pending()
            h = HeldPrompt(m, line, ts, slot)
            slot.owner = h
            self.held.append(h)
            self.waiting = True
            if len(self.held) > MAX_HELD:
                self.settle_one(self.held.pop(0))
            return
        self.event_copies = True
        dup = t.is_dup(key, m.src, line)
        twin: HeldPrompt | None = None
        if self.held:
            if dup:
                twin = next((h for h in reversed(self.held) if h.msg.text == m.text and h.msg.images == m.images), None)
            if twin is None and not has_content(m):
                twin = next((h for h in reversed(self.held) if has_content(h.msg)), None)
            held, self.held = self.held, []
            for h in held:
                if h is not twin:
                    self.settle_one(h)
        if twin is not None:
            self.waiting = self.empty_event is not None
            if has_content(twin.msg) or has_content(m):
                t.open_prompt(m if has_content(m) else twin.msg, twin.line, twin.ts, twin.slot)
            else:  # both copies without content
                twin.slot.items = [self.empty_notice(twin.line, twin.ts)]
            return
        if dup:
            self.waiting = self.empty_event is not None
            return  # its response copy was settled already
        if not has_content(m):
            self.settle_empty()
            slot = self.q.pending()
            self.empty_event = slot.owner = HeldPrompt(m, line, ts, slot)
            self.waiting = True
            return
        self.waiting = self.empty_event is not None
        t.open_prompt(m, line, ts)

    def settle(self) -> None:
        """No event copy is coming for what waits."""
        held, self.held = self.held, []
        for h in held:
            self.settle_one(h)
        self.settle_empty()
        self.waiting = False

    def settle_empty(self) -> None:
        if self.empty_event is not None:
            e, self.empty_event = self.empty_event, None
            e.slot.items = [self.empty_notice(e.line, e.ts)]

    def settle_one(self, h: HeldPrompt) -> None:
        t = self.t
        if not has_content(h.msg):
            h.slot.items = [self.empty_notice(h.line, h.ts)] if not self.event_copies else []
        elif self.event_copies:
            h.slot.items = [ContextMessage(line=h.line, timestamp=h.ts, turn_id=t.turn_id, role="user",
                                           label=UNMARKED, text=h.msg.text)]
        else:
            t.open_prompt(h.msg, h.line, h.ts, h.slot)

    def empty_notice(self, line: int, ts: str | None) -> Notice:
        return Notice(line=line, timestamp=ts, turn_id=self.t.turn_id, category="empty_message",
                      message="a user message record without content (no text, no image): nothing to show")
