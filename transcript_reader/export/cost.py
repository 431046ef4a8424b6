"""What a session cost, for the exports that show it (the OTLP session span, the HTML and Markdown
header): one function, so that the price source is asked in one place."""

from __future__ import annotations

from dataclasses import dataclass

from transcript_reader.model import SessionInfo


@dataclass(frozen=True, slots=True)
class Cost:
    """A price in US dollars and the source it came from (name and price date)."""

    usd: float
    source: str


def session_cost(info: SessionInfo | None) -> Cost | None:
    """The session's cost, or None when it cannot be priced (no usage recorded, an unknown model, or no
    price source here): an unknown cost is left out, never shown as 0."""
    return None
