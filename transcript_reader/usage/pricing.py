"""What usage cost, priced from a maintained source: the prices bundled with the ``genai-prices`` package
(offline, the package version names the data), never a table typed into this code.

The rule (docs/usage.md says the same):

1. **An exact model name or nothing.** genai-prices' own lookup maps a name to a model by prefixes and
   patterns, so an unknown or newer name can be priced as a similar model. A name is priced only when it
   *is* a name of the model found: its id, one of its listed names, a full match of one of its anchored
   patterns, or one of those followed by a dated snapshot suffix (``-20250514``, ``-2025-08-07``,
   ``@20250514``). Anything else gives ``usd: None`` and the reason, never a guess.
2. **Each part at its own price**: uncached input, cached input (cache reads) and cache writes (those kept
   an hour apart again) are priced apart (the row's ``cached_input`` and ``cache_write`` are parts of its
   ``input``, ``cache_write_1h`` a part of ``cache_write``); output includes
   reasoning, priced as output unless the data prices reasoning apart.
3. **The service tier that ran**: a row whose tier the transcript names (``priority``, ``flex``,
   ``fast``, …) is priced at that tier's prices; a tier the data has no price for on that day gives
   ``None`` (the package would silently use the standard price).
4. **The price of the day the usage happened**: each row is priced at the prices in force on its day
   (the data keeps dated price changes). A row without a day cannot be dated and gives ``None``.
5. **Prompt-size bands** (e.g. input over 272,000 tokens billed higher) depend on each call's prompt.
   A row sums calls, so it is priced exactly when the band of every call is known: a summed prompt that
   no band start exceeds, or the row's ``bands`` (the accounting keeps the calls past each band edge
   apart). Otherwise ``None`` and the reason.

The package computes each price (:class:`_Rates`: its own calculation on probe usages, once per model,
day, tier and band). ``genai_prices`` is imported on the first price asked (~0.5 s), so a command that
prices nothing never loads it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

from transcript_reader.model import Format, SessionInfo, TokenUsage, UsageRow
from transcript_reader.usage.accounting import PROMPT_EDGES

PACKAGE = "genai-prices"

#: A dated snapshot suffix of a model name (``claude-sonnet-4-20250514``, ``gpt-5-2025-08-07``).
_DATED = re.compile(r"(?:[-@]\d{8}|-\d{4}-\d{2}-\d{2})$")

#: Tiers that name the standard price (the transcript says the default ran).
_STANDARD_TIERS = frozenset({"default", "auto", "standard"})

#: The request keys the price data selects a variant by, tried in order for a row's tier.
_TIER_KEYS = ("service_tier", "speed", "processing")


@dataclass(frozen=True, slots=True)
class Price:
    """What some usage cost in US dollars, with the source and the date of the prices used.
    ``usd`` None: it cannot be priced, and ``reason`` says why (never a 0 that was not computed)."""

    usd: float | None
    source: str | None  # e.g. "genai-prices 0.2.5, bundled data"
    price_date: str | None  # YYYY-MM-DD: the prices in force on this day were used (the last, for a sum)
    reason: str | None  # why usd is None ("unknown model: gpt-9-foo", "no usage recorded")

    def as_json(self) -> dict[str, Any]:
        return {"usd": self.usd, "source": self.source, "price_date": self.price_date, "reason": self.reason}


def provider_of(fmt: Format | str | None) -> str | None:
    """The price data's provider of a session's format: Codex runs OpenAI models, Claude Code Anthropic's."""
    if fmt is None:
        return None
    return "anthropic" if str(fmt) == Format.CLAUDE.value else "openai"


def price_session(info: SessionInfo | None) -> Price:
    """A whole session's cost (its usage rows, priced at its format's provider)."""
    if info is None:
        return Price(None, None, None, "no session read")
    return price_rows(info.usage, provider=provider_of(info.format))


# ------------------------------------------------------------------------------------------ the source


@cache
def _source() -> tuple[Any, str] | str:
    """The price data and its name, or the reason there is none (the package is not installed)."""
    try:
        import genai_prices
        from genai_prices import data_snapshot
    except ImportError:  # a trimmed install: cost unknown, said so
        return f"the price source is not installed ({PACKAGE})"
    return data_snapshot.get_snapshot(), f"{PACKAGE} {genai_prices.__version__}, bundled data"


def source_name() -> str | None:
    """The name of the price source (package and version), None when it is not installed."""
    got = _source()
    return None if isinstance(got, str) else got[1]


# ----------------------------------------------------------------------------------------- exact names


def _names(match: Any) -> tuple[list[str], list[str], list[str]]:
    """A model's match clauses as (exact names, name prefixes, anchored patterns)."""
    from genai_prices import types as t

    exact: list[str] = []
    prefixes: list[str] = []
    patterns: list[str] = []
    todo = [match]
    while todo:
        c = todo.pop()
        if isinstance(c, t.ClauseOr):
            todo.extend(c.or_)
        elif isinstance(c, t.ClauseEquals):
            exact.append(c.equals.lower())
        elif isinstance(c, t.ClauseStartsWith):
            prefixes.append(c.starts_with.lower())
        elif isinstance(c, t.ClauseRegex) and c.regex.startswith("^") and c.regex.endswith("$"):
            patterns.append(c.regex)
        # ClauseAnd / ClauseContains / unanchored patterns say no name exactly: not used
    return exact, prefixes, patterns


def is_exact_name(name: str, model: Any) -> bool:
    """Whether ``name`` is a name of ``model`` (a genai-prices ``ModelInfo``), not a name its lookup
    matched by prefix or pattern only (rule 1)."""
    ref = name.lower()
    exact, prefixes, patterns = _names(model.match)
    bases = {model.id.lower(), *exact, *(p for p in prefixes if p[-1:].isalnum())}
    if ref in bases or any(re.fullmatch(p, ref) for p in patterns):
        return True
    base = _DATED.sub("", ref)
    return base != ref and base in bases


def _lookup(snapshot: Any, name: str, provider: str | None) -> tuple[Any, Any] | str:
    """(provider, model) priced under the exact name, or the reason none is."""
    try:
        prov, model = snapshot.find_provider_model(name, None, provider, None)
    except LookupError:
        return f"unknown model: {name}" + (f" ({provider})" if provider else "")
    if not is_exact_name(name, model):
        return f"unknown model: {name} (the price data knows {model.id}, a different name)"
    return prov, model


# ------------------------------------------------------------------------------------------- a row


def _when(day: str) -> datetime | None:
    try:
        return datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None


def _context(model: Any, tier: str | None, when: datetime) -> dict[str, str] | None | str:
    """The price-data request context of a row's tier, None for the standard price, or the reason the
    tier has no price (rule 3)."""
    if tier is None or tier.lower() in _STANDARD_TIERS:
        return None
    for key in _TIER_KEYS:
        for v in model.price_variants or ():
            if v.when == {key: tier} and (v.constraint is None or v.constraint.active(when)):
                return {key: tier}
    return f"no price for service tier {tier!r} of {model.id} on {when.date().isoformat()}"


def _band_starts(prices: Any) -> tuple[int, ...]:
    from genai_prices import types as t

    return tuple(sorted({tier.start for v in vars(prices).values() if isinstance(v, t.TieredPrices)
                         for tier in v.tiers}))


def _probe(n: int, part: int) -> dict[str, int]:
    """The usage that prices one part of a ``TokenUsage`` (uncached input, cache read, cache write, 1-hour
    cache write, output, reasoning): ``n`` tokens of it, with an ``n``-token prompt (the band's)."""
    base = {"input_tokens": n}
    extra = ({}, {"cache_read_tokens": n}, {"cache_write_tokens": n},
             {"cache_write_tokens": n, "cache_write_1h_tokens": n}, {"output_tokens": n},
             {"output_tokens": n, "output_reasoning_tokens": n})[part]
    return {**base, **extra}


@dataclass(frozen=True, slots=True)
class _Rates:
    """What one call and one token of each part cost at one model's prices on one day, tier and band,
    read from the package's own calculation (its decomposition of the parts, its fallbacks: a cache read
    the data does not price is priced as input) on probe usages; prices are linear in the counts within
    a band, so a row is priced as the sum of its parts times these rates."""

    call: Decimal
    uncached: Decimal
    read: Decimal
    write: Decimal
    write_1h: Decimal
    output: Decimal
    reasoning: Decimal

    def cost(self, tok: TokenUsage, calls: int) -> Decimal:
        write_5m = tok.cache_write - tok.cache_write_1h
        uncached = tok.input - tok.cached_input - tok.cache_write
        if min(write_5m, uncached, tok.output - tok.reasoning, tok.cache_write_1h, tok.reasoning) < 0:
            raise ValueError("a part of the usage is larger than its whole")
        return (self.call * calls + self.uncached * uncached + self.read * tok.cached_input
                + self.write * write_5m + self.write_1h * tok.cache_write_1h
                + self.output * (tok.output - tok.reasoning) + self.reasoning * tok.reasoning)


_RATES: dict[tuple[Any, ...], _Rates] = {}
_PRICES: dict[tuple[Any, ...], Any] = {}  # (provider, model, day, tier) -> the price record, or why none
_RATES_MAX = 4096


def _rates(key: tuple[Any, ...], prices: Any, prompt: int) -> _Rates:
    """The rates of ``prices`` for calls whose prompt is ``prompt`` tokens (its band), kept per ``key``."""
    got = _RATES.get((*key, prompt))
    if got is not None:
        return got
    from genai_prices import Usage

    def calc(**kw: int) -> Decimal:
        return Decimal(prices.calc_price(Usage(**kw))["total_price"])

    n = max(prompt, 1)
    call = calc()
    prompt_only, read, write, write_1h, out, reasoning = ((calc(**_probe(n, part)) - call) / n for part in range(6))
    # the input probes are all cache (no uncached input); the output probes carry an uncached prompt
    got = _Rates(call=call, uncached=prompt_only, read=read, write=write, write_1h=write_1h,
                 output=out - prompt_only, reasoning=reasoning - prompt_only)
    if len(_RATES) >= _RATES_MAX:
        _RATES.clear()
    _RATES[(*key, prompt)] = got
    return got


def _banded(key: tuple[Any, ...], prices: Any, row: UsageRow, label: str) -> Decimal | str:
    """The row's cost, each call at the band of its prompt (rule 5), or the reason it cannot be told."""
    starts = _band_starts(prices)
    tok = row.tokens
    if not starts or tok.input <= starts[0]:  # no call's prompt can pass the first band start
        return _rates(key, prices, 1).cost(tok, row.calls)
    bands = row.bands
    if bands is None:
        return (f"{label}: {tok.input:,} prompt tokens in all, and the prompt of each call is not known "
                f"(the price changes past {starts[0]:,} prompt tokens)")
    missing = sorted(set(starts) - set(PROMPT_EDGES))
    if missing:
        return (f"{label}: the price data bands prompts at {', '.join(f'{s:,}' for s in missing)} "
                f"tokens, which the accounting does not split by")
    total = Decimal(0)
    rest, calls = tok, row.calls
    for above, n, part in bands:
        total += _rates(key, prices, above + 1).cost(part, n)
        rest, calls = _minus(rest, part), calls - n
    return total + _rates(key, prices, 1).cost(rest, calls)


def _minus(a: TokenUsage, b: TokenUsage) -> TokenUsage:
    return TokenUsage(input=a.input - b.input, cached_input=a.cached_input - b.cached_input,
                      cache_write=a.cache_write - b.cache_write, output=a.output - b.output,
                      reasoning=a.reasoning - b.reasoning, total=a.total - b.total, source=a.source,
                      cache_write_1h=a.cache_write_1h - b.cache_write_1h)


_LOOKUPS: dict[tuple[str, str | None], tuple[Any, Any] | str] = {}


def _row_cost(snapshot: Any, row: UsageRow, provider: str | None) -> tuple[Decimal, str] | str:
    """(usd, day) of one row, or the reason it has no price."""
    if row.model is None:
        return "the session does not name its model"
    if row.day is None:
        return f"{row.model}: the day of the usage is unknown (prices change over time)"
    label = f"{row.model} on {row.day}"
    when = _when(row.day)
    if when is None:
        return f"{row.model}: unreadable day {row.day!r}"
    found = _LOOKUPS.get((row.model, provider))
    if found is None:
        found = _LOOKUPS[(row.model, provider)] = _lookup(snapshot, row.model, provider)
    if isinstance(found, str):
        return found
    prov, model = found
    if isinstance(model.prices, list) and any(
            c.constraint is not None and not hasattr(c.constraint, "start_date") for c in model.prices):
        return f"{label}: the price depends on the time of day, and usage is kept by day"
    slot = (prov.id, model.id, row.day, row.tier)
    prices = _PRICES.get(slot)
    if prices is None:
        context = _context(model, row.tier, when)
        prices = context if isinstance(context, str) else model.get_prices(when, context)
        if len(_PRICES) >= _RATES_MAX:
            _PRICES.clear()
        _PRICES[slot] = prices
    if isinstance(prices, str):
        return prices
    key = slot
    try:
        cost = _banded(key, prices, row, label)
    except (ValueError, ArithmeticError) as e:  # figures the data rejects (a part larger than its whole)
        return f"{label}: {e}"
    if isinstance(cost, str):
        return cost
    return cost, row.day


def price_row(row: UsageRow, *, provider: str | None = None) -> Price:
    """One usage row priced by the rule (module docstring); ``provider`` the price data's provider id
    ("openai" for Codex, "anthropic" for Claude Code; None lets the data choose by the model name)."""
    return price_rows((row,), provider=provider)


def price_rows(rows: Iterable[UsageRow], *, provider: str | None = None) -> Price:
    """The summed price of ``rows``: ``usd`` None when any row cannot be priced (the reason lists each
    model that could not), or when there is no usage at all."""
    got = _source()
    rows = tuple(rows)
    if isinstance(got, str):
        return Price(None, None, None, got)
    snapshot, source = got
    if not rows:
        return Price(None, source, None, "no usage recorded")
    total = Decimal(0)
    reasons: list[str] = []
    last_day: str | None = None
    for row in rows:
        r = _row_cost(snapshot, row, provider)
        if isinstance(r, str):
            if r not in reasons:
                reasons.append(r)
            continue
        total += r[0]
        last_day = r[1] if last_day is None or r[1] > last_day else last_day
    if reasons:
        return Price(None, source, None, "; ".join(reasons))
    return Price(float(total), source, last_day, None)
