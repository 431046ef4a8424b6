"""Cross-session search: every hit of a query in many transcripts, streamed session by session.

The search itself is in :mod:`.files` (a byte pre-filter, then the full reader on each file that may
hold a hit), its process pool in :mod:`.pool`, what it gives in :mod:`.results`.
"""

from transcript_reader.search.files import compile_query, plan, search_one, search_sessions
from transcript_reader.search.results import Searched, SearchStats, SessionHits

__all__ = ["compile_query", "plan", "search_one", "search_sessions", "Searched", "SearchStats", "SessionHits"]
