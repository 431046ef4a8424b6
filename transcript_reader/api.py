"""The library's entry points: ``read``, ``search``, ``inspect`` and the streaming ``iter_items`` /
``Transcript``. Everything streams: one pass over the file, memory bounded by what a projection keeps
(``tail`` keeps N items, ``inspect`` keeps none).

Typed errors (``transcript_reader.errors``) are the only exceptions raised on purpose: a missing file,
an unknown format, a bad argument, and, with ``strict=True``, the first unreadable line (lenient mode
turns it into an ``unreadable`` item and counts it instead).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from transcript_reader.model import AnyItem, Format, Kind, ReadResult, SearchResult, SessionInfo

if TYPE_CHECKING:
    from transcript_reader.reading.source import Descriptor, ReadCaps, Skipped

PathArg = str | PathLike[str]
#: What the readers take: a path, or a file the caller already opened and checked
#: (``source.Descriptor``: sniffed and read through that one descriptor, never reopened by name).
ReadArg: TypeAlias = "PathArg | Descriptor"


class Transcript:
    """One pass over one transcript: iterate :meth:`items`, then read :meth:`info` (which needs the
    whole pass: counts, tokens and line accounting are only known at the end)."""

    def __init__(self, path: ReadArg, *, format: Format | str | None = None, strict: bool = False,
                 analyze: Callable[[str], Any] | None = None, caps: ReadCaps | None = None,
                 thread: bool = True) -> None:
        """``analyze`` replaces ``exec_grammar.analyze`` for the code cells of this reading (same
        signature and result): the census passes a timing wrapper so that each script is analysed
        once, not once for the timeline and again to time it. ``caps`` bounds the reading (the longest
        line decoded, the most bytes decompressed from a ``.zst``; defaults in ``source``). ``thread``
        (default) reads a Codex thread that lives in several files as one (``transcript_reader.reading.threads``):
        a segment with the files it continues, a base file with its rewound turns marked; False reads
        this file alone."""
        from transcript_reader.providers import Provider, detect, for_format
        from transcript_reader.reading.source import DEFAULT_CAPS, check_path, parse_format

        self.caps = caps if caps is not None else DEFAULT_CAPS
        self.path = check_path(path)
        forced = parse_format(format)
        self.provider: Provider
        if forced is not None:
            self.provider, self.format = for_format(forced), forced
        else:
            self.provider, self.format = detect(self.path)
        self.strict = strict
        self.analyze = analyze
        self.thread = thread
        self._info: SessionInfo | None = None
        self._consumed = False
        self._asm: Any = None

    def waiting_for(self) -> AnyItem | None:
        """The call the reading waits on, as it stands: a direct shell command or a code cell that
        started and has no result yet (what a live view shows as running), else None. Only rollouts
        know it; an item from here is a preview, never part of the timeline."""
        return self._asm.waiting() if self._asm is not None else None

    def items(self, stream: Iterable[bytes | Skipped] | None = None) -> Iterator[AnyItem]:
        """Every item, in order. ``stream`` (see :func:`follow`) supplies the lines instead of the file."""
        if self._consumed:
            raise RuntimeError("a Transcript is read once; create another to read again")
        self._consumed = True
        links = getattr(self.provider, "thread_links", None)
        from transcript_reader.reading.source import Descriptor

        # a Descriptor is read alone: the other files of its thread would be opened by name
        if self.thread and stream is None and links is not None and self.format is Format.ROLLOUT \
                and not isinstance(self.path, Descriptor):
            before, after = links(self.path)
            if before or after:
                yield from self._thread_items(before, after)
                return
        yield from self.assemble(self.provider.decode(self.path, self.format, stream, self.caps),
                                 live=stream is not None)

    def assemble(self, decoded: Iterable[Any], *, live: bool = False) -> Iterator[AnyItem]:
        """The items of these decode records (what :meth:`items` does with the provider's records; the
        tail reader hands it the records of a file's head and last turns, renumbered as the file's).
        ``live``: a file being followed, whose answers are not kept back for a later rollback."""
        from transcript_reader.assembly import Assembler

        asm = Assembler(str(self.path), self.format, strict=self.strict, analyze=self.analyze, live=live)
        self._asm = asm
        yield from asm.run(decoded)
        self._info = asm.info()

    def _thread_items(self, before: list[Any], after: list[Any]) -> Iterator[AnyItem]:
        """The thread this file belongs to: the files before it (each up to where the next continues
        it, the rest marked as rewound), then this file (its rewound turns marked when a later segment
        continues it before its end)."""
        from transcript_reader.model import Notice
        from transcript_reader.reading.threads import lines_before, mark_rewound, merge_infos, rewound_turns

        infos: list[SessionInfo] = []
        rewound = 0
        parts: list[tuple[Path, Any]] = [(link.base, link) for link in before if link.base is not None]
        for base, link in parts:
            part = Transcript(base, strict=self.strict, analyze=self.analyze, caps=self.caps, thread=False)
            cut = lines_before(base, link.end_offset) if link.end_offset is not None else None
            why = (f"rewound away by Codex: the thread continues from line {cut} of {base.name} in "
                   f"{link.path.name}; this turn is no longer part of it")
            got = list(mark_rewound(part.items(), cut, why)) if cut is not None else list(part.items())
            rewound += rewound_turns(got)
            yield Notice(line=0, category="thread", message=f"thread {link.thread_id}: {base.name}")
            yield from got
            infos.append(part.info())
        own = Transcript(self.path, strict=self.strict, analyze=self.analyze, caps=self.caps, thread=False)
        items: Iterable[AnyItem] = own.items()
        if after:
            nxt = min((a for a in after if a.end_offset is not None), key=lambda a: a.end_offset, default=None)
            if nxt is not None:
                assert isinstance(self.path, Path)  # a Descriptor is read alone (items)
                cut = lines_before(self.path, nxt.end_offset)
                items = mark_rewound(items, cut, f"rewound away by Codex: the thread continues from line {cut} "
                                                 f"of this file in {nxt.path.name}; this turn is no longer part of it")
        if parts:
            yield Notice(line=0, category="thread", message=f"thread {own_id(before)}: {self.path.name}")
        mine = list(items)
        rewound += rewound_turns(mine)
        yield from mine
        infos.append(own.info())
        if after:
            names = ", ".join(a.path.name for a in after)
            yield Notice(line=infos[-1].lines.lines + 1, category="thread",
                         message=f"the thread continues in {names}")
        self._info = merge_infos(infos, rewound, str(self.path))

    def info(self) -> SessionInfo:
        if self._info is None:
            for _ in self.items():
                pass
        assert self._info is not None
        return self._info


def own_id(links: list[Any]) -> str | None:
    return next((link.thread_id for link in links if link.thread_id), None)


def iter_items(path: ReadArg, *, format: Format | str | None = None, strict: bool = False) -> Iterator[AnyItem]:
    """Every item of a transcript, in order, streaming (no projection, nothing hidden)."""
    return Transcript(path, format=format, strict=strict).items()


def follow(path: PathArg, *, stop: Callable[[], bool], poll_s: float = 0.5, format: Format | str | None = None,
           strict: bool = False, waiting: Callable[[AnyItem | None], None] | None = None,
           caps: ReadCaps | None = None) -> Iterator[AnyItem]:
    """Every item of a transcript Codex is still writing, as the file grows.

    Each byte is read once (``source.FollowStream``): at the end of the data the reader waits ``poll_s``
    and looks again, so following a long session costs what reading it once does, in bounded memory.
    An item comes out once it is settled, exactly as a whole read would give it: a command waits for
    its result (or for its turn to end), a line still being written waits for its newline. ``stop()``
    is asked whenever the data runs out; when it returns True the reading ends as a whole read of the
    file would (a call still without output is given as such). ``waiting``, when given, is called
    just before each ``stop()`` with what the reading waits on (``Transcript.waiting_for``). Raises
    ``InvalidArgumentError`` for a ``.zst`` file or a TypeScript ``.json`` document, which Codex never
    appends to, and ``FileChangedError`` when the file is truncated, replaced or rewritten while
    followed; a file deleted (or moved away) ends the items with a ``follow`` notice saying so."""
    import time

    from transcript_reader.errors import InvalidArgumentError
    from transcript_reader.reading.follow import FollowStream
    from transcript_reader.reading.source import check_path

    # the format is sniffed from whole lines: a file Codex has just created may not hold one yet
    checked = check_path(path)
    while format is None and not _has_whole_line(checked) and not stop():
        time.sleep(poll_s)
    t = Transcript(path, format=format, strict=strict, caps=caps)
    reason = unfollowable(checked, t.format)
    if reason is not None:
        raise InvalidArgumentError(reason, path=str(t.path))
    if waiting is not None:
        user_stop = stop

        def stop() -> bool:
            waiting(t.waiting_for())
            return user_stop()

    with FollowStream(checked, poll_s=poll_s, stop=stop, line_bytes=t.caps.line_bytes) as stream:
        yield from t.items(stream)
    if stream.ended is not None:
        # the file went away: following ends as a whole read of what was written ends, and says why
        from transcript_reader.model import Notice

        yield Notice(line=stream.lines + 1, category="follow", message=f"{stream.ended}: following ended")


def unfollowable(path: PathArg, format: Format | None = None) -> str | None:
    """Why :func:`follow` cannot follow ``path`` (Codex never appends to it), or None when it can."""
    from transcript_reader.providers import sniff_format
    from transcript_reader.reading.source import check_path, is_zstd_head

    checked = check_path(path)
    with open(checked, "rb") as fh:
        if is_zstd_head(fh.read(4)):
            return "a .zst transcript cannot be followed (Codex appends to plain files only)"
    if (format or sniff_format(checked)) is Format.TS_JSON:
        return "a Codex 0.1.x .json document is written whole: nothing to follow"
    return None


def read(
    path: ReadArg,
    *,
    projection: str = "timeline",
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    tail: int | None = None,
    max_items: int | None = None,
    max_chars: int | None = None,
    max_chars_per_item: int | None = None,
    format: Format | str | None = None,
    strict: bool = False,
    lazy_info: bool = True,
    caps: ReadCaps | None = None,
) -> ReadResult:
    """The items a projection selects, with limits applied; ``result.info`` is the session's inspect.
    ``caps`` bounds the reading (``source.ReadCaps``; defaults there).

    A projection that keeps only messages (``final``, ``conversation``) is read without decoding the
    lines that cannot reach a message (tool calls, outputs, records, reasoning: ``lines.MESSAGE_SKIP``),
    with the same items. Its ``info`` (which needs the full pass) is then computed when first asked
    for, by a second reading (``lazy_info``; False computes it at once, for a caller that renders it
    anyway; a :class:`~transcript_reader.reading.source.Descriptor` is always read eagerly, once)."""
    from transcript_reader.projections import Limits, apply_projection, selector

    select = selector(projection, include, exclude)
    limits = Limits(tail=tail, max_items=max_items, max_chars=max_chars, max_chars_per_item=max_chars_per_item)
    limits.check()
    if lazy_info and not strict and caps is None:  # the message-only shortcut reads with the default caps
        from transcript_reader.projections import selected_kinds

        kinds = selected_kinds(projection, include, exclude)
        if kinds <= MESSAGE_KINDS:
            fast = _read_messages(path, format, select, limits, projection, context=Kind.CONTEXT in kinds)
            if fast is not None:
                return fast
    t = Transcript(path, format=format, strict=strict, caps=caps)
    kept, total, dropped, cut_chars, truncated = apply_projection((i for i in t.items() if select(i)), limits)
    return ReadResult(path=str(t.path), format=t.format, projection=projection, items=tuple(kept),
                      truncated=truncated, dropped_items=dropped, info=t.info(), total_items=total,
                      truncated_chars=cut_chars)


#: Kinds a message-only reading gives exactly as a full read does.
MESSAGE_KINDS = frozenset({Kind.USER_MESSAGE, Kind.ASSISTANT_MESSAGE, Kind.CONTEXT})


def _records_of(raw: bytes, line: int) -> tuple[Any, ...]:
    """The records a full read decodes from this rollout line (none when it is unreadable)."""
    import orjson

    from transcript_reader.providers.codex.rollout import decode_rollout

    try:
        return decode_rollout(orjson.loads(raw), line).records
    except Exception:  # noqa: BLE001 - the full read makes this line unreadable: no records
        return ()


class _FullReadNeeded(Exception):
    """The message-only reading cannot vouch for its items: the full read answers instead."""


#: The ``info`` slot of :class:`ReadResult` (read and written under the property below).
_INFO_SLOT: Any = ReadResult.__dict__["info"]


class _LazyInfoResult(ReadResult):
    """A :class:`ReadResult` whose ``info`` is computed (by a full pass) when first read."""

    __slots__ = ("_inspect",)

    def _get_info(self) -> SessionInfo | None:
        got = _INFO_SLOT.__get__(self)
        if got is None:
            got = self._inspect()  # type: ignore[attr-defined]
            _INFO_SLOT.__set__(self, got)
        return got  # type: ignore[no-any-return]

    def _set_info(self, value: SessionInfo | None) -> None:  # the frozen dataclass's __init__ sets it
        _INFO_SLOT.__set__(self, value)

    info = property(_get_info, _set_info)  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        """Equal to a :class:`ReadResult` holding the same (the lazy ``info`` is computed to compare)."""
        if not isinstance(other, ReadResult):
            return NotImplemented
        import dataclasses

        return all(getattr(self, f.name) == getattr(other, f.name) for f in dataclasses.fields(ReadResult))

    __hash__ = ReadResult.__hash__


def _read_messages(path: ReadArg, format: Format | str | None, select: Callable[[AnyItem], bool], limits: Any,
                   projection: str, *, context: bool = True) -> ReadResult | None:
    """``read`` for a projection of messages only, skipping the lines that cannot reach a message; None
    when this file is not one it serves (not a single-file Codex rollout) or it could not vouch for
    its items.

    Why it may: a message item is made from message, turn and session records only (``assembly.turns``,
    ``assembly.prompts``); what a call, output or record line adds is other items, and the order they
    wait in. Two effects cross over. A user message that waits for its event copy is settled by the next
    record of the turn's work: while one waits, a skipped line is decoded and its records are shown to
    ``Prompts.before`` (not assembled). And a backlog of more than ``rules.MAX_PENDING`` waiting items
    releases what waits at the front (an undecided answer as not final, an answer kept back for a
    rollback, a user message as context): so while anything waits, the lines skipped in the last
    ``ROLLBACK_HOLD + 2`` turns are counted (each makes at most a few waiting items), and past a quarter
    of the bound the full read answers instead. Under an exec stream's final-answer rule (a turn's last
    item answers it: ``Turns.last_item``) every item counts, so a skipped line there sends the reading
    to the full read too. ``context`` False: no context item is kept, and context messages (which
    only ever make one: ``lines.CONTEXT_MESSAGES``) are not decoded either."""
    from collections import deque

    from transcript_reader.assembly import Assembler
    from transcript_reader.assembly.rules import MAX_PENDING
    from transcript_reader.assembly.turns import ROLLBACK_HOLD
    from transcript_reader.projections import apply_projection
    from transcript_reader.providers.codex import CodexProvider
    from transcript_reader.providers.codex.lines import SKIPPED, SkipWatch
    from transcript_reader.providers.records import TurnStart
    from transcript_reader.reading.source import Descriptor

    if isinstance(path, Descriptor):
        return None
    t = Transcript(path, format=format)
    provider = t.provider
    if t.format is not Format.ROLLOUT or not isinstance(provider, CodexProvider) or not isinstance(t.path, Path):
        return None
    before, after = provider.thread_links(t.path)
    if before or after:
        return None
    asm = Assembler(str(t.path), t.format)
    turns = asm.turns
    bound = MAX_PENDING // 4

    prompts = turns.prompts

    slots = asm.q.slots
    watch = SkipWatch()

    def skipped(n: int, recent: deque[int]) -> None:
        """``n`` lines were not decoded: the full read answers if they may have changed what it gives."""
        if turns.last_item:
            raise _FullReadNeeded
        recent[-1] += n
        if slots and sum(recent) + len(slots) > bound:
            raise _FullReadNeeded

    def guarded() -> Iterator[Any]:
        # lines skipped in each of the last turns: what waits at the front of a full read's order (an
        # answer kept back for a rollback, at most ROLLBACK_HOLD turns; an undecided answer or a user
        # message, this turn; a call, the turn before) was made within them, and all that waits behind it.
        # The lines skipped since the last one given are counted in ``watch`` (nothing was assembled in
        # between, so checking them together is checking each)
        recent: deque[int] = deque([0], maxlen=ROLLBACK_HOLD + 2)
        for d in provider.decode(t.path, t.format, None, t.caps, messages_only=True, context=context, watch=watch):
            if watch.count:
                skipped(watch.count, recent)
                watch.count = 0
            if d.type_name is SKIPPED:
                skipped(1, recent)
                # given while a user message waits for its event copy: what this line's records would
                # have settled is settled (assembly.prompts; the records themselves reach no message)
                for rec in _records_of(d.records[0], d.line):  # type: ignore[arg-type]
                    if prompts.waiting:
                        prompts.before(rec)
                watch.wanted = prompts.waiting
                continue  # nothing to assemble
            if d.records and type(d.records[0]) is TurnStart:
                recent.append(0)
            yield d
            watch.wanted = prompts.waiting
        if watch.count:
            skipped(watch.count, recent)

    try:
        kept, total, dropped, cut_chars, truncated = apply_projection(
            (i for i in asm.run(guarded()) if select(i)), limits)
    except _FullReadNeeded:
        return None
    res = _LazyInfoResult(path=str(t.path), format=t.format, projection=projection, items=tuple(kept),
                          truncated=truncated, dropped_items=dropped, info=None, total_items=total,
                          truncated_chars=cut_chars)
    fmt = t.format
    object.__setattr__(res, "_inspect", lambda: inspect(path, format=fmt))
    return res


def search(
    path: ReadArg,
    query: str,
    *,
    regex: bool = False,
    kinds: Iterable[str] = (),
    context: int = 0,
    max_matches: int = 25,
    max_chars_per_match: int = 2000,
    format: Format | str | None = None,
    strict: bool = False,
    caps: ReadCaps | None = None,
) -> SearchResult:
    """Items whose text contains ``query`` (case-insensitive substring, or a regex), with ``context``
    items before/after and an excerpt centred on the hit. ``kinds`` defaults to the timeline's kinds."""
    from transcript_reader.projections import search_items

    t = Transcript(path, format=format, strict=strict, caps=caps)
    matches, total, truncated = search_items(t.items(), query, regex=regex, kinds=kinds, context=context,
                                             max_matches=max_matches, max_chars_per_match=max_chars_per_match)
    return SearchResult(path=str(t.path), format=t.format, query=query, matches=tuple(matches),
                        truncated=truncated, total_matches=total)


def inspect(path: ReadArg, *, format: Format | str | None = None, strict: bool = False,
            caps: ReadCaps | None = None) -> SessionInfo:
    """Metadata and figures of a session (no content), from one streaming pass."""
    return Transcript(path, format=format, strict=strict, caps=caps).info()


__all__ = ["Transcript", "iter_items", "read", "search", "inspect", "Path"]


def _has_whole_line(path: Path) -> bool:
    with open(path, "rb") as fh:
        return b"\n" in fh.read(1 << 16)
