"""Which files one Codex thread lives in (Codex 0.154+ paginated history), from their first line.

Recognition rules (README "Threads"), confirmed in the openai/codex source (``HistoryPosition``: "exclusive
physical prefix inherited from another rollout segment"; ``thread_rolled_back`` drops the last
``num_turns`` turns of the history read so far):

- a file whose ``session_meta`` has ``history_base: {thread_id, end_ordinal_exclusive, end_byte_offset}``
  and no ``forked_from_id`` (or its own id there) is a **segment**: Codex wrote it after a rewind. Its
  history is the rollout named by ``history_base.thread_id`` (a file called
  ``rollout-<time>-<that id>.jsonl``, or ``…-<thread id>_<that id>.jsonl`` for an earlier segment) up to,
  not including, byte ``end_byte_offset``, then its own lines. The predecessor's lines from there on
  were rewound away.
- a file with ``forked_from_id`` and a ``history_base`` is a **fork** (``codex fork``): it copies none of
  the parent's history, which ends at that position in the parent's file.

Files are looked up under the sessions root the file lives in (the nearest ``sessions`` or
``archived_sessions`` directory above it, else its own directory): never the environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from transcript_reader.providers.codex.layout import ARCHIVE_DIR, LIVE_DIR, NAME
from transcript_reader.providers.codex.rollout import meta_from
from transcript_reader.providers.records import Meta
from transcript_reader.reading.source import open_binary, prefix_lines

#: The first line (session_meta) is read within this many bytes (0.150+ headers are ~22 KB).
_HEAD_BYTES = 4 << 20
#: Predecessors followed at most (a chain of rewinds; a cycle of history_base links ends here too).
MAX_CHAIN = 64


@dataclass(frozen=True, slots=True)
class Link:
    """``path`` continues the history of ``base`` (None: not found) up to ``end_offset`` bytes of it;
    ``fork`` when the history is a parent's (``codex fork``), not this thread's own."""

    path: Path
    thread_id: str | None
    base_rollout: str
    base: Path | None
    end_offset: int | None
    end_ordinal: int | None
    fork: bool


def first_meta(path: Path) -> Meta | None:
    """The ``session_meta`` of a rollout's first line, or None."""
    try:
        with open_binary(path) as fh:
            for raw, whole in prefix_lines(fh, budget=_HEAD_BYTES, max_line=_HEAD_BYTES):
                if not raw.strip():
                    continue
                if not whole:
                    return None
                obj = orjson.loads(raw)
                if isinstance(obj, dict) and obj.get("type") == "session_meta" and isinstance(obj.get("payload"), dict):
                    return meta_from(obj["payload"])
                return None
    except (OSError, orjson.JSONDecodeError, ValueError):
        return None
    except Exception:  # noqa: BLE001 - a corrupt .zst head: no thread link, the read reports the damage
        return None
    return None


def rollout_id(path: Path) -> str | None:
    """The rollout id a file name carries: the segment id after ``_``, else the thread id."""
    m = NAME.match(path.name)
    if m is None:
        return None
    rest = path.name[m.end():]
    if rest.startswith("_"):
        seg = rest[1:].split(".", 1)[0]
        return seg or None
    return m.group("id")


def sessions_root(path: Path) -> Path:
    for parent in path.resolve().parents:
        if parent.name in (LIVE_DIR, ARCHIVE_DIR):
            return parent.parent if parent.name == ARCHIVE_DIR else parent
    return path.resolve().parent


def _candidates(root: Path, rollout: str) -> list[Path]:
    found = []
    for base in ([root, root.parent / ARCHIVE_DIR] if root.name == LIVE_DIR else [root]):
        if base.is_dir():
            found += [p for p in base.rglob(f"rollout-*{rollout}*") if p.is_file() and rollout_id(p) == rollout]
    return sorted(found)


def link_of(path: Path) -> Link | None:
    """What ``path``'s ``history_base`` links it to, or None when it has none."""
    meta = first_meta(path)
    if meta is None or meta.history_thread is None:
        return None
    fork = bool(meta.forked_from_id) and meta.forked_from_id != meta.session_id
    hits = [p for p in _candidates(sessions_root(path), meta.history_thread) if p.resolve() != path.resolve()]
    return Link(path=path, thread_id=meta.session_id, base_rollout=meta.history_thread,
                base=hits[0] if hits else None, end_offset=meta.history_end_offset,
                end_ordinal=meta.history_end_ordinal, fork=fork)


def thread_chain(path: Path) -> list[Link]:
    """The segments before ``path`` of its own thread, oldest first, ending with ``path``'s own link
    (empty when ``path`` is not a segment). Forks are not followed: their history is another thread's."""
    chain: list[Link] = []
    seen = {path.resolve()}
    cur: Path | None = path
    while cur is not None and len(chain) < MAX_CHAIN:
        link = link_of(cur)
        if link is None or link.fork:
            break
        chain.append(link)
        if link.base is None or link.base.resolve() in seen:
            break
        seen.add(link.base.resolve())
        cur = link.base
    chain.reverse()
    return chain


def successors(path: Path) -> list[Link]:
    """Segments that continue ``path``'s history after a rewind (files of the same thread whose
    ``history_base`` names ``path``'s rollout id)."""
    rid = rollout_id(path)
    meta = first_meta(path)
    thread = meta.session_id if meta is not None else None
    if rid is None or thread is None or meta is None or meta.history_mode != "paginated":
        return []  # only paginated history is continued by segments (the search walks the sessions root)
    out = []
    root = sessions_root(path)
    for p in sorted(root.rglob(f"rollout-*{thread}_*")):
        if p.resolve() == path.resolve() or not p.is_file():
            continue
        link = link_of(p)
        if link is not None and not link.fork and link.base_rollout == rid:
            out.append(link)
    return out
