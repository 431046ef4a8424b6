"""The one reader of Codex token usage: every place that turns a usage object into a ``TokenUsage``
(the full read of a rollout, the tail ``ls`` reads, both exec-stream protocols) calls these, so two
views of one session cannot count differently (a ``total_tokens`` left out is ``input + output``
everywhere)."""

from __future__ import annotations

from typing import Any

from transcript_reader.model import TokenUsage

#: ``source`` of a figure read from the last cumulative ``token_count`` of a session.
CUMULATIVE = "last cumulative token_count"


def _count(u: dict[str, Any], key: str) -> int:
    v = u.get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else 0


def usage_from(u: Any, source: str) -> TokenUsage | None:
    """A usage object (``{input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens,
    total_tokens}``, any of them missing) as ``TokenUsage``; None when ``u`` is not an object."""
    if not isinstance(u, dict):
        return None
    total = _count(u, "total_tokens") or (_count(u, "input_tokens") + _count(u, "output_tokens"))
    return TokenUsage(input=_count(u, "input_tokens"), cached_input=_count(u, "cached_input_tokens"),
                      output=_count(u, "output_tokens"), reasoning=_count(u, "reasoning_output_tokens"),
                      total=total, source=source)


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
