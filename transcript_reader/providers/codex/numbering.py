"""The record numbering of a rollout (``ordinal``, Codex 0.148+: each session numbers the lines it writes
0, 1, 2, …): what a break in it says.

- **A gap** (a line numbered past the next number): records of this session are missing from the file
  (cut out, lost). A notice (category ``gap``) names the missing numbers before the line after them:
  what they held is unknown, so no rule may read their absence as evidence (a code cell or a call whose
  records may be in the gap is not "not run", and not a contradiction: ``assembly.cells``). A file whose
  first numbered line is not its header and is not numbered 0 misses its start: said the same way.
  Numbers that repeat or go back without a new header (hand-edited files) are not a gap: nothing said.
- **Another session's header whose number does not continue this file's** (it starts again, at 0 when
  two sessions write one file): a second session in the file, its lines interleaved with this one's or
  appended. A copy of a parent's history in a fork goes on with the file's numbering and is not this
  (``assembly.session``). The file is read as its first session's; each line of the other session is
  set aside (``Decoded.other``: counted, never read into this session), by the evidence the line
  carries, strongest first: the thread id it names, a turn id already seen in one session, the one
  session whose numbering it continues exactly, the one whose numbering it may continue; a line that
  fits several goes with the one whose latest line came just before it in time (counted and said). Notices say where the other session starts
  and, at the end, its lines, where it began, and its prompts (none lost: each is named there).

The fixture ``fixtures/transcripts/interleaved_sessions.jsonl`` is two real 0.171.0 recordings merged
line by line; ``numbering_gap.jsonl`` a real recording with lines cut out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from transcript_reader.providers.records import BLANK, FLUSH, Decoded, Message, Meta, NoticeRec

#: Category of the notice of missing record numbers.
GAP = "gap"
#: Category of the notices of another session's lines in the file.
OTHER_SESSION = "other_session"
#: Other sessions told apart in one file; a header past these is read as before (a copy's header).
MAX_OTHERS = 8
#: Turn ids remembered per session (the oldest forgotten first): a hostile file cannot grow them.
MAX_TURNS = 1024
#: Gaps said one notice each; the rest are counted in one notice at the end of the file.
MAX_GAP_NOTICES = 50
#: Prompts of another session named in the closing notice (all are counted).
SHOWN_PROMPTS = 5
PROMPT_CHARS = 80


class _Session:
    """What attribution knows of one session in the file."""

    __slots__ = ("sid", "last", "ts", "turns", "lines", "first_line", "prompts", "prompt_count", "seen")

    def __init__(self, sid: str | None, last: int | None, first_line: int) -> None:
        self.sid = sid
        self.last = last  # its highest number so far
        self.ts: str | None = None  # its latest timestamp so far
        self.turns: dict[str, None] = {}
        self.lines = 0
        self.first_line = first_line
        self.prompts: list[str] = []
        self.prompt_count = 0
        self.seen: set[int] = set()  # hashes of its prompts' texts (Codex writes each prompt twice)

    def turn(self, turn: str | None) -> None:
        if turn is not None and turn not in self.turns:
            if len(self.turns) >= MAX_TURNS:
                del self.turns[next(iter(self.turns))]
            self.turns[turn] = None

    def take(self, o: int, ts: str | None) -> None:
        if self.last is None or o > self.last:
            self.last = o
        if ts is not None and (self.ts is None or ts > self.ts):
            self.ts = ts

    def prompt(self, d: Decoded) -> None:
        for r in d.records:
            if r.__class__ is Message and r.role == "user" and r.context_label is None and r.text:  # type: ignore[union-attr]
                h = hash(r.text)  # type: ignore[union-attr]
                if h in self.seen or len(self.seen) >= 4096:
                    continue
                self.seen.add(h)
                self.prompt_count += 1
                if len(self.prompts) < SHOWN_PROMPTS:
                    text = " ".join(r.text.split())  # type: ignore[union-attr]
                    self.prompts.append(text if len(text) <= PROMPT_CHARS else text[:PROMPT_CHARS - 1] + "…")


def _header(d: Decoded) -> str | None:
    if d.type_name == "session_meta":
        for r in d.records:
            if r.__class__ is Meta:
                return r.session_id  # type: ignore[union-attr]
    return None


def _span(a: int, b: int) -> str:
    return f"record numbered {a} is" if a == b else f"records numbered {a}–{b} ({b - a + 1}) are"


def _held(a: int, b: int) -> str:
    return "what it held is unknown" if a == b else "what they held is unknown"


class Numbering:
    """The numbering of one file's lines as they go by (:func:`numbered` drives it)."""

    def __init__(self, gaps: bool = True) -> None:
        self.say_gaps = gaps
        self.own = _Session(None, None, 0)
        self.others: dict[str, _Session] = {}
        self.numbered = False  # a numbered line of this session was seen
        self.ambiguous = 0
        self.gaps = 0
        self.missing = 0  # records missing in all
        self.unlisted = 0  # gaps past MAX_GAP_NOTICES, said once at the end
        self.unlisted_records = 0

    def see(self, d: Decoded, plain: int = 0) -> Decoded | None:
        """Settle one numbered line: set ``d.other`` or add a gap notice to its records. Returns a
        notice entry to give before the line (where another session starts), else None. ``plain``:
        lines without a number since the last numbered one (a hand-made file numbers some lines only;
        those lines may be the numbers that seem missing, so a gap no longer than them is not said)."""
        o = d.ordinal
        assert o is not None
        own = self.own
        last = own.last
        if not self.others and last is not None and o == last + 1 and d.type_name != "session_meta":
            # the common line: this session's next number (one comparison, no call)
            own.last = o
            if d.timestamp is not None:
                own.ts = d.timestamp
            return None
        header = _header(d)
        if header is not None and own.sid is None:
            own.sid = header
        elif (header is not None and header != own.sid and header not in self.others and own.last is not None
                and o <= own.last and len(self.others) < MAX_OTHERS):
            s = self.others[header] = _Session(header, o, d.line)
            s.take(o, d.timestamp)
            s.lines = 1
            d.other = header
            return Decoded(d.line, FLUSH, records=(NoticeRec(OTHER_SESSION, (
                f"another session ({header}) starts here: its numbering starts again at {o}, so it is "
                "not a copy of history but a second session in this file; its lines are set aside, not "
                "read into this session (counted at the end of the file)")),))
        if self.others:
            s = self._owner(d, o)
            if s is not own:
                s.turn(d.turn)
                s.take(o, d.timestamp)
                s.lines += 1
                s.prompt(d)
                d.other = s.sid
                return None
            own.turn(d.turn)
        last = own.last
        if not self.say_gaps:
            pass
        elif last is None:
            if o > plain and header is None and not self.numbered:
                self._gap(d, 0, o - 1, f"not in this file (its first numbered line is numbered {o})")
        elif o > last + 1 + plain:
            self._gap(d, last + 1, o - 1, f"missing from this file (the numbering goes from {last} to {o} here)")
        self.numbered = True
        own.take(o, d.timestamp)
        return None

    def _gap(self, d: Decoded, a: int, b: int, where: str) -> None:
        """The notice of records ``a``..``b`` missing, before the line after them; past
        :data:`MAX_GAP_NOTICES`, the gaps are counted for the closing notice (every gap still counts
        for the rules: the notice's category is what they read)."""
        self.gaps += 1
        self.missing += b - a + 1
        if self.gaps > MAX_GAP_NOTICES:
            self.unlisted += 1
            self.unlisted_records += b - a + 1
        # past the limit an empty message: the rules still count the gap, no item says it
        message = f"{_span(a, b)} {where}: {_held(a, b)}" if self.gaps <= MAX_GAP_NOTICES else ""
        d.records = (NoticeRec(GAP, message), *d.records)

    def _owner(self, d: Decoded, o: int) -> _Session:
        own = self.own
        t = d.thread
        if t is not None:
            s = own if t == own.sid else self.others.get(t)
            if s is not None:
                u = d.turn
                if u is not None and u not in s.turns:
                    # the line names both: its turn is this session's, whatever an earlier line let
                    # numbering alone decide (the lines still to come follow the right session)
                    for other in (own, *self.others.values()):
                        other.turns.pop(u, None)
                return s
        u = d.turn
        if u is not None:
            if u in own.turns:
                return own
            for s in self.others.values():
                if u in s.turns:
                    return s
        sessions = [own, *self.others.values()]
        exact = [s for s in sessions if s.last is not None and s.last + 1 == o]
        if len(exact) == 1:
            return exact[0]
        after = [s for s in sessions if s.last is None or s.last < o]
        if len(after) == 1:
            return after[0]
        # ids and numbering fit several: the session whose latest line is the closest before this one's
        # time (a session writes its lines in bursts; none writes back in time), else this one; counted
        self.ambiguous += 1
        ts = d.timestamp
        fits = [s for s in (exact or after) if ts is not None and s.ts is not None and s.ts <= ts]
        if fits:
            return max(fits, key=lambda s: s.ts or "")
        return own

    def closing(self, line: int) -> Decoded | None:
        """The closing notices (an entry at the last line): the gaps not said one by one, the other
        sessions the file held."""
        notes = []
        if self.unlisted:
            notes.append(NoticeRec(GAP, f"{self.unlisted} more gaps in the record numbering were not said one by "
                                        f"one: {self.unlisted_records} records missing; {self.missing} records "
                                        f"missing in all, in {self.gaps} gaps"))
        if self.others:
            notes.append(self._others_notice())
        return Decoded(line, FLUSH, records=tuple(notes)) if notes else None

    def _others_notice(self) -> NoticeRec:
        parts = []
        for s in self.others.values():
            said = f"session {s.sid}: {s.lines} lines from line {s.first_line}, {s.prompt_count} prompt(s)"
            if s.prompts:
                said += ": " + "; ".join(repr(p) for p in s.prompts)
                if s.prompt_count > len(s.prompts):
                    said += f"; and {s.prompt_count - len(s.prompts)} more"
            parts.append(said)
        message = ("this file holds another session besides this one, its lines interleaved with this "
                   "session's and set aside: " + " | ".join(parts))
        if self.ambiguous:
            message += (f". {self.ambiguous} line(s) named no session and had a number more than one session "
                        "could give: each was placed with the session whose latest line came just before it")
        return NoticeRec(OTHER_SESSION, message)


def numbered(entries: Iterable[Decoded], gaps: bool = True) -> Iterator[Decoded]:
    """``entries`` as they come, each numbered line settled by one :class:`Numbering`; the notices of
    another session in the file as entries of their own (``FLUSH``: no line class). ``gaps`` False: the
    entries are not every line (a reading that skips lines it does not need), so no gap is said."""
    numbering: Numbering | None = None
    last = 0
    plain = 0  # lines with no number since the last numbered one
    for d in entries:
        last = d.line + d.count - 1
        if d.ordinal is not None:
            if numbering is None:
                numbering = Numbering(gaps)
            before = numbering.see(d, plain)
            plain = 0
            if before is not None:
                yield before
        elif d.cls != BLANK:
            plain += 1
        yield d
    if numbering is not None:
        closing = numbering.closing(last)
        if closing is not None:
            yield closing
