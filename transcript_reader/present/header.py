"""The header of an exported page (HTML, Markdown): the facts a reader of a shared session wants first,
each said as the transcript knows it (an unknown is "unknown", never 0): the model, the tokens, the
cost, the files changed, the tests, and, for a redacted export, what was redacted (counted, never shown)."""

from __future__ import annotations

from typing import Any

from transcript_reader.model import SessionInfo
from transcript_reader.present.common import Tally


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def tokens_words(tok: Any) -> str:
    """A session's ``TokenUsage`` in words; "unknown" when the file records none (never 0)."""
    if tok is None or tok.source == "unknown":  # None / "unknown": the file records no usage
        return "unknown (the transcript records no usage)"
    return (f"{tok.total:,} (input {tok.input:,}, cached {tok.cached_input:,}, output {tok.output:,}"
            + (f", reasoning {tok.reasoning:,}" if tok.reasoning else "") + ")")


def cost_words(cost: Any) -> str:
    """A ``usage.pricing.Price`` in words: the dollars with their source and price date, or "unknown"
    with the reason (never $0 for a cost not computed)."""
    if cost is None:
        return "unknown"
    if cost.usd is None:
        return f"unknown ({cost.reason})" if cost.reason else "unknown"
    return f"${cost.usd:,.4f} ({cost.source}; prices of {cost.price_date})"


def header_rows(tally: Tally, info: SessionInfo | None, cost: Any = None, redaction: Any = None
                ) -> list[tuple[str, str]]:
    """``(label, value)`` rows; ``cost`` a ``usage.pricing.Price`` or None, ``redaction`` a
    ``export.redact.Summary`` when the export was redacted."""
    rows: list[tuple[str, str]] = []
    rows.append(("Model", ", ".join(info.models) if info is not None and info.models else "unknown"))
    rows.append(("Tokens", tokens_words(info.tokens if info is not None else None)))
    rows.append(("Cost", cost_words(cost)))
    rows.append(("Files changed", str(len(tally.files))))
    runs = tally.runs_passed + tally.runs_failed + tally.runs_other
    if runs:
        bits = [f"{n} {w}" for n, w in ((tally.runs_passed, "passing"), (tally.runs_failed, "failing"),
                                        (tally.runs_other, "without a result")) if n]
        rows.append(("Tests", f"{_plural(runs, 'run')}: {', '.join(bits)}"))
    else:
        rows.append(("Tests", "none run"))
    if redaction is not None:
        rows.append(("Redacted", redaction.words()))
    return rows
