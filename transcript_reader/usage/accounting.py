"""The one owner of token accounting: the usage events a session's lines carry, summed into what the
session spent, by model, day and service tier.

The rule (docs/usage.md says the same, with the lines that forced each clause):

1. **Sum the per-call usage.** Each usage event reports one model call (Codex ``last_token_usage``, a
   Claude Code API message, an exec stream's turn); the session's usage is their sum. A session whose
   lines carry no usage event has unknown usage (``None``), never 0.
2. **A running total that did not move is a re-emission**, not new usage: Codex writes the same
   ``token_count`` again (0.50 after each ``turn_context``), and an event whose ``total_token_usage``
   equals the previous one adds nothing. An event with a key already counted (a Claude Code message
   over several lines) adds nothing either.
3. **A running total that drops is a reset** (a session resumed into the same file starts a new
   counter): the usage after it counts, so the sum over a resumed file is both runs' usage, never the
   last counter alone (0.40/0.50 ``two_turns_resume``: 8,534 by the last counter, 16,787 by the rule).
4. **A fork's replayed parent usage is not the child's**: usage events inside history copied from
   another session (a replayed ``session_meta`` up to the fork's hand-off marker, or, for a fork with no
   marker, the events written in the same instant as the copied header) are counted as replayed and left
   out.
5. **Cached input is part of input**, and cache writes too (``cached_input`` and ``cache_write`` are the
   parts of ``input`` read from and written to a prompt cache, kept apart because they are priced apart;
   ``cache_write_1h``, the part of the writes kept an hour, is priced apart again).
6. **Reasoning is part of output** (``reasoning`` is the part of ``output`` spent reasoning); an era
   whose total counts reasoning apart has it folded into output when it is read
   (``providers/codex/tokens.py``).
7. **Usage goes to the model that spent it**: the model the event names, else the model of the turn
   (``turn_context``) it was written in, else the session's model; a model that changes mid-session
   splits the session's usage by model.
8. An event that gives only a running total (no per-call figure) counts the difference from the
   previous total, or, after a reset, the new total.
9. **Prompt sizes are kept by band**: a row also keeps apart the calls whose prompt (``input``) passed each
   edge of ``PROMPT_EDGES``: ``UsageRow.bands`` holds ``(above, calls, tokens)`` for the calls whose prompt
   was larger than ``above`` and not larger than the next edge (the calls under the first edge are the
   rest of the row), because some prices change with each call's prompt size and a sum cannot tell; a
   row that holds a figure summing several calls (an exec stream's summary, a running-total difference)
   has ``bands`` None (not known).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

from transcript_reader.model import TokenUsage, UsageRow

#: ``source`` of a session figure summed by the rule.
SUMMED = "sum of per-call usage"

#: Prompt sizes (input tokens of one call) at which the bundled price data of the models these
#: transcripts run (OpenAI, Anthropic) changes band; ``tests/test_usage_pricing.py`` checks the data
#: has no other, and the pricing says "not known" for an edge missing here.
PROMPT_EDGES = (100_000, 128_000, 200_000, 256_000, 272_000, 512_000)

#: Keys of counted calls kept at most (a Claude Code message's copies follow it closely).
MAX_KEYS = 4096

_FIELDS = ("input", "cached_input", "cache_write", "output", "reasoning", "total", "cache_write_1h")


#: ``source`` of calls read as the difference of successive running totals (no per-call figure given).
DELTAS = "running-total differences"


def _vector(t: TokenUsage) -> tuple[int, int, int, int, int, int, int]:
    return (t.input, t.cached_input, t.cache_write, t.output, t.reasoning, t.total, t.cache_write_1h)


def _delta(now: TokenUsage, before: TokenUsage | None) -> TokenUsage:
    a, b = _vector(now), _vector(before) if before is not None else (0,) * 7
    i, c, w, o, r, t, h = (max(0, x - y) for x, y in zip(a, b, strict=True))
    return TokenUsage(input=i, cached_input=c, cache_write=w, output=o, reasoning=r, total=t, source=DELTAS,
                      cache_write_1h=h)


@dataclass(slots=True)
class Tally:
    """What the accounting saw besides the sums: calls counted, re-emissions and replayed events left out,
    resets crossed."""

    calls: int = 0
    reemitted: int = 0
    resets: int = 0
    replayed: int = 0


class Accountant:
    """Applies the rule to one session's usage events, in line order."""

    __slots__ = ("_running", "_keys", "_rows", "_bands", "tally", "model", "tier", "_source")

    def __init__(self) -> None:
        self._running: TokenUsage | None = None
        self._keys: OrderedDict[str, None] = OrderedDict()
        # (model, day, tier) -> [calls, input, cached_input, cache_write, output, reasoning, total, cache_write_1h]
        self._rows: dict[tuple[str | None, str | None, str | None], list[int]] = {}
        # row key -> {edge: [calls, sums...]}, or None once the row holds a figure of several calls
        self._bands: dict[tuple[str | None, str | None, str | None], dict[int, list[int]] | None] = {}
        self.tally = Tally()
        self.model: str | None = None  # the model of the turn being read
        self.tier: str | None = None
        self._source: str | None = None

    def add(self, call: TokenUsage | None, running: TokenUsage | None = None, *, key: str | None = None,
            model: str | None = None, tier: str | None = None, timestamp: str | None = None,
            replayed: bool = False, per_call: bool = True) -> bool:
        """One usage event; True when it counted as new usage (the rule, in the module docstring)."""
        if key is not None:
            if key in self._keys:
                self.tally.reemitted += 1
                return False
            if len(self._keys) >= MAX_KEYS:
                self._keys.popitem(last=False)
            self._keys[key] = None
        if running is not None:
            before = self._running
            if before is not None and _vector(running) == _vector(before):
                self.tally.reemitted += 1
                return False
            reset = before is not None and running.total < before.total
            if reset:
                self.tally.resets += 1
            self._running = running
            if call is None:
                call = _delta(running, None if reset else before)
                per_call = False
        if call is None:
            return False
        if replayed:
            self.tally.replayed += 1
            return False
        self.tally.calls += 1
        if self._source is None:
            self._source = call.source
        k = (model or self.model, timestamp[:10] if timestamp and len(timestamp) >= 10 else None, tier or self.tier)
        row = self._rows.get(k)
        if row is None:
            row = self._rows[k] = [0] * 8
            self._bands[k] = {}
        row[0] += 1
        for i, v in enumerate(_vector(call), 1):
            row[i] += v
        bands = self._bands[k]
        if not per_call:
            self._bands[k] = None
        elif bands is not None:
            edge = max((e for e in PROMPT_EDGES if call.input > e), default=None)
            if edge is not None:
                band = bands.setdefault(edge, [0] * 8)
                band[0] += 1
                for i, v in enumerate(_vector(call), 1):
                    band[i] += v
        return True

    def add_total(self, usage: TokenUsage, *, model: str | None = None, timestamp: str | None = None) -> None:
        """A figure its producer already summed over the whole session (an exec stream's summary: the sum
        of its ``turn.completed`` usage): counted as it stands, once."""
        self._source = self._source or usage.source
        self.add(usage, model=model, timestamp=timestamp, per_call=False)

    def rows(self) -> tuple[UsageRow, ...]:
        """The usage by (model, day, tier), in the order first spent."""
        return tuple(
            UsageRow(model=m, day=d, tier=t, calls=r[0], tokens=_tokens(r),
                     bands=None if (b := self._bands[(m, d, t)]) is None else tuple(
                         (e, v[0], _tokens(v)) for e, v in sorted(b.items())))
            for (m, d, t), r in self._rows.items())

    def total(self) -> TokenUsage | None:
        """The session's usage, None when no line carried any (unknown, never 0)."""
        if not self._rows:
            return None
        return sum_tokens((r.tokens for r in self.rows()), source=self.source())

    def source(self) -> str:
        """How the figure was read: the rule over the per-call figures the lines gave."""
        src = self._source
        if not src or src == "unknown":
            return SUMMED
        return src if src.startswith("sum of") else f"sum of {src}"


def _tokens(r: list[int]) -> TokenUsage:
    return TokenUsage(input=r[1], cached_input=r[2], cache_write=r[3], output=r[4], reasoning=r[5], total=r[6],
                      cache_write_1h=r[7], source=SUMMED)


def sum_tokens(figures: object, source: str = SUMMED) -> TokenUsage | None:
    """The field-by-field sum of ``figures`` (an iterable of ``TokenUsage``); None when there is none."""
    acc = [0] * 7
    seen = False
    for t in figures:  # type: ignore[attr-defined]
        seen = True
        for i, v in enumerate(_vector(t)):
            acc[i] += v
    if not seen:
        return None
    i, c, w, o, r, t, h = acc
    return TokenUsage(input=i, cached_input=c, cache_write=w, output=o, reasoning=r, total=t, cache_write_1h=h,
                      source=source)
