"""The usage report over many sessions: what the listed sessions spent, summed by day, week, month, model,
project or session, each sum priced.

The figures are the accounting's (``SessionInfo.usage``: one row per model, day and service tier),
read from the session store for every session it holds as listed, else from the file. Two rules keep a
report honest:

- **Unknown stays unknown.** A session whose file records no usage (or that could not be read) adds
  nothing to a sum and is counted in the sum's ``unknown``; a row whose price is unknown (a model the
  price source does not know) adds nothing to the cost and its session is counted in ``cost.unknown``.
  A sum of only unknowns is ``None``, never 0.
- **Each token counted once.** A session's own rows are its own usage (the accounting leaves a fork's
  replayed parent usage out). Grouped by day, model or project, every session counts its own usage; a
  session's figure *with its sub-agents* (its sub-agents' files are sessions of their own) is given
  beside its own figure, never summed again.

``--since``/``--until`` select usage by the UTC day it was spent (the unit the accounting keeps); a
session with no usage rows is placed by the day it started.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_reader.model import Format, TokenUsage, UsageRow
from transcript_reader.sessions.entry import SessionEntry
from transcript_reader.sessions.session_homes import Homes
from transcript_reader.sessions.stored import StoredUsage
from transcript_reader.usage.accounting import SUMMED, sum_tokens

#: ``--by`` values.
BY = ("day", "week", "month", "session", "model", "project")

#: The key of a group whose day, model or project the files do not say.
UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Spent:
    """One listed session and what it spent: ``rows`` None when its usage is unknown (the file records
    none, or it could not be read)."""

    entry: SessionEntry
    rows: tuple[UsageRow, ...] | None
    #: the rows' stored prices, in the same order (None: price them here)
    prices: tuple[Any, ...] | None = None

    @property
    def start_day(self) -> str | None:
        t = self.entry.started
        return t.astimezone(_dt.UTC).date().isoformat() if t is not None else None


@dataclass(frozen=True, slots=True)
class Cost:
    """The priced part of a sum. ``usd`` sums the rows whose price is known (None: none is);
    ``unknown`` counts the sessions of the sum whose cost is not known (unknown usage or an unpriced
    row); ``sources`` and ``price_dates`` name where each price came from; ``reason`` says why a part
    is unknown."""

    usd: float | None = None
    sources: tuple[str, ...] = ()
    price_dates: tuple[str, ...] = ()
    reason: str | None = None
    unknown: int = 0


@dataclass(frozen=True, slots=True)
class Group:
    """One line of the report: ``sessions`` counted in it, ``calls`` and ``tokens`` summed over those
    whose usage is known (``tokens`` None when none is), ``unknown`` the others. A ``--by session`` line
    carries its session (``spent``), its depth under its parent, and the figure with its sub-agents
    (``with_subagents``, only for a session that has any)."""

    key: str
    sessions: int
    calls: int
    tokens: TokenUsage | None
    unknown: int
    cost: Cost
    spent: Spent | None = None
    depth: int = 0
    with_subagents: Group | None = None


#: A price for one usage row of a session in the given format: an object with ``usd`` (None: unknown),
#: ``source``, ``price_date`` and ``reason`` (:func:`transcript_reader.usage.pricing.price_row`).
PriceFn = Callable[[UsageRow, Format | None], Any]


def default_price(row: UsageRow, fmt: Format | None) -> Any:
    """A row priced by :mod:`transcript_reader.usage.pricing` at the provider of the session's format."""
    from transcript_reader.usage.pricing import price_row, provider_of

    return price_row(row, provider=provider_of(fmt))


@dataclass
class Pricer:
    """Prices rows once each (a report prices the same row in its group and in its total)."""

    price: PriceFn = default_price
    _seen: dict[tuple[UsageRow, Format | None], Any] = field(default_factory=dict)

    def __call__(self, row: UsageRow, fmt: Format | None) -> Any:
        key = (row, fmt)
        got = self._seen.get(key)
        if got is None:
            got = self._seen[key] = self.price(row, fmt)
        return got


# ---- reading ---------------------------------------------------------------------------------------


def collect(entries: Iterable[SessionEntry], stored: dict[str, StoredUsage],
            read: Callable[[str], tuple[UsageRow, ...] | None]) -> list[Spent]:
    """Each listed session with its usage: the store's rows (and prices) when the store holds the very
    file version listed (same size and mtime), else ``read(path)`` (the file read whole; None: unknown)."""
    out: list[Spent] = []
    for e in entries:
        if e.head.format is None:
            out.append(Spent(e, None))  # not a transcript that could be read: its usage is unknown
            continue
        got = stored.get(e.path)
        if got is not None and got[0] == (e.size, e.mtime_ns):
            out.append(Spent(e, got[1] or None, got[2] if got[1] else None))
        else:
            out.append(Spent(e, read(e.path) or None))
    return out


def read_usage(path: str) -> tuple[UsageRow, ...] | None:
    """A session's usage from its file, read whole (None: it records none, or cannot be read)."""
    from transcript_reader.api import inspect
    from transcript_reader.errors import TranscriptError

    try:
        return inspect(path).usage or None
    except (TranscriptError, OSError, ValueError):
        return None


def listed(homes: Homes, *, cwd: str | None, store_dir: str | os.PathLike[str] | None, workers: int = 1,
           notice: Callable[[str], None] | None = None,
           progress: Callable[[int, int], None] | None = None) -> list[Spent]:
    """Every session of ``homes`` (live and archived: spent tokens stay spent once a session is
    archived) under ``cwd`` (None: every project), as ``ls`` lists and nests them, with its usage: from
    the session store in ``store_dir`` (brought in step first), else from the files."""
    from transcript_reader.sessions.discovery import Scope, list_sessions
    from transcript_reader.sessions.session_homes import sources
    from transcript_reader.sessions.stored import stored_usage

    entries = list_sessions(None, homes=homes, scope=Scope.ALL, cwd=cwd, store_dir=store_dir, workers=workers,
                            notice=notice, progress=progress)
    from transcript_reader.usage.stored_prices import price_key

    stored = stored_usage(sources(None, homes), Path(store_dir), key=price_key(),
                          refresh_prices=True) if store_dir is not None else {}
    return collect(entries, stored, read_usage)


def session_costs(entries: Iterable[SessionEntry], homes: Homes, store_dir: str | os.PathLike[str] | None,
                  pricer: Pricer | None = None) -> dict[str, Cost]:
    """path -> the cost of each listed session's own usage (``ls --stats``, ``browse``): stored prices
    where the store holds the file version listed, else its file read whole and priced."""
    from transcript_reader.sessions.session_homes import sources
    from transcript_reader.sessions.stored import stored_usage
    from transcript_reader.usage.stored_prices import price_key

    entries = list(entries)
    stored = stored_usage(sources(None, homes), Path(store_dir), key=price_key()) if store_dir is not None else {}
    pricer = pricer or Pricer()
    return {s.entry.path: _sum("", [(s, s.rows, s.prices)], pricer).cost for s in collect(entries, stored, read_usage)}


def clip(spent: list[Spent], since: str | None, until: str | None) -> list[Spent]:
    """Only the usage spent from day ``since`` to day ``until`` (``YYYY-MM-DD``, both included); a row
    with no day, and a session with unknown usage, by the day the session started. Sessions left with
    nothing in the range are dropped."""
    if since is None and until is None:
        return spent

    def within(day: str | None) -> bool:
        return day is not None and (since is None or day >= since) and (until is None or day <= until)

    out: list[Spent] = []
    for s in spent:
        if s.rows is None:
            if within(s.start_day):
                out.append(s)
            continue
        keep = [k for k, r in enumerate(s.rows) if within(r.day or s.start_day)]
        if keep:
            out.append(Spent(s.entry, tuple(s.rows[k] for k in keep),
                             None if s.prices is None else tuple(s.prices[k] for k in keep)))
    return out


# ---- summing ---------------------------------------------------------------------------------------


def week_of(day: str) -> str:
    """The ISO week of a ``YYYY-MM-DD`` day: ``2026-W48``."""
    y, w, _d = _dt.date.fromisoformat(day).isocalendar()
    return f"{y}-W{w:02d}"


def _key(by: str, s: Spent, row: UsageRow | None) -> str:
    if by == "model":
        return (row.model if row is not None else s.entry.head.model) or UNKNOWN
    if by == "project":
        return s.entry.head.cwd or UNKNOWN
    if by == "session":
        return s.entry.session_id or s.entry.path
    day = (row.day if row is not None else None) or s.start_day
    if day is None:
        return UNKNOWN
    return day if by == "day" else day[:7] if by == "month" else week_of(day)


#: A session's part of a group: the session, its rows in the group (None: its usage is unknown) and
#: their stored prices (None: price them).
Part = tuple[Spent, tuple[UsageRow, ...] | None, tuple[Any, ...] | None]


def _sum(key: str, parts: list[Part], pricer: Pricer) -> Group:
    """One group from its sessions' rows in it."""
    known = [(s.entry.head.format, rows, prices) for s, rows, prices in parts if rows is not None]
    unknown = len(parts) - len(known)
    flat = [r for _f, rows, _p in known for r in rows]
    tokens = sum_tokens((r.tokens for r in flat), source=SUMMED)
    return Group(key=key, sessions=len(parts), calls=sum(r.calls for r in flat), tokens=tokens, unknown=unknown,
                 cost=_cost(known, unknown, pricer))


def _cost(known: list[tuple[Format | None, tuple[UsageRow, ...], tuple[Any, ...] | None]], unknown: int,
          pricer: Pricer) -> Cost:
    usd: float | None = None
    sources: dict[str, None] = {}
    dates: dict[str, None] = {}
    reason = None if not unknown else "usage unknown"
    for fmt, rows, stored in known:
        priced = stored if stored is not None else [pricer(r, fmt) for r in rows]
        missing = [p for p in priced if p.usd is None]
        if missing:
            unknown += 1
            reason = reason or missing[0].reason or "no price"
        for p in priced:
            if p.usd is None:
                continue
            usd = (usd or 0.0) + float(p.usd)
            if p.source:
                sources[str(p.source)] = None
            if p.price_date:
                dates[str(p.price_date)] = None
    return Cost(usd=usd, sources=tuple(sources), price_dates=tuple(sorted(dates)), reason=reason, unknown=unknown)


def _part(s: Spent, at: list[int] | None) -> Part:
    if at is None or s.rows is None:
        return (s, None, None)
    if len(at) == len(s.rows):
        return (s, s.rows, s.prices)
    return (s, tuple(s.rows[k] for k in at), None if s.prices is None else tuple(s.prices[k] for k in at))


def group(spent: list[Spent], by: str, price: Pricer | None = None) -> list[Group]:
    """The report's lines ``by`` day, week, month (oldest first), model or project (most tokens first);
    ``session``: :func:`by_session`."""
    pricer = price or Pricer()
    if by == "session":
        return by_session(spent, pricer)
    buckets: dict[str, dict[int, tuple[Spent, list[int] | None]]] = {}
    for s in spent:
        if s.rows is None:
            buckets.setdefault(_key(by, s, None), {})[id(s)] = (s, None)
            continue
        for k, r in enumerate(s.rows):
            slot = buckets.setdefault(_key(by, s, r), {}).setdefault(id(s), (s, []))
            assert slot[1] is not None
            slot[1].append(k)
    groups = [_sum(key, [_part(s, at) for s, at in parts.values()], pricer) for key, parts in buckets.items()]
    if by in ("model", "project"):
        groups.sort(key=lambda g: (-(g.tokens.total if g.tokens else -1), g.key))
    else:
        groups.sort(key=lambda g: (g.key == UNKNOWN, g.key))
    return groups


def total(spent: list[Spent], price: Pricer | None = None) -> Group:
    """Every session's usage summed (each session once: its own usage)."""
    pricer = price or Pricer()
    return _sum("total", [(s, s.rows, s.prices) for s in spent], pricer)


def _is_subagent_link(e: SessionEntry) -> bool:
    """A sub-agent's usage is part of its parent's work; a fork is a session of its own (its copied
    history is the parent's usage, which the accounting already left out)."""
    return bool(e.head.parent_session_id)


def by_session(spent: list[Spent], price: Pricer | None = None) -> list[Group]:
    """One line per session, in the listing's order (each sub-agent right under its parent, ``depth``
    from the listing); a session with sub-agents also carries the sum of its own usage and all its
    sub-agents' (``with_subagents``: children of children too; forks are sessions of their own)."""
    pricer = price or Pricer()
    lines = [_sum(s.entry.session_id or s.entry.path, [(s, s.rows, s.prices)], pricer) for s in spent]
    # the sub-agents under each line: the lines after it, deeper, reached through sub-agent links only
    below: list[list[int]] = [[] for _ in spent]
    stack: list[int] = []  # indices of the open ancestors
    counted: list[bool] = [True] * len(spent)  # reached from its ancestors through sub-agent links only
    for i, s in enumerate(spent):
        depth = s.entry.depth
        while stack and spent[stack[-1]].entry.depth >= depth:
            stack.pop()
        if depth > 0 and stack:
            counted[i] = _is_subagent_link(s.entry)
            for a in reversed(stack):
                if not counted[i]:
                    break
                below[a].append(i)
                if not counted[a]:
                    break
        stack.append(i)
    out: list[Group] = []
    for i, (s, line) in enumerate(zip(spent, lines, strict=True)):
        with_subs = None
        if below[i]:
            members = [i, *below[i]]
            with_subs = _sum(line.key, [(spent[j], spent[j].rows, spent[j].prices) for j in members], pricer)
        out.append(Group(key=line.key, sessions=1, calls=line.calls, tokens=line.tokens, unknown=line.unknown,
                         cost=line.cost, spent=s, depth=s.entry.depth, with_subagents=with_subs))
    return out


def subtree(spent: list[Spent], root: str) -> list[Spent]:
    """The session whose file is ``root`` and every session nested under it (the listing's order)."""
    for i, s in enumerate(spent):
        if s.entry.path == root or root in s.entry.thread_files:
            depth = s.entry.depth
            out = [s]
            for t in spent[i + 1:]:
                if t.entry.depth <= depth:
                    break
                out.append(t)
            return out
    return []
