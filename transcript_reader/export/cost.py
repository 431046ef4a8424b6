"""What a session cost, for the exports that show it (the OTLP session span, the HTML and Markdown
header): one function, so that the price source is asked in one place (:mod:`transcript_reader.usage.pricing`,
the rule in its docstring)."""

from __future__ import annotations

from transcript_reader.model import SessionInfo
from transcript_reader.usage.pricing import Price, price_session

__all__ = ["Price", "session_cost"]


def session_cost(info: SessionInfo | None) -> Price:
    """The session's cost with its source and price date; ``usd`` None with the reason when it cannot be
    priced (no usage recorded, an unknown model, a tier or day without a price): an unknown cost is said,
    never shown as 0."""
    return price_session(info)
