"""Prices kept beside the usage in the session store, so that a report over thousands of sessions sums
stored figures instead of pricing every row again (pricing one row takes about 0.1 ms, and loading the
price data more than the whole warm report).

Each stored ``usage`` row carries the price :func:`transcript_reader.usage.pricing.price_row` gave it when
the session was stored (``usd``, ``price_source``, ``price_date``, ``price_reason``). The store's
``meta`` names the price data and rules they came from (:func:`price_key`: the installed price data and
pricing code, found without importing them); a store whose key differs has its rows priced again by the
next refresh, and until then a report prices them itself.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sqlite3
from dataclasses import dataclass, fields
from typing import Any

from transcript_reader.model import Format, TokenUsage, UsageRow
from transcript_reader.sessions.transactions import write_transaction
from transcript_reader.usage.accounting import SUMMED

#: The ``meta`` key naming the prices of the stored rows.
META_KEY = "prices"

#: Columns of a stored row's price, after its usage columns.
PRICE_COLUMNS = ("usd", "price_source", "price_date", "price_reason")


@dataclass(frozen=True, slots=True)
class StoredPrice:
    """A stored row's price, as :class:`transcript_reader.usage.pricing.Price` gave it."""

    usd: float | None
    source: str | None
    price_date: str | None
    reason: str | None


def price_key() -> str:
    """What the stored prices depend on: the price data's and the pricing rules' files (path, size,
    mtime). Cheap: nothing is imported."""
    parts = []
    for module, name in (("genai_prices", "data.py"), ("transcript_reader.usage", "pricing.py")):
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        where = list(spec.submodule_search_locations or []) if spec is not None else []
        path = os.path.join(where[0], name) if where else None
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}" if st else f"{module}:absent")
    return hashlib.sha1("|".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:16]


_TOKENS = ("input", "cached_input", "cache_write", "output", "reasoning", "total", "cache_write_1h")
# stored_row builds a TokenUsage by position
assert tuple(f.name for f in fields(TokenUsage)) == (
    "input", "cached_input", "output", "reasoning", "total", "source", "cache_write", "cache_write_1h")


def bands_json(bands: tuple[tuple[int, int, TokenUsage], ...] | None) -> str | None:
    """``UsageRow.bands`` as the store keeps it: ``[[above, calls, [input, cached_input, cache_write, output,
    reasoning, total, cache_write_1h]], …]``; None when not known."""
    if bands is None:
        return None
    return json.dumps([[above, calls, [getattr(t, f) for f in _TOKENS]] for above, calls, t in bands],
                      separators=(",", ":"))


def bands_of(text: str | None, source: str) -> tuple[tuple[int, int, TokenUsage], ...] | None:
    """The stored ``bands`` back as ``UsageRow.bands``."""
    if text is None:
        return None
    return tuple((int(above), int(calls), TokenUsage(**dict(zip(_TOKENS, (int(v) for v in t), strict=True)),
                                                     source=source)) for above, calls, t in json.loads(text))


def stored_row(model: str | None, day: str | None, tier: str | None, calls: int, tok: tuple[int, ...],
               bands: str | None, source: str) -> UsageRow:
    """A ``usage`` row of the store as the accounting made it (``tok``: the token columns in the order
    of ``_TOKENS``). Built by position: a usage report over 10,000 sessions builds one per row."""
    i, c, w, o, r, t, h = tok
    return UsageRow(model, day, tier, calls, TokenUsage(i, c, o, r, t, source, w, h),
                    None if bands is None else bands_of(bands, source))


def price_of(row: UsageRow, fmt: Format | str | None) -> tuple[Any, ...]:
    """The :data:`PRICE_COLUMNS` of one row of a session in format ``fmt``."""
    from transcript_reader.usage.pricing import price_row, provider_of

    try:
        p = price_row(row, provider=provider_of(fmt))
    except Exception as e:  # noqa: BLE001 - a pricing bug costs this row's price, never the session's usage
        return (None, None, None, f"pricing failed: {type(e).__name__}: {e}")
    return (p.usd, p.source, p.price_date, p.reason)


def reprice(con: sqlite3.Connection, key: str) -> int:
    """Price every stored usage row again (the price data or rules changed) and record ``key``; in one
    transaction. Returns the rows priced."""
    rows = con.execute("SELECT u.rowid, s.format, u.model, u.day, u.tier, u.calls, u.input, u.cached_input, "
                       "u.cache_write, u.output, u.reasoning, u.total, u.cache_write_1h, u.bands FROM usage u JOIN sessions s "
                       "ON s.id = u.session").fetchall()
    updates = []
    for rowid, fmt, model, day, tier, calls, i, c, w, o, r, t, h, bands in rows:
        row = stored_row(model, day, tier, calls, (i, c, w, o, r, t, h), bands, SUMMED)
        updates.append((*price_of(row, fmt), rowid))
    with write_transaction(con):
        con.executemany("UPDATE usage SET usd=?, price_source=?, price_date=?, price_reason=? WHERE rowid=?", updates)
        con.execute("INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                    (META_KEY, key))
    return len(updates)


def stored_key(con: sqlite3.Connection) -> str | None:
    """The price key the stored rows were priced under (None: not recorded)."""
    try:
        got = con.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
    except sqlite3.DatabaseError:
        return None
    return None if got is None else str(got[0])
