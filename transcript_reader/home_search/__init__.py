"""Cross-session search: every hit of a query in many transcripts, streamed session by session, each
file's hits exactly those :func:`transcript_reader.api.search` gives for it (context 0).

Given the session store's connections (``stores``), the sessions it holds as they are now are answered
from it (:mod:`.stored`: its full-text index, then the exact match on the stored text) and only the
others are read; without them, or for a query the store's text cannot answer, every file goes through
:mod:`.files` (a byte pre-filter, then the full reader; several processes with ``workers``). The pool is
in :mod:`.pool`, what a search gives in :mod:`.results`, the query in :mod:`.query`, the index's case
folding in :mod:`.fold`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from transcript_reader.home_search.query import check_limits, compile_query, wanted_kinds
from transcript_reader.home_search.results import Hit, SearchStats, SessionHits, StoredItem, item_dict


def search_sessions(paths: Iterable[str], query: str, *, regex: bool = False, kinds: Iterable[str] = (),
                    max_matches: int = 5, max_chars_per_match: int = 300, count_all: bool = True,
                    stores: Sequence[sqlite3.Connection] = (), stats: SearchStats | None = None,
                    progress: Callable[[], None] | None = None, cancelled: Callable[[], bool] | None = None,
                    on_match: Callable[[str, Hit], None] | None = None, workers: int = 1) -> Iterator[SessionHits]:
    """The hits of ``query`` in each of ``paths`` that has any (or an error), in the order given, each
    session as soon as it is searched; ``on_match`` (when given) sees each match kept, a file's as soon
    as it is found. ``stats`` (when given) is filled in as the search goes; ``cancelled`` (when given)
    is asked before each session and ends the search when it says so. ``stores``: the session store's
    read connections (see the module's docstring); ``workers`` > 1 reads files in that many processes
    when no store answers."""
    from transcript_reader.home_search.stored import search_stored, usable_query

    st = stats if stats is not None else SearchStats("read")
    if not stores or not usable_query(query):
        from transcript_reader.home_search.files import search_sessions as search_files

        yield from search_files(paths, query, regex=regex, kinds=kinds, max_matches=max_matches,
                                max_chars_per_match=max_chars_per_match, count_all=count_all, stats=st,
                                progress=progress, cancelled=cancelled, on_match=on_match, workers=workers)
        return
    pattern = compile_query(query, regex)
    check_limits(max_matches=max_matches, max_chars_per_match=max_chars_per_match)
    wanted = wanted_kinds(kinds)
    needles: list[Any] = []

    def read_file(path: str, prefilter: bool) -> SessionHits | None:
        """A session the store cannot answer: the reader's hits (after the byte pre-filter, if asked;
        it is built on the first such file: most searches from the store read none)."""
        from transcript_reader.home_search.files import search_one
        from transcript_reader.home_search.scan import may_hold, query_needle

        if not needles:
            needles.append(None if regex else query_needle(query, wanted))
        if prefilter and needles[0] is not None and not may_hold(path, needles[0]):
            return None
        return search_one(path, pattern, wanted, max_matches=max_matches, max_chars_per_match=max_chars_per_match,
                          count_all=count_all, on_match=on_match)

    yield from search_stored(stores, paths, pattern, query, regex=regex, wanted=wanted, max_matches=max_matches,
                             max_chars_per_match=max_chars_per_match, count_all=count_all, stats=st,
                             read_file=read_file, progress=progress, cancelled=cancelled, on_match=on_match)


__all__ = ["compile_query", "search_sessions", "Hit", "SearchStats", "SessionHits", "StoredItem", "item_dict"]
