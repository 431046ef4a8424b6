"""Sub-agents and forks under their parents: the tree ``ls`` shows, robust to any parent links."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

E = TypeVar("E", bound=Any)


def nest(entries: list[E], sort_key: Callable[[E], Any]) -> list[E]:
    """``entries`` (newest first) with each sub-agent or fork right under its parent, every entry exactly
    once whatever the parent links say (a cycle made its members unreachable from any top-level
    row, so they vanished from ``ls``, ``last`` and cross-session search).

    A session is top-level when its parent is not listed (missing, filtered out: ``parent_note``
    "not listed"), names itself ("self") or lies on a cycle of parent links ("cycle": every member of
    the cycle is top-level, since no link in it can be trusted over another; sessions hanging off the
    cycle stay under their parent). Walked iteratively: a chain of thousands of sub-agents must not hit
    the recursion limit."""
    # Entries are handled by their index in ``entries`` (two files may carry the same session id), with
    # each one's ids read once: a listing nests 10,000 rows, and a property per look-up cost a tenth of it.
    n = len(entries)
    sids = [e.session_id for e in entries]
    pids = [e.parent_id for e in entries]
    by_id: dict[str, int] = {}
    for k in range(n):
        if sids[k]:
            by_id.setdefault(sids[k], k)  # type: ignore[arg-type]

    def listed_parent(k: int) -> str | None:
        pid = pids[k]
        return pid if pid and pid != sids[k] and pid in by_id else None

    children: dict[str, list[int]] = {}
    roots: set[int] = set()
    notes: dict[int, str] = {}
    for k in range(n):
        pid = listed_parent(k)
        if pid is not None:
            children.setdefault(pid, []).append(k)
            continue
        roots.add(k)
        if pids[k]:
            notes[k] = "self" if pids[k] == sids[k] else "not listed"
    for kids in children.values():
        kids.sort(key=lambda k: sort_key(entries[k]))

    reached = bytearray(n)

    def reach(start: int) -> None:
        stack = [start]
        while stack:
            cur = stack.pop()
            if reached[cur]:
                continue
            reached[cur] = 1
            sid = sids[cur]
            if sid:
                stack.extend(children.get(sid, ()))

    for k in range(n):
        if k in roots:
            reach(k)
    for k in range(n):
        if reached[k]:
            continue
        # Not reached, so its parent (listed, else it would be a root) is not reached either: following
        # the parent links from here never meets a root and must come round to a cycle.
        chain: list[int] = []
        pos: dict[int, int] = {}
        cur = k
        while cur not in pos:
            pos[cur] = len(chain)
            chain.append(cur)
            pid = listed_parent(cur)
            assert pid is not None  # an unreached entry is never a root
            cur = by_id[pid]
        for member in chain[pos[cur]:]:
            roots.add(member)
            notes[member] = "cycle"
        for member in chain[pos[cur]:]:
            reach(member)

    out: list[E] = []
    emitted = bytearray(n)
    for k in range(n):
        if k not in roots:
            continue
        stack: list[tuple[int, int]] = [(k, 0)]
        while stack:
            cur, depth = stack.pop()
            if emitted[cur]:
                continue  # a second file with the same session id already took this child
            emitted[cur] = 1
            note = notes.get(cur)
            e = entries[cur]
            same = e.depth == depth and e.parent_note == note
            out.append(e if same else dataclasses.replace(e, depth=depth, parent_note=note))
            sid = sids[cur]
            if sid:
                kids = [c for c in children.get(sid, ()) if c not in roots]
                stack.extend((c, depth + 1) for c in reversed(kids))
    return out
