"""Cross-session search by reading the files: what answers when there is no session store (or for the
sessions it does not hold as they are now), streamed session by session.

Each file is first checked at byte level (``search.scan.may_hold``): a file that cannot hold a hit is
skipped without decoding, at close to disk speed. A file that may is read by the full reader, and its
hits are exactly those :func:`transcript_reader.api.search` gives for it (the same items, excerpts and
order): the pre-filter only ever removes files without hits (``tests/test_search.py`` checks it against
the full reader with hypothesis).

A session's matches are capped at ``max_matches``; with ``count_all=False`` its reading stops at the
first match past the cap (the result is then ``truncated`` with ``total`` unknown), which is what a
caller that shows only the first few matches per session needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import takewhile

from transcript_reader.errors import TranscriptError
from transcript_reader.home_search.query import check_limits, compile_query, wanted_kinds
from transcript_reader.home_search.results import Hit, Searched, SearchStats, SessionHits
from transcript_reader.home_search.scan import Needle, may_hold, query_needle


def search_one(path: str, pattern: re.Pattern[str], kinds: frozenset, *, max_matches: int,  # type: ignore[type-arg]
               max_chars_per_match: int, count_all: bool,
               on_match: Callable[[str, Hit], None] | None = None) -> SessionHits:
    """The hits of one file, as ``api.search`` gives them (context 0); ``on_match`` (when given) is
    called with each match kept as soon as it is found, before the file is read to its end."""
    from transcript_reader.api import Transcript
    from transcript_reader.projections import centred_excerpt, search_text

    matches: list[Hit] = []
    total = 0
    try:
        for it in Transcript(path).items():
            if it.kind not in kinds:
                continue
            text = search_text(it)
            m = pattern.search(text)
            if m is None:
                continue
            total += 1
            if len(matches) < max_matches:
                match = Hit(it, centred_excerpt(text, m.start(), m.end(), max_chars_per_match))
                matches.append(match)
                if on_match is not None:
                    on_match(path, match)
            elif not count_all:
                return SessionHits(path, tuple(matches), None, True)
    except TranscriptError as e:
        return SessionHits(path, error=e)
    return SessionHits(path, tuple(matches), total, total > len(matches))


def plan(query: str, *, regex: bool, kinds: Iterable[str] = ()) -> tuple[frozenset, Needle | None]:  # type: ignore[type-arg]
    """The kinds searched and the byte pre-filter of a query (None: every file must be read)."""
    wanted = wanted_kinds(kinds)
    return wanted, (None if regex else query_needle(query, wanted))


def search_sessions(paths: Iterable[str], query: str, *, regex: bool = False, kinds: Iterable[str] = (),
                    max_matches: int = 5, max_chars_per_match: int = 300, count_all: bool = True,
                    stats: SearchStats | None = None, progress: Callable[[], None] | None = None,
                    cancelled: Callable[[], bool] | None = None,
                    on_match: Callable[[str, Hit], None] | None = None,
                    workers: int = 1) -> Iterator[SessionHits]:
    """The hits of ``query`` in each of ``paths`` that has any (or an error), in the order given,
    each as soon as its file is read; ``on_match`` (when given) is called with each match as soon as it
    is found (a caller that shows hits as they come: the first is shown before its file is read
    whole). ``stats`` (when given) is filled in as the search
    goes; ``cancelled`` (when given) is asked before each file and ends the search when it says so.

    ``workers`` > 1 reads the files that may hold a hit in that many processes (``search.pool``): the
    same results in the same order; the first file is still read here, its hits streamed as found,
    while the workers read the next ones, and a later file's hits reach ``on_match`` when its reading
    is done."""
    pattern = compile_query(query, regex)
    check_limits(max_matches=max_matches, max_chars_per_match=max_chars_per_match)
    wanted = wanted_kinds(kinds)
    paths = list(paths)
    st = stats if stats is not None else SearchStats("read")
    needle = None if regex else query_needle(query, wanted)
    st.method = "read" if needle is None else "scan"

    def task(path: str, stream: Callable[[str, Hit], None] | None) -> Searched:
        """Whether ``path`` must be read (the pre-filter decides) and, if so, its hits."""
        read = needle is None or may_hold(path, needle)
        hits = search_one(path, pattern, wanted, max_matches=max_matches, max_chars_per_match=max_chars_per_match,
                          count_all=count_all, on_match=stream) if read else None
        return Searched(path, hits)

    if workers > 1:
        from transcript_reader.home_search.pool import run_in_pool

        results: Iterator[Searched] = run_in_pool(paths, task, workers, cancelled=cancelled, on_match=on_match)
    else:
        results = (task(path, on_match) for path in takewhile(lambda _p: cancelled is None or not cancelled(), paths))
    for done in results:
        st.sessions += 1
        if progress is not None:
            progress()
        res = done.hits
        if res is None:
            st.skipped += 1
            continue
        st.read += 1
        if res.error is not None:
            st.failed += 1
            yield res
        elif res.matches:
            st.hits += len(res.matches)
            yield res
