"""The one reader of Codex token usage: every place that turns a usage object into a ``TokenUsage``
(the full read of a rollout, the tail ``ls`` reads, both exec-stream protocols) calls these, so two
views of one session cannot count differently (a ``total_tokens`` left out is ``input + output``
everywhere).

What a figure means, by era (the accounting over them is :mod:`transcript_reader.usage`'s):

- ``token_count`` with ``info`` (0.40+): ``last_token_usage`` is the call the line reports,
  ``total_token_usage`` the session's running total. The same event is written again with the same
  total (0.50 writes one after each ``turn_context``): a re-emission the accounting skips.
- ``token_count`` with flat fields (0.20/0.29 exec streams): the usage of one request.
- ``input_tokens`` includes ``cached_input_tokens`` in every era; ``output_tokens`` includes
  ``reasoning_output_tokens`` when ``total_tokens == input + output`` (every recorded era). A figure
  whose total is ``input + output + reasoning`` counts the reasoning apart, and it is folded into
  ``output`` here so every era reads alike."""

from __future__ import annotations

from typing import Any

from transcript_reader.model import TokenUsage
from transcript_reader.providers.records import UsageEvent

#: ``source`` of a figure read from the last cumulative ``token_count`` of a session.
CUMULATIVE = "last cumulative token_count"
#: ``source`` of a per-call figure (``last_token_usage``, or a flat per-request count).
PER_CALL = "per-call token_count usage"


def _count(u: dict[str, Any], key: str) -> int:
    v = u.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def usage_from(u: Any, source: str) -> TokenUsage | None:
    """A usage object (``{input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens,
    total_tokens}``, any of them missing) as ``TokenUsage``; None when ``u`` is not an object."""
    if not isinstance(u, dict):
        return None
    inp, out, reasoning = _count(u, "input_tokens"), _count(u, "output_tokens"), _count(u, "reasoning_output_tokens")
    total = _count(u, "total_tokens") or (inp + out)
    if reasoning and total == inp + out + reasoning:
        out += reasoning  # reasoning counted apart from output: folded in (see the module docstring)
    return TokenUsage(input=inp, cached_input=_count(u, "cached_input_tokens"), output=out, reasoning=reasoning,
                      total=total, source=source, cache_write=_count(u, "cache_write_input_tokens"))


def token_count_usage(p: Any) -> TokenUsage | None:
    """The cumulative usage a ``token_count`` event payload carries: ``info.total_token_usage``, or the
    flat fields of the earliest builds. None for ``"info": null`` (no figure on that line)."""
    if not isinstance(p, dict):
        return None
    info = p.get("info")
    usage = usage_from(info.get("total_token_usage"), CUMULATIVE) if isinstance(info, dict) else None
    if usage is None and "input_tokens" in p:  # very early builds: flat fields
        usage = usage_from(p, CUMULATIVE)
    return usage


def token_count_event(p: Any) -> UsageEvent | None:
    """A ``token_count`` payload as the usage event it reports: the call (``last_token_usage``; the flat
    fields of the earliest builds, one request each) and the running total (``total_token_usage``).
    None for ``"info": null`` (no figure on that line)."""
    if not isinstance(p, dict):
        return None
    info = p.get("info")
    if isinstance(info, dict):
        running = usage_from(info.get("total_token_usage"), CUMULATIVE)
        call = usage_from(info.get("last_token_usage"), PER_CALL)
        if running is None and call is None:
            return None
        return UsageEvent(call=call, running=running)
    if "input_tokens" in p:
        return UsageEvent(call=usage_from(p, PER_CALL))
    return None


def add_usage(into: list[int], u: dict[str, Any]) -> None:
    """Add one usage object to the running sums ``[input, cached, output, reasoning, total]`` (exec
    streams sum per-turn and per-request figures)."""
    t = usage_from(u, "")
    assert t is not None
    add_tokens(into, t)


def add_tokens(into: list[int], t: TokenUsage) -> None:
    """Add one read figure to the running sums ``[input, cached, output, reasoning, total]``."""
    for idx, value in enumerate((t.input, t.cached_input, t.output, t.reasoning, t.total)):
        into[idx] += value
