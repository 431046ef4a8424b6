"""Live filtering of the session list as one types: fzf's matching, in a few lines.

A query is split on spaces into terms; a row matches when every term matches one of its fields
(title, cwd, id, model, agent nickname). A term matches a field as a case-insensitive subsequence
("clcpy" finds "calc.py"); a term that starts with ``'`` must occur as is (fzf's exact match). A
term must match within one field: letters picked from the title and the cwd at once find too much. Rows keep the
listing's order (newest first, sub-agents under their parent): sorting by score would scatter a
session's sub-agents, and with a few words typed the newest matching session is what one wants.
"""

from __future__ import annotations


def term_positions(term: str, hay: str) -> list[int] | None:
    """Where ``term`` matches in ``hay`` (lower-cased both), or None. Subsequence matching takes
    the leftmost match of the first character that lets the rest match, then shrinks the window
    from the end (fzf v1), so highlighted letters sit close together."""
    if term.startswith("'"):
        exact = term[1:]
        at = hay.find(exact)
        return list(range(at, at + len(exact))) if at >= 0 and exact else ([] if not exact else None)
    pos: list[int] = []
    i = 0
    for ch in term:
        i = hay.find(ch, i)
        if i < 0:
            return None
        pos.append(i)
        i += 1
    # backward pass: from the last match, take each earlier character as late as possible
    end = pos[-1]
    j = end
    back: list[int] = []
    for ch in reversed(term):
        j = hay.rfind(ch, 0, j + 1)
        back.append(j)
        j -= 1
    back.reverse()
    return back


def matches(query: str, fields: list[str]) -> bool:
    """Whether every term of ``query`` matches one of ``fields`` (an empty query matches all)."""
    low = [f.lower() for f in fields if f]
    return all(any(term_positions(term, f) is not None for f in low) for term in query.lower().split())
