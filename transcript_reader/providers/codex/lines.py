"""Every line of a Codex file as decode records, each line read by its own shape.

``iter_decoded`` drives the line-based formats: it splits blank, unreadable and cut lines from the rest
and hands each parsed object to the decoder of its shape (``rollout``, ``early_rust``; ``ts_json`` for
the single-document TypeScript CLI file). The file's format (``sniff``) only says which shape most lines
have: a line of another shape (a stray bare item in front of a rollout, a rollout resumed after early
Rust lines, a rollout before or after an exec stream) is read by its own shape's decoder, never lost as
``unknown``. Exec-stream lines go to that stream's stateful decoder (``exec_stream``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import nullcontext
from functools import lru_cache, partial
from typing import Any

import orjson
import zstandard

from transcript_reader.errors import UnsupportedFormatError
from transcript_reader.model import Format
from transcript_reader.providers.codex.common import CONTEXT_TAGS
from transcript_reader.providers.codex.early_rust import decode_early_rust
from transcript_reader.providers.codex.numbering import numbered
from transcript_reader.providers.codex.rollout import BARE_ITEMS, NOISE_EVENTS, NOISE_TOP, decode_rollout
from transcript_reader.providers.codex.sniff import THREAD_EVENT_TYPES, classify_line
from transcript_reader.providers.jsontext import REPLACED_CHARACTERS, Repaired, loads_repaired
from transcript_reader.providers.records import BLANK, NOISE, UNREADABLE, Decoded, NoticeRec
from transcript_reader.reading.source import (
    DEFAULT_CAPS,
    Readable,
    ReadCaps,
    Skipped,
    blank_run,
    ended_early,
    open_binary,
    skip_rest,
    zstd_damage,
)
from transcript_reader.reading.zstd_frames import ZSTD_ENDS_EARLY

# Fast path for lines whose type alone decides them (they are most of a long rollout's bytes: world_state
# snapshots, per-request usage copies, tool lists). Codex writes the envelope keys in a fixed order, so
# the type is read from the line's head; anything that does not match takes the full decode. Group 3 is
# the head key: the line's type, and its payload's type when the payload opens with one
# (``event_msg","payload":{"type":"token_count``), looked up once per line in a table of what to do.
_HEAD = re.compile(
    rb'\{"timestamp":"([^"\\]*)",(?:"ordinal":(\d+),)?"type":"([a-z_]+(?:","payload":\{"type":"[a-z_]+)?)"'
)
#: What the head of a line of a file with no envelope reads: nothing (no line matches).
_NO_HEAD = re.compile(rb"(?!)")
_NOISE_ITEMS = frozenset({b"additional_tools", b"ghost_snapshot"})


def head_key(t: bytes, payload_type: bytes | None) -> bytes:
    """The head key (``_HEAD`` group 3) of a line of type ``t`` whose payload's type is ``payload_type``."""
    return t if payload_type is None else t + b'","payload":{"type":"' + payload_type


#: (type, payload type) read from the head -> the noise type name it counts under: one lookup per line.
_FAST_NOISE: dict[tuple[bytes, bytes | None], str] = {
    **{(t.encode(), None): t for t in NOISE_TOP},
    **{(b"response_item", t): "response_item/" + t.decode() for t in _NOISE_ITEMS},
    **{(b"event_msg", t.encode()): "event_msg/" + t for t in NOISE_EVENTS},
}
_TOKEN_COUNT = (b"event_msg", b"token_count")

#: What a reader that keeps only messages (``final``, ``conversation``: ``MESSAGE_SKIP``) need not decode:
#: tool calls and their outputs, completion records, reasoning, token counts. Their records only ever
#: reach call, cell, reasoning and accounting items, never a message or a turn boundary (the message
#: and turn records stay decoded: ``tests/test_projection_reader.py`` compares the items with a full
#: read on every fixture and corpus file).
MESSAGE_SKIP: frozenset[tuple[bytes, bytes | None]] = frozenset(
    [(b"response_item", t) for t in (b"function_call", b"function_call_output", b"custom_tool_call",
                                     b"custom_tool_call_output", b"local_shell_call", b"reasoning",
                                     b"web_search_call", b"tool_search_call", b"tool_search_output",
                                     b"image_generation_call")]
    + [(b"event_msg", t) for t in (b"exec_command_end", b"patch_apply_end", b"mcp_tool_call_end", b"web_search_end",
                                   b"view_image_tool_call", b"image_generation_end", b"dynamic_tool_call_response",
                                   b"collab_agent_spawn_end", b"collab_agent_interaction_end", b"collab_waiting_end",
                                   b"collab_close_end", b"agent_reasoning", b"token_count")]
)
#: ``item_completed`` items a message reader need not decode (read from the line's head).
MESSAGE_SKIP_ITEMS = frozenset({b"CommandExecution", b"FileChange", b"McpToolCall", b"DynamicToolCall",
                                b"CollabAgentToolCall", b"ImageGeneration", b"ImageView", b"Reasoning"})
#: In a ``skip`` set: context messages are not decoded either (a reader that keeps no context items).
#: A developer message only ever becomes a context item, and so does a user message whose text opens
#: with a context tag (``common.context_label``) and that holds no refusal part
#: (``assembly.turns.Turns.message``; ``tests/test_skip_properties.py``).
CONTEXT_MESSAGES = (b"response_item", b"message/context")
#: Type name a line left undecoded counts under (the accounting of such a reading is not kept).
SKIPPED = "(not decoded)"
_ITEM_TYPE = re.compile(rb'"item":\{"type":"([A-Za-z]+)"')
_ITEM_COMPLETED = (b"event_msg", b"item_completed")
_MESSAGE = (b"response_item", b"message")
#: A context message, read where Codex writes its role: right after the payload's type (and its id,
#: 0.171), in the payload object itself (a ``"role"`` inside a text would be escaped). A user message is
#: context when its first content part is a text that opens (after spaces and escaped line ends) with a
#: context tag followed by ``>`` or a space, or with the AGENTS.md heading: what ``context_label`` reads
#: in the joined text, whose head that first text is. Anything else is decoded.
_CONTEXT_MESSAGE = re.compile(
    rb',(?:"id":"[^"\\]*",)?"role":(?:"developer"|"user"(,"content":\[\{"type":"input_text","text":"'
    rb'(?:(?:\\[ntr]| )*<(?:' + b"|".join(sorted(t.encode() for t in CONTEXT_TAGS)) + rb')(?:[> ]|\\[ntr])'
    rb'|# AGENTS\.md)))')


class SkipWatch:
    """What a skipping reading (``iter_decoded`` with ``skip``) tells its consumer about the lines it
    does not decode: how many since the consumer last looked (``count``, which the consumer resets),
    and, while the consumer sets ``wanted``, each such line itself (as :data:`SKIPPED` noise), in
    order. Counting costs the reading nothing per line that a yield would."""

    __slots__ = ("count", "wanted")

    def __init__(self) -> None:
        self.count = 0
        self.wanted = False


def _token_count(raw: bytes, n: int, ts: str) -> Decoded:
    # the token_count reader of the rollout decoder, reached without the envelope dispatch (every
    # call's figure counts: transcript_reader.usage sums them); a corrupt line is unreadable where it stands
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        fixed = loads_repaired(raw)
        if fixed is None:
            return Decoded(n, UNREADABLE, reason=f"invalid JSON: {e}", timestamp=ts)
        return with_notice(decode_rollout(fixed.value, n), fixed)
    return decode_rollout(obj, n)


def _off_envelope_in_rollout(obj: Any, line: int) -> Decoded:
    """A line of a rollout file without the ``{timestamp, type, payload}`` envelope, by its shape: the
    early Rust shapes the rollout decoder does not read itself (a bare session line, bare items of
    other types) go to the early Rust decoder."""
    if (classify_line(obj) is Format.EARLY_RUST and "record_type" not in obj
            and obj.get("type") not in BARE_ITEMS):
        return decode_early_rust(obj, line)
    return decode_rollout(obj, line)


def _early_rust_line(obj: Any, line: int) -> Decoded:
    """A line of an early Rust file: an envelope line (a session resumed by a later Codex) is a rollout
    line."""
    if type(obj) is dict and "payload" in obj and "type" in obj:
        return decode_rollout(obj, line)
    return decode_early_rust(obj, line)


def _decode_failed(n: int, e: Exception) -> Decoded:
    """A line whose decoder raised: that line is unreadable, with the reason; the file reads on."""
    return Decoded(n, UNREADABLE, reason=f"line cannot be decoded: {type(e).__name__}: {e}")


def with_notice(d: Decoded, fixed: Repaired) -> Decoded:
    """``d`` with the notice of its replaced characters after its records."""
    d.records = (*d.records, NoticeRec(REPLACED_CHARACTERS, fixed.notice()))
    return d


def _repaired(raw: bytes, n: int, e: Exception, decode: Any, fixed: Repaired | None = None) -> Decoded:
    """A line orjson refused: read with its bad characters replaced (and said), or unreadable when it is
    not JSON for another reason."""
    fixed = fixed or loads_repaired(raw)
    if fixed is None:
        return Decoded(n, UNREADABLE, reason=f"invalid JSON: {e}")
    obj = fixed.value
    try:
        if type(obj) is dict and "payload" in obj:
            d = decode_rollout(obj, n)
        else:
            d = (decode or _off_envelope_in_rollout)(obj, n)
    except Exception as err:  # noqa: BLE001 - one line's failure costs that line only
        return _decode_failed(n, err)
    return with_notice(d, fixed)


_OTHER_SHAPES = (Format.ROLLOUT, Format.EARLY_RUST)


def _exec_decoded(path: Readable, fmt: Format, stream: Any, caps: ReadCaps) -> Iterator[Decoded]:
    """An exec stream's lines through its decoder, each line by its own shape: a rollout or early Rust
    line in it (a short rollout the stream was appended to) is read by its own decoder. A line over the
    cap is unreadable with the cap's reason."""
    from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder
    from transcript_reader.reading.source import iter_lines

    dec = ExecStreamDecoder(protocol=fmt is Format.EXEC_PROTOCOL, path=str(path))
    lines = iter_lines(path, caps=caps) if stream is None else (
        (n, raw, isinstance(raw, Skipped) or raw.endswith(b"\n")) for n, raw in enumerate(stream, 1))
    loads = orjson.loads
    foreign = False
    for n, raw, complete in lines:
        if isinstance(raw, Skipped):
            yield dec.skipped(n, raw.reason)
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError:
            yield dec.line(n, raw, complete)  # blank, or not JSON: the decoder says which (and a cut)
            continue
        t = obj.get("type") if obj.__class__ is dict else None
        if t is not None and "payload" not in obj and t.__class__ is str and t in THREAD_EVENT_TYPES or (
                t is None and obj.__class__ is dict and "msg" in obj and "type" not in obj):
            yield dec.parsed(n, obj)  # the stream's own shape (most lines: no further look)
            continue
        if classify_line(obj) in _OTHER_SHAPES:
            foreign = True
            try:
                yield _off_envelope_in_rollout(obj, n)
            except Exception as e:  # noqa: BLE001 - one line's failure costs that line only
                yield _decode_failed(n, e)
            continue
        yield dec.parsed(n, obj)
    # a file that mixes shapes has its session header in its other lines: the stream names no session
    yield dec.close(own_header=not foreign)


# what the head key of a line says to do (``_head_table``): a str is the noise type name it counts under
_TOKENS, _SKIP, _SKIP_ITEM, _SKIP_CONTEXT = range(4)


@lru_cache(maxsize=8)
def _head_table(skip: frozenset[tuple[bytes, bytes | None]] | None) -> dict[bytes, str | int]:
    """Head key -> what to do with the line, for a reading that skips ``skip`` (``iter_decoded``)."""
    table: dict[bytes, str | int] = {head_key(*k): name for k, name in _FAST_NOISE.items()}
    table[head_key(*_TOKEN_COUNT)] = _TOKENS
    if skip is not None:
        for k in skip - {CONTEXT_MESSAGES}:
            table[head_key(*k)] = _SKIP
        table[head_key(*_ITEM_COMPLETED)] = _SKIP_ITEM
        if CONTEXT_MESSAGES in skip:
            table[head_key(*_MESSAGE)] = _SKIP_CONTEXT
    return table


def iter_decoded(path: Readable, fmt: Format, stream: Any = None, caps: ReadCaps = DEFAULT_CAPS,
                 skip: frozenset[tuple[bytes, bytes | None]] | None = None,
                 watch: SkipWatch | None = None) -> Iterator[Decoded]:
    """Every line of a Codex transcript as a :class:`Decoded`, in order, one per line.

    ``skip`` (rollouts only): lines whose head names one of these ``(type, payload type)`` pairs (or,
    with ``MESSAGE_SKIP``, an ``item_completed`` item of ``MESSAGE_SKIP_ITEMS``; with
    ``CONTEXT_MESSAGES``, a context message) are given as
    :data:`SKIPPED` noise without being decoded (their one "record" is the raw line, for a reader that
    must decode it after all), and the noise lines the head decides are not given at all: a reader that
    keeps only some kinds (a projection) says so, and keeps no accounting. With ``watch``, the skipped
    lines are only counted there, and given only while ``watch.wanted`` is set.

    ``stream``, when given, supplies the lines instead of opening ``path`` (a ``FollowStream`` for a
    session still being written); it is not closed here. Nothing raised while decoding one line leaves
    it: that line is unreadable with the reason. A line over ``caps.line_bytes`` is skipped unread."""
    if fmt is Format.EXEC_JSON or fmt is Format.EXEC_PROTOCOL:
        yield from _exec_decoded(path, fmt, stream, caps)
        return
    if fmt is Format.TS_JSON:
        from transcript_reader.providers.codex.ts_json import iter_ts_json

        with open_binary(path, caps) as fh:
            yield from iter_ts_json(fh, cap=caps.line_bytes, damage=lambda: zstd_damage(fh))
        return
    entries = _lines(path, fmt, stream, caps, skip, watch)
    # a rollout's record numbering: its gaps, and another session whose numbering starts again
    yield from numbered(entries, gaps=skip is None) if fmt is Format.ROLLOUT else entries


def _lines(path: Readable, fmt: Format, stream: Any, caps: ReadCaps,
           skip: frozenset[tuple[bytes, bytes | None]] | None, watch: SkipWatch | None) -> Iterator[Decoded]:
    """The lines of a rollout or early Rust file (``iter_decoded``)."""
    decode = _early_rust_line if fmt is Format.EARLY_RUST else None
    head = _HEAD.match if fmt is Format.ROLLOUT else _NO_HEAD.match
    table = _head_table(skip)
    context_message = _CONTEXT_MESSAGE.match
    item_type = _ITEM_TYPE.search
    loads = orjson.loads
    JSONDecodeError = orjson.JSONDecodeError
    # one flat loop (it runs once per line): no helper call for the lines the head decides (noise,
    # token_count, lines a projection skips), no copy of a line to see how it ends
    n = 0
    embedded: Any = None  # the decoder of exec-stream lines in this file, once one is met
    limit = caps.line_bytes + 1
    with nullcontext(stream) if stream is not None else open_binary(path, caps) as fh:
        # the lines come from C (no generator frame a line): readline(limit) bounds a line's memory, and
        # a line over the cap (``limit`` bytes, no newline) is read past on the rare no-newline branch
        lines = fh if stream is not None else iter(partial(fh.readline, limit), b"")
        runs = stream is None and getattr(fh, "peek", None) is not None
        start = 1
        try:
            while True:  # left and re-entered only after a run of empty lines (numbering goes on)
                for n, raw in enumerate(lines, start):
                    if raw.endswith(b"\n"):  # a stream's Skipped says False here (source.Skipped.endswith)
                        m = head(raw)
                        if m is None:
                            if raw.isspace():
                                if raw == b"\n" and runs:
                                    more = len(blank_run(fh))
                                    if more:
                                        # the empty lines after it, read as one piece (a file of millions of
                                        # them costs about its bytes, not a line's overhead each)
                                        yield Decoded(n, BLANK, count=more + 1)
                                        n += more
                                        start = n + 1
                                        break
                                yield Decoded(n, BLANK)
                                continue
                        elif raw.endswith(b"}\n") or raw.rstrip().endswith(b"}"):
                            act = table.get(m.group(3))
                            if act is not None:
                                try:
                                    ts = m.group(1).decode()
                                except UnicodeDecodeError:
                                    act = None  # not UTF-8: the full decode below says so, for this line
                                if act is None:
                                    pass
                                elif act.__class__ is str:
                                    if skip is None:  # a skipping reader keeps no accounting: nothing to say
                                        d = Decoded(n, NOISE, act, (), ts)  # type: ignore[arg-type]
                                        if (o := m.group(2)) is not None:  # its number (codex.numbering)
                                            d.ordinal = int(o)
                                        yield d
                                    continue
                                elif act is _TOKENS:
                                    yield _token_count(raw, n, ts)
                                    continue
                                elif act is _SKIP or act is _SKIP_ITEM and (
                                        (it := item_type(raw, 0, 600)) is not None
                                        and it.group(1) in MESSAGE_SKIP_ITEMS) or act is _SKIP_CONTEXT and (
                                        (c := context_message(raw, m.end())) is not None
                                        and (c.group(1) is None or b'"refusal"' not in raw)):
                                    if watch is not None and not watch.wanted:
                                        watch.count += 1
                                        continue
                                    # the line itself rides along: a reader that must know what its
                                    # records would have settled decodes it then (api._read_messages)
                                    d = Decoded(n, NOISE, SKIPPED, (raw,), ts)  # type: ignore[arg-type]
                                    if (o := m.group(2)) is not None:
                                        d.ordinal = int(o)
                                    yield d
                                    continue
                        try:
                            obj = loads(raw)
                        except JSONDecodeError as e:
                            yield _repaired(raw, n, e, decode)  # a bad character costs that character
                            continue
                    else:  # the last line without its newline, or a line not read (over the cap)
                        if raw.__class__ is Skipped:
                            yield Decoded(n, UNREADABLE, reason=raw.reason)  # type: ignore[union-attr]
                            continue
                        if stream is None and len(raw) == limit:
                            yield Decoded(n, UNREADABLE, reason=skip_rest(fh, limit, caps.line_bytes).reason)
                            continue
                        if not raw or raw.isspace():
                            yield Decoded(n, BLANK)
                            continue
                        try:
                            obj = loads(raw)
                        except JSONDecodeError as e:
                            if (fixed := loads_repaired(raw)) is not None:
                                yield _repaired(raw, n, e, decode, fixed)
                                continue
                            if ended_early(fh):  # not a live rollout cut mid-write: a damaged .zst
                                yield Decoded(n, UNREADABLE, reason=f"{zstd_damage(fh)} (last line cut)")
                                return
                            yield Decoded(n, UNREADABLE, reason="truncated last line (cut mid-write)", cut=True)
                            continue
                    try:
                        if type(obj) is dict and "payload" in obj:
                            yield decode_rollout(obj, n)
                            continue
                        shape = classify_line(obj)
                        if shape is Format.EXEC_JSON or shape is Format.EXEC_PROTOCOL:
                            # an exec stream written after the transcript (`codex exec --json … >> file`): its
                            # lines are read by the exec decoder, in its own turns
                            if embedded is None:
                                from transcript_reader.providers.codex.exec_stream import ExecStreamDecoder

                                embedded = ExecStreamDecoder(protocol=shape is Format.EXEC_PROTOCOL, path=str(path))
                            yield embedded.parsed(n, obj)
                        elif decode is not None:
                            yield decode(obj, n)
                        else:
                            yield _off_envelope_in_rollout(obj, n)
                    except Exception as e:  # noqa: BLE001 - one line's failure costs that line only
                        yield _decode_failed(n, e)
                else:
                    break
        except zstandard.ZstdError as e:  # a corrupt .zst frame
            raise UnsupportedFormatError(f"corrupt zstd stream: {e}", path=str(path)) from None
        if embedded is not None:
            yield embedded.close(summary=False)
        if ended_early(fh):
            # a .zst file cut inside a frame: the rest of the transcript is missing, which a cut at a line
            # end would otherwise hide (one more unreadable entry, counted in the accounting)
            yield Decoded(n + 1, UNREADABLE, reason=zstd_damage(fh) or ZSTD_ENDS_EARLY)
