"""What the first lines (and the last few KB) of a session file tell, without reading the whole file.

Listing a ``$CODEX_HOME`` of a thousand sessions must take well under a second, so discovery never
decodes whole transcripts: it reads a bounded head of each file (``HEAD_BYTES`` at most) for the
session id, start time, cwd, originator, Codex version, source / parent links, model and the first
real user prompt, and a bounded tail (``TAIL_BYTES``) for the last timestamp and the last cumulative
token count. This module is the one owner of those raw keys for that purpose; the full decoders
 own everything else.

Every era is handled: the rollout envelope (0.40+), the early Rust bare lines (0.20, 0.29: no cwd in
the meta line, so the cwd comes from the ``<environment_context>`` message), the TypeScript CLI's
single pretty-printed JSON document (0.1.x: scanned incrementally by ``docscan`` so only the head of
the document is parsed), and ``codex exec --json`` streams (both the 0.50+ ``thread.*`` events and the
older ``{id, msg}`` protocol with its leading config and prompt lines).

Reading is total: a head that cannot be decoded gives a ``SessionHead`` with ``format=None`` and the
reason in ``error``; it never raises on content (only on I/O, as ``OSError``).
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from transcript_reader.model import Format, TokenUsage
from transcript_reader.providers.codex.common import context_label, environment_cwd
from transcript_reader.providers.codex.exec_run import header_config, session_configured
from transcript_reader.providers.codex.rollout import meta_from
from transcript_reader.providers.codex.sniff import ENVELOPE_HEAD, Vote, classify_line
from transcript_reader.providers.codex.tokens import token_count_usage
from transcript_reader.providers.codex.ts_json import TS_VERSION
from transcript_reader.providers.head import SessionHead, SessionTail, session_title
from transcript_reader.providers.jsontext import loads_repaired
from transcript_reader.reading.source import Descriptor, is_zstd_head

#: The most bytes a head read consumes. The 0.150+ session_meta line alone is ~22 KB (base
#: instructions) and the first real prompt comes after ~35 KB of developer/context messages.
HEAD_BYTES = 256 * 1024
#: The most bytes a tail read looks at.
TAIL_BYTES = 64 * 1024

UTF8_BOM = b"\xef\xbb\xbf"
#: The head is read in chunks of this size (most heads are one chunk).
_CHUNK = 64 * 1024

def is_harness_context(text: str) -> bool:
    """True when a user-role message is context Codex injected, not what the person typed. The rule is
    the reader's own (``decode.common.context_label``), so a listing's title is the prompt ``show``
    shows first."""
    return context_label("user", text) is not None


def _open(path: Path | Descriptor) -> IO[bytes]:
    raw = path.open(64 * 1024) if isinstance(path, Descriptor) else open(path, "rb")  # noqa: SIM115 - the caller closes it
    magic = raw.read(4)
    raw.seek(0)
    fh = raw
    if is_zstd_head(magic):  # a skippable frame may come first: libzstd steps over it
        import zstandard

        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True, closefd=True)
        fh = io.BufferedReader(reader, buffer_size=64 * 1024)  # type: ignore[arg-type]
    # a leading UTF-8 BOM (a file re-saved on Windows) would make the session line unreadable and the
    # listing lose its id and cwd; the reader's source layer skips it the same way
    if fh.peek(len(UTF8_BOM))[:len(UTF8_BOM)] == UTF8_BOM:
        fh.read(len(UTF8_BOM))
    return fh


def _iter_head_lines(fh: IO[bytes], budget: int) -> Iterator[bytes]:
    """Lines from the head, within ``budget`` bytes. A line cut by the budget is not yielded; a last
    line without its newline is (Codex may not have terminated it yet), and simply fails to decode
    when it is half-written. Read in chunks and split here (``readline`` per line cost a listing of
    10,000 sessions a fifth of its time)."""
    buf = b""
    pos = used = 0
    eof = False
    while True:
        nl = buf.find(b"\n", pos)
        if nl >= 0:
            yield buf[pos : nl + 1]
            pos = nl + 1
            continue
        if eof or used >= budget:
            # the rest has no newline: the file's unterminated last line, unless the budget cut it
            if eof and pos < len(buf) and used < budget:
                yield buf[pos:]
            return
        want = min(_CHUNK, budget - used)
        chunk = fh.read(want)
        used += len(chunk)
        eof = len(chunk) < want
        buf = buf[pos:] + chunk if pos < len(buf) else chunk
        pos = 0


def _loads(line: bytes) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        fixed = loads_repaired(line)  # a bad character costs that character (the reader says so)
        return None if fixed is None else fixed.value


def _text_of_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts: list[str] = []
    if isinstance(content, list):
        for part in content:
            if isinstance(part, dict):
                t = part.get("text")
                if isinstance(t, str):
                    parts.append(t)
            elif isinstance(part, str):
                parts.append(part)
    return "\n".join(parts)


def _iso(ts: Any) -> str | None:
    if not isinstance(ts, str) or not ts:
        return None
    return ts


class _Acc:
    """Mutable accumulator for one head read."""

    __slots__ = (
        "fmt", "session_id", "timestamp", "cwd", "originator", "cli_version", "source", "parent",
        "forked", "nickname", "model", "title", "meta_seen", "events", "first_candidate", "last_candidate",
    )

    def __init__(self, fmt: Format | None) -> None:
        self.fmt = fmt
        self.session_id: str | None = None
        self.timestamp: str | None = None
        self.cwd: str | None = None
        self.originator: str | None = None
        self.cli_version: str | None = None
        self.source: str | None = None
        self.parent: str | None = None
        self.forked: str | None = None
        self.nickname: str | None = None
        self.model: str | None = None
        self.title: str | None = None
        self.meta_seen = False
        self.events = False  # an event copy of a prompt was seen
        self.first_candidate: str | None = None  # response_item user texts: a title only without events
        self.last_candidate: str | None = None

    def user_text(self, text: str, event: bool = False, candidate: bool = False) -> None:
        """A user message's text. The title follows the full read's rule (``assembly.prompts``): in a
        rollout that writes event copies of prompts (``event``) only those are prompts, and its
        ``response_item`` user messages (``candidate``) give the title only in a file that writes none."""
        if self.cwd is None:
            self.cwd = environment_cwd(text)
        if self.title is not None:
            return
        real = bool(text.strip()) and not is_harness_context(text)
        if event:
            self.events = True
            if real:
                self.title = session_title(text)
            elif not text.strip() and self.last_candidate is not None:
                self.title = self.last_candidate  # an event copy without content: its response copy's text
        elif real and not candidate:
            self.title = session_title(text)
        elif real:
            self.last_candidate = session_title(text)
            if self.first_candidate is None:
                self.first_candidate = self.last_candidate

    def done(self) -> bool:
        return self.title is not None and self.model is not None and self.cwd is not None

    def meta(self, payload: dict[str, Any], envelope_ts: Any = None) -> None:
        if self.meta_seen:
            return  # forks and resumes append more session_meta lines; the first is the file's own
        self.meta_seen = True
        m = meta_from(payload)  # the full read's own session_meta reader: ls and inspect agree
        self.session_id = m.session_id
        self.timestamp = _iso(m.timestamp) or _iso(envelope_ts)
        self.cwd = m.cwd if m.cwd is not None else self.cwd
        self.originator, self.cli_version, self.forked = m.originator, m.version, m.forked_from_id
        self.source, self.parent, self.nickname = m.source, m.parent_session_id, m.agent_nickname
        if self.model is None and m.model is not None:
            self.model = m.model

    def build(self, error: str | None = None) -> SessionHead:
        return SessionHead(
            format=self.fmt, session_id=self.session_id, timestamp=self.timestamp, cwd=self.cwd,
            originator=self.originator, cli_version=self.cli_version, source=self.source,
            parent_session_id=self.parent, forked_from_id=self.forked, agent_nickname=self.nickname,
            model=self.model, error=error,
            title=self.title if self.title is not None or self.events else self.first_candidate,
        )


def _response_item(acc: _Acc, p: dict[str, Any], candidate: bool = False) -> None:
    if p.get("type") == "message" and p.get("role") == "user":
        acc.user_text(_text_of_content(p.get("content")), candidate=candidate)


def _rollout_line(acc: _Acc, obj: dict[str, Any]) -> None:
    t = obj.get("type")
    p = obj.get("payload")
    if not isinstance(p, dict):
        return
    if t == "session_meta":
        acc.meta(p, obj.get("timestamp"))
    elif t == "turn_context":
        if acc.model is None and isinstance(p.get("model"), str):
            acc.model = p["model"]
        if acc.cwd is None and isinstance(p.get("cwd"), str):
            acc.cwd = p["cwd"]
    elif t == "response_item":
        _response_item(acc, p, candidate=True)
    elif t == "event_msg":
        et = p.get("type")
        if et == "user_message":
            acc.user_text(p["message"] if isinstance(p.get("message"), str) else "", event=True)
        elif et == "item_completed":
            item = p.get("item")
            if isinstance(item, dict) and item.get("type") == "UserMessage":
                acc.user_text(_text_of_content(item.get("content")), event=True)
        elif et == "thread_settings_applied" and acc.model is None:
            ts = p.get("thread_settings")
            if isinstance(ts, dict) and isinstance(ts.get("model"), str):
                acc.model = ts["model"]
    if acc.timestamp is None:
        acc.timestamp = _iso(obj.get("timestamp"))


def _exec_json_line(acc: _Acc, obj: dict[str, Any]) -> None:
    if obj.get("type") == "thread.started" and isinstance(obj.get("thread_id"), str):
        acc.session_id = acc.session_id or obj["thread_id"]
        acc.timestamp = acc.timestamp or _iso(obj.get("timestamp"))


def _exec_protocol_line(acc: _Acc, obj: dict[str, Any]) -> None:
    if "msg" in obj:
        msg = obj.get("msg")
        if isinstance(msg, dict) and msg.get("type") == "session_configured":
            session_id, model = session_configured(msg)
            acc.session_id = acc.session_id or session_id
            acc.model = model or acc.model  # the session's own word over the config line's, as the decoder reads it
        return
    if isinstance(obj.get("prompt"), str):
        acc.user_text(obj["prompt"])
        return
    model, cwd = header_config(obj)  # the leading config line
    acc.model = acc.model or model
    acc.cwd = acc.cwd or cwd


def _read_ts_document(data: bytes, acc: _Acc) -> None:
    """Read the head of the TypeScript CLI's ``{"session": {...}, "items": [...]}`` document
    incrementally (``docscan``: no recursion, so a deeply nested value cannot raise ``RecursionError``
    out of a listing): the session object, then items one at a time until the first real prompt, so a
    document cut by the byte budget still yields what its head holds."""
    from transcript_reader.reading.docscan import Member, scan_document

    for ev in scan_document(io.BytesIO(data), "items", cap=len(data)):
        if not isinstance(ev, Member) or not isinstance(ev.value, bytes):
            continue
        if ev.index is None and ev.key != "session":
            continue
        value = _loads(ev.value)
        if not isinstance(value, dict):
            continue
        if ev.index is None:
            if isinstance(value.get("id"), str):
                acc.session_id = value["id"]
            acc.timestamp = _iso(value.get("timestamp"))
            continue
        _response_item(acc, value)
        if acc.title is not None:
            return


def read_head(path: str | Path | Descriptor, *, budget: int = HEAD_BYTES) -> SessionHead:
    """Session metadata from the first ``budget`` bytes of ``path`` (plain or zstd). Raises only
    ``OSError`` (the file cannot be opened); undecodable content gives ``format=None`` and ``error``."""
    try:
        return _read_head(path if isinstance(path, Descriptor) else Path(path), budget)
    except OSError:
        raise
    except Exception as e:  # noqa: BLE001 - zstandard raises its own ZstdError on a corrupt frame
        if "zstd" in type(e).__module__.lower() or "zstd" in type(e).__name__.lower():
            return SessionHead(format=None, error=f"corrupt zstd stream: {e}")
        raise


def _read_head(p: Path | Descriptor, budget: int) -> SessionHead:
    with _open(p) as fh:
        first = fh.peek(64)[:64] if hasattr(fh, "peek") else b""
        # The TS CLI writes one indented document: its first line is a lone "{".
        if p.name.endswith(".json") or re.match(rb"\A\s*\{\s*\n", first):
            data = fh.read(budget)
            acc = _Acc(Format.TS_JSON)
            acc.cli_version = TS_VERSION
            _read_ts_document(data, acc)
            if acc.session_id is None and acc.title is None:
                return _sniff_lines(io.BytesIO(data), budget, p)
            return acc.build()
        return _sniff_lines(fh, budget, p)


def _sniff_lines(fh: IO[bytes], budget: int, p: Path | Descriptor) -> SessionHead:
    """The head of a line-based file: each line is read by the handler of its own shape
    (``sniff.classify_line``), and the head's format is the vote of the lines read (``sniff.Vote``), as
    for a full read: a stray line of another shape decides nothing."""
    acc = _Acc(None)
    vote = Vote()
    seen_json = seen_any = False
    for line in _iter_head_lines(fh, budget):
        if not line.strip():
            continue
        seen_any = True
        if vote.winner() is Format.ROLLOUT and not _rollout_line_wanted(line):
            if ENVELOPE_HEAD.match(line):
                vote.add(Format.ROLLOUT)
            continue
        obj = _loads(line)
        if not isinstance(obj, dict):
            continue
        seen_json = True
        shape = classify_line(obj)
        if shape is Format.TS_JSON and not vote.votes:
            acc.fmt = shape
            acc.cli_version = TS_VERSION
            _read_ts_document(line, acc)
            return acc.build()
        if shape is not None:
            vote.add(shape)
        handler = _HANDLERS.get(shape or vote.winner())  # type: ignore[arg-type]
        if handler is None:
            continue
        handler(acc, obj)
        if acc.done() and acc.session_id is not None:
            break
    acc.fmt = vote.winner()
    if acc.fmt is None and not seen_any:
        acc.fmt = Format.ROLLOUT  # an empty file is an empty rollout, as the full read says (sniff.sniff)
    if acc.fmt is None:
        return acc.build(error="not a Codex transcript" if seen_json else "no JSON line in the head")
    return acc.build()


_ENVELOPE_TYPE = re.compile(rb'"type":\s*"([a-z_]+)"')
_WANTED_EVENTS = (b'"user_message"', b'"item_completed"', b'"thread_settings_applied"')


def _rollout_line_wanted(line: bytes) -> bool:
    """Cheap pre-check on the raw bytes so the head read does not decode lines it has no use for
    (developer messages, world_state, token records…: most of the first 40 KB of a 0.150+ session).
    Errs on the side of decoding: anything it cannot classify is decoded."""
    m = _ENVELOPE_TYPE.search(line, 0, 200)
    if m is None:
        return True
    t = m.group(1)
    if t in (b"session_meta", b"turn_context"):
        return True
    if t == b"response_item":
        return b'"role":"user"' in line[:600] or b'"role": "user"' in line[:600]
    if t == b"event_msg":
        head = line[:400]
        return any(w in head for w in _WANTED_EVENTS)
    return False


def _early_line(acc: _Acc, obj: dict[str, Any]) -> None:
    if "record_type" in obj:
        return
    if obj.get("type") is None and "id" in obj and "timestamp" in obj:
        acc.meta(obj)
        return
    if "payload" in obj:  # a resumed early file may continue in the envelope format
        _rollout_line(acc, obj)
        return
    _response_item(acc, obj)


_TS = re.compile(rb'"timestamp":\s*"([^"]+)"')


def read_tail(path: str | Path | Descriptor, *, budget: int = TAIL_BYTES) -> SessionTail:
    """The last timestamp and the last cumulative token usage from the final bytes of a plain rollout
    (first the last 8 KB, then ``budget`` when the token count is further back). A compressed file
    cannot be read from its end cheaply: it gives an empty tail."""
    with path.open(64 * 1024) if isinstance(path, Descriptor) else open(Path(path), "rb") as fh:
        if is_zstd_head(fh.read(4)):
            return SessionTail()
        size = fh.seek(0, io.SEEK_END)
        for window in (min(8192, budget), budget):
            start = max(0, size - window)
            fh.seek(start)
            data = fh.read(window)
            if start > 0:
                cut = data.find(b"\n")
                data = data[cut + 1:] if cut >= 0 else b""
            tail = _tail_of(data)
            if tail.tokens is not None or start == 0 or window == budget:
                return tail
    return SessionTail()


def _tail_of(data: bytes) -> SessionTail:
    last_ts: str | None = None
    for line in reversed(data.rstrip(b"\n").split(b"\n")):
        m = _TS.search(line, 0, 120)
        if m:
            last_ts = m.group(1).decode("utf-8", "replace")
            break
    tokens: TokenUsage | None = None
    end = len(data)
    while tokens is None:
        i = data.rfind(b'"token_count"', 0, end)
        if i < 0:
            break
        lo = data.rfind(b"\n", 0, i) + 1
        hi = data.find(b"\n", i)
        obj = _loads(data[lo:hi if hi >= 0 else len(data)])
        if isinstance(obj, dict):
            tokens = _token_usage(obj)
        end = lo
    return SessionTail(last_timestamp=last_ts, tokens=tokens)


def _token_usage(obj: dict[str, Any]) -> TokenUsage | None:
    p = obj.get("payload")
    if obj.get("type") != "event_msg" or not isinstance(p, dict) or p.get("type") != "token_count":
        return None
    return token_count_usage(p)


_HANDLERS: dict[Format, Callable[[_Acc, dict[str, Any]], None]] = {
    Format.ROLLOUT: _rollout_line,
    Format.EXEC_JSON: _exec_json_line,
    Format.EXEC_PROTOCOL: _exec_protocol_line,
    Format.EARLY_RUST: _early_line,
}
