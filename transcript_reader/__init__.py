"""transcript-reader: read OpenAI Codex CLI transcripts and tell exactly what the agent did."""

from transcript_reader.api import follow, inspect, iter_items, read, search
from transcript_reader.errors import TranscriptError

__all__ = ["read", "search", "inspect", "iter_items", "follow", "TranscriptError"]
