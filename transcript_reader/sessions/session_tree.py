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
    by_id: dict[str, E] = {}
    for e in entries:
        if e.session_id:
            by_id.setdefault(e.session_id, e)

    def listed_parent(e: E) -> str | None:
        pid = e.parent_id
        return pid if pid and pid != e.session_id and pid in by_id else None

    children: dict[str, list[E]] = {}
    roots: set[int] = set()  # id() of the entries: two files may carry the same session id
    notes: dict[int, str] = {}
    for e in entries:
        pid = listed_parent(e)
        if pid is not None:
            children.setdefault(pid, []).append(e)
            continue
        roots.add(id(e))
        if e.parent_id:
            notes[id(e)] = "self" if e.parent_id == e.session_id else "not listed"
    for kids in children.values():
        kids.sort(key=sort_key)

    reached: set[int] = set()

    def reach(start: E) -> None:
        stack = [start]
        while stack:
            cur = stack.pop()
            if id(cur) in reached:
                continue
            reached.add(id(cur))
            if cur.session_id:
                stack.extend(children.get(cur.session_id, ()))

    for e in entries:
        if id(e) in roots:
            reach(e)
    for e in entries:
        if id(e) in reached:
            continue
        # Not reached, so its parent (listed, else it would be a root) is not reached either: following
        # the parent links from here never meets a root and must come round to a cycle.
        chain: list[E] = []
        pos: dict[int, int] = {}
        cur = e
        while id(cur) not in pos:
            pos[id(cur)] = len(chain)
            chain.append(cur)
            pid = listed_parent(cur)
            assert pid is not None  # an unreached entry is never a root
            cur = by_id[pid]
        for member in chain[pos[id(cur)]:]:
            roots.add(id(member))
            notes[id(member)] = "cycle"
        for member in chain[pos[id(cur)]:]:
            reach(member)

    out: list[E] = []
    emitted: set[int] = set()
    for e in entries:
        if id(e) not in roots:
            continue
        stack: list[tuple[E, int]] = [(e, 0)]
        while stack:
            cur, depth = stack.pop()
            if id(cur) in emitted:
                continue  # a second file with the same session id already took this child
            emitted.add(id(cur))
            note = notes.get(id(cur))
            same = cur.depth == depth and cur.parent_note == note
            out.append(cur if same else dataclasses.replace(cur, depth=depth, parent_note=note))
            if cur.session_id:
                kids = [c for c in children.get(cur.session_id, ()) if id(c) not in roots]
                stack.extend((c, depth + 1) for c in reversed(kids))
    return out
