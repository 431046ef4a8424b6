"""Where Claude Code keeps its sessions, and what a listing needs from each file's head and tail.

Layout (observed in the recordings of ``fixtures/claude/recorded`` and in public transcripts): the
configuration folder (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``; the caller says which: the library never
reads the environment) holds ``projects/<slug>/<session-id>.jsonl``, one folder per working directory
(``<slug>`` is the cwd with its separators made ``-``: ``/home/user/project`` is ``-home-user-project``). A sub-agent's own file is
``projects/<slug>/<session-id>/subagents/agent-<id>.jsonl`` (2.1+) or ``projects/<slug>/agent-<id>.jsonl``
(2.0). Nothing else under ``projects`` is a transcript (``memory/``, ``*.meta.json``, tool outputs).

The head is read by the same decoder as a full read (``decode.ClaudeDecoder``), over a bounded prefix, so
``ls`` and ``inspect`` cannot disagree on a session's id, cwd, version, source, parent, model or title.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

import orjson

from transcript_reader.model import Format
from transcript_reader.providers.head import SessionHead, SessionTail, session_title
from transcript_reader.reading.source import Descriptor

if TYPE_CHECKING:
    from transcript_reader.providers.records import Meta

PROJECTS_DIR = "projects"
#: The most bytes a head read and a tail read look at (as for Codex: a listing never reads a whole file).
HEAD_BYTES = 256 * 1024
TAIL_BYTES = 64 * 1024
_SESSION = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\.jsonl$")
_AGENT = re.compile(r"^agent-[0-9A-Za-z_-]+\.jsonl$")
_TS = re.compile(rb'"timestamp":\s*"([^"]+)"')


def is_session_file_name(name: str) -> bool:
    return bool(_SESSION.match(name) or _AGENT.match(name))


def session_id_from_name(name: str) -> str | None:
    """A session file's name is its session id (``<uuid>.jsonl``); a sub-agent file's, ``agent-<id>``, is
    the id its head gives it (``decode``: ``agent-<id>``)."""
    if _SESSION.match(name) or _AGENT.match(name):
        return name[: -len(".jsonl")]
    return None


def iter_session_files(config_dir: str | Path) -> Iterator[Path]:
    """Every session file under ``config_dir/projects``, sub-agent files included, in a stable order.
    A missing folder yields nothing."""
    root = Path(config_dir) / PROJECTS_DIR
    try:
        projects = sorted(p for p in root.iterdir() if p.is_dir())
    except OSError:
        return
    for project in projects:
        try:
            children = sorted(project.iterdir())
        except OSError:
            continue
        for child in children:
            if child.is_file() and is_session_file_name(child.name):
                yield child
            elif child.is_dir() and _SESSION.match(child.name + ".jsonl"):
                sub = child / "subagents"
                if sub.is_dir():
                    yield from sorted(p for p in sub.iterdir() if p.is_file() and _AGENT.match(p.name))


def _open(path: Path | Descriptor) -> IO[bytes]:
    """A file by name, or one the caller already opened (read through its descriptor only)."""
    return path.open(64 * 1024) if isinstance(path, Descriptor) else open(path, "rb")  # noqa: SIM115


def _head_lines(path: Path | Descriptor, budget: int) -> Iterator[bytes]:
    used = 0
    with _open(path) as fh:
        while used < budget:
            line = fh.readline(budget - used)
            if not line:
                return
            used += len(line)
            if not line.endswith(b"\n") and used >= budget:
                return  # cut by the budget
            yield line


def read_head(path: str | Path | Descriptor, *, budget: int = HEAD_BYTES) -> SessionHead:
    """Session metadata from the first ``budget`` bytes: the decoder's own reading of those lines."""
    p = path if isinstance(path, Descriptor) else Path(path)
    # imported here: listing a home (``ls``) walks Claude's folders without reading a head when its
    # cache has them, and the decoder's imports were a fifth of a warm listing's start-up
    from transcript_reader.providers.claude.decode import ClaudeDecoder
    from transcript_reader.providers.claude.sniff import is_stream_line
    from transcript_reader.providers.claude.stream import StreamDecoder
    from transcript_reader.providers.records import Message, Meta, TurnContext

    dec: ClaudeDecoder | None = None
    fmt = Format.CLAUDE
    meta: Meta | None = None
    model: str | None = None
    title: str | None = None
    first_ts: str | None = None
    for n, raw in enumerate(_head_lines(p, budget), 1):
        if not raw.strip():
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if dec is None:
            # the first JSON line says which of the two formats this is (a stream-json output's first
            # event names ``session_id``), and the head is read by that format's own decoder
            if is_stream_line(obj):
                dec, fmt = StreamDecoder(), Format.CLAUDE_STREAM
            else:
                dec = ClaudeDecoder()
        d = dec.decode(obj, n)
        if first_ts is None:
            first_ts = d.timestamp  # a stream's init carries no time: its start is its first timed line
        for rec in d.records:
            if isinstance(rec, Meta) and meta is None:
                meta = rec
            elif isinstance(rec, TurnContext) and model is None:
                model = rec.model
            elif (isinstance(rec, Message) and rec.role == "user" and rec.context_label is None and title is None
                  and rec.text.strip()):
                title = session_title(rec.text)
        if meta is not None and title is not None and model is not None:
            break
    if meta is None:
        return SessionHead(format=fmt, title=title, model=model,
                           error=None if title else "no Claude Code session line in the head")
    return SessionHead(format=fmt, session_id=meta.session_id, timestamp=meta.timestamp or first_ts, cwd=meta.cwd,
                       originator=meta.originator, cli_version=meta.version, source=meta.source,
                       parent_session_id=meta.parent_session_id, model=model, title=title)


def read_tail(path: str | Path | Descriptor, *, budget: int = TAIL_BYTES) -> SessionTail:
    """The last timestamp from the final bytes. Token usage is a sum over every message of the file, so
    the tail cannot tell it (``tokens`` stays None: only a full read knows)."""
    with _open(path if isinstance(path, Descriptor) else Path(path)) as fh:
        size = fh.seek(0, 2)
        start = max(0, size - budget)
        fh.seek(start)
        data = fh.read(budget)
    for line in reversed(data.rstrip(b"\n").split(b"\n")):
        m = _TS.search(line)
        if m:
            return SessionTail(last_timestamp=m.group(1).decode("utf-8", "replace"))
    return SessionTail()
