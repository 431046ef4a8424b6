"""Cross-session search over several processes: the files the pre-filter (or the index) lets through
are read by a pool of worker processes, the results given in the order of the files, as a sequential
search gives them.

A search for a word most sessions hold reads most files whole, and that reading is the whole cost (one
core: 40 s over a 1 GB home for a frequent word); files are independent, so the cost divides by the
cores. The first file is read in this process while the workers start on the next ones, so its hits
still stream as they are found (the first hit is not delayed by the pool); a later file's hits are
handed to ``on_match`` when its reading is done, in file order. At most ``2 x workers`` files are in
flight, so memory stays bounded by what those results hold. A result that cannot come back from a
worker (a worker that died) is read again here, so the pool never changes a result.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from transcript_reader.model import SearchMatch
    from transcript_reader.search import SessionHits

Reader = Callable[[str, "Callable[[str, SearchMatch], None] | None"], "SessionHits"]

#: The reader a worker runs (set in the parent before the pool forks, inherited by the workers).
_READER: Reader | None = None


def _quiet() -> None:
    """Ctrl-C belongs to the parent, which ends the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _read(path: str) -> SessionHits:
    assert _READER is not None
    return _READER(path, None)


def _context() -> Any:
    """``fork`` where there is one (the workers inherit the reader and the imports: no start-up cost),
    else ``spawn``."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def read_in_pool(paths: Iterator[str], read: Reader, workers: int, *,
                 cancelled: Callable[[], bool] | None = None,
                 on_match: Callable[[str, SearchMatch], None] | None = None) -> Iterator[SessionHits]:
    """``read(path, on_match)`` of each of ``paths``, in order, the first here and the rest in a pool of
    ``workers`` processes."""
    global _READER
    first = next(paths, None)
    if first is None:
        return
    ctx = _context()
    if ctx.get_start_method() != "fork":  # a spawned worker cannot inherit the reader: read here
        yield read(first, on_match)
        for path in paths:
            yield read(path, on_match)
        return
    _READER = read
    pool = ctx.Pool(workers, initializer=_quiet)
    try:
        window: deque[tuple[str, Any]] = deque()

        def refill() -> None:
            while len(window) < 2 * workers:
                nxt = next(paths, None)
                if nxt is None:
                    return
                window.append((nxt, pool.apply_async(_read, (nxt,))))

        refill()
        yield read(first, on_match)
        while window:
            if cancelled is not None and cancelled():
                return
            path, pending = window.popleft()
            refill()
            try:
                res = pending.get()
            except Exception:  # noqa: BLE001 -- a result lost on the way back: read it here instead
                res = read(path, None)
            if on_match is not None:
                for m in res.matches:
                    on_match(path, m)
            yield res
    finally:
        pool.terminate()
        pool.join()
        _READER = None
