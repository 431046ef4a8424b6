"""transcript-reader: read OpenAI Codex CLI transcripts and tell exactly what the agent did."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transcript_reader.api import follow, inspect, iter_items, read, search
    from transcript_reader.errors import TranscriptError

__all__ = ["read", "search", "inspect", "iter_items", "follow", "TranscriptError"]


def __getattr__(name: str) -> Any:
    """The entry points, imported on first use: ``transcript-reader mcp`` must answer ``initialize``
    before the reader's modules load, and ``import transcript_reader.x`` should not pay for
    the whole library either."""
    if name == "TranscriptError":
        from transcript_reader.errors import TranscriptError

        return TranscriptError
    if name in __all__:
        from transcript_reader import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
