"""The usage report as JSON (``usage --json``, the MCP tool) and as table cells (``usage`` on a terminal or in
a pipe). Unknown is shown as unknown: a sum carries how many sessions it could not count, never a 0 for
them."""

from __future__ import annotations

from typing import Any

from transcript_reader.model import TokenUsage
from transcript_reader.present.text import clean
from transcript_reader.usage.report import Cost, Group

#: The token fields of a figure, in the order shown.
TOKEN_KEYS = ("input", "cached_input", "cache_write", "output", "reasoning", "total")


def tokens_json(t: TokenUsage | None) -> dict[str, int] | None:
    return None if t is None else {k: getattr(t, k) for k in TOKEN_KEYS}


def cost_json(c: Cost) -> dict[str, Any]:
    """``usd`` the known part (None: none known), ``unknown`` the sessions left out of it."""
    return {"usd": None if c.usd is None else round(c.usd, 6), "source": "; ".join(c.sources) or None,
            "price_date": c.price_dates[-1] if c.price_dates else None, "reason": c.reason, "unknown": c.unknown}


def group_json(g: Group) -> dict[str, Any]:
    """One line of the report. A ``--by session`` line also names its session, and carries
    ``with_subagents`` (its own usage plus its sub-agents') when it has sub-agents."""
    out: dict[str, Any] = {"key": g.key}
    s = g.spent
    if s is not None:
        e = s.entry
        out.update(id=e.session_id, path=e.path, title=e.title, project=e.head.cwd, model=e.head.model,
                   started=e.head.timestamp, depth=g.depth, parent_id=e.parent_id,
                   subagent=bool(e.head.parent_session_id))
    out.update(sessions=g.sessions, calls=g.calls, tokens=tokens_json(g.tokens), unknown_tokens=g.unknown,
               cost=cost_json(g.cost))
    if s is not None:
        w = g.with_subagents
        out["with_subagents"] = None if w is None else {
            "sessions": w.sessions, "calls": w.calls, "tokens": tokens_json(w.tokens), "unknown_tokens": w.unknown,
            "cost": cost_json(w.cost)}
    return out


def report_json(by: str, lines: list[Group], total: Group, **about: Any) -> dict[str, Any]:
    return {"ok": True, "by": by, **about, "rows": [group_json(g) for g in lines], "total": group_json(total)}


# ---- text ------------------------------------------------------------------------------------------

HEADERS = ("sessions", "calls", "input", "cached", "output", "reasoning", "total", "unknown", "usd")


def _n(v: int) -> str:
    return f"{v:,}"


def usd_text(c: Cost) -> str:
    """``$1.23``, ``$1.23 +2?`` (2 sessions' cost unknown, not in the sum) or ``unknown``."""
    if c.usd is None:
        return "unknown"
    base = f"${c.usd:,.2f}" if c.usd >= 0.01 or c.usd == 0 else f"${c.usd:.4f}"
    return f"{base} +{c.unknown}?" if c.unknown else base


def cells(g: Group, *, plain: bool = False) -> list[str]:
    """The figures of one line as text: ``plain`` (a pipe) gives bare numbers, tab-safe."""
    t = g.tokens
    fmt = str if plain else _n
    if t is None:
        figures = ["unknown"] * 5
    else:
        figures = [fmt(t.input), fmt(t.cached_input), fmt(t.output), fmt(t.reasoning), fmt(t.total)]
    if plain:
        usd = "unknown" if g.cost.usd is None else f"{g.cost.usd:.6f}"
        return [str(g.sessions), str(g.calls), *figures, str(g.unknown), usd, str(g.cost.unknown)]
    return [fmt(g.sessions), fmt(g.calls), *figures, fmt(g.unknown) if g.unknown else "", usd_text(g.cost)]


def label(g: Group, by: str) -> str:
    """The first cell: the key, or for a session its short id, indented under its parent, and title."""
    if by != "session" or g.spent is None:
        return clean(g.key)
    e = g.spent.entry
    title = (e.title or "").replace("\n", " ")
    head = f"{'  ' * g.depth}{'└ ' if g.depth else ''}{(e.session_id or e.path)[:13]}"
    return clean(f"{head} {title[:40]}".rstrip())


def tsv_line(fields: list[str]) -> str:
    """Fields joined by tabs, each terminal-safe and free of tabs and newlines."""
    return "\t".join(clean(f).replace("\t", " ").replace("\n", " ") for f in fields)


def notes(total: Group) -> list[str]:
    """What a reader of the sums must know: how many sessions they leave out, and the price source."""
    out = []
    if total.unknown:
        out.append(f"{total.unknown} session(s) record no usage (or could not be read): shown as unknown, "
                   "not counted in the sums")
    c = total.cost
    if c.unknown - total.unknown > 0:
        out.append(f"{c.unknown - total.unknown} session(s) could not be priced ({c.reason}): not in the cost")
    if c.sources:
        when = f", prices in force on {c.price_dates[0]}" if len(c.price_dates) == 1 else (
            f", prices in force from {c.price_dates[0]} to {c.price_dates[-1]}" if c.price_dates else "")
        out.append(f"cost: {'; '.join(c.sources)}{when}")
    return [clean(n) for n in out]
