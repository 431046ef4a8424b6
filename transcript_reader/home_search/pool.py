"""Cross-session search over several processes: each file's turn (the pre-filter's decision and, when
the file may hold a hit, its reading) runs in a pool of worker processes, the results given in the
order of the files, as a sequential search gives them.

A search for a word most sessions hold reads most files whole, and that reading is the whole cost (one
core: 40 s over a 1 GB home for a frequent word); a first search examines every file lacking the query
for derivation evidence. Files are independent, so both costs divide by the cores. The first file is
searched in this process while the workers start on the next ones, so its hits still stream as they are
found; a later file's hits are handed to ``on_match`` when its reading is done, in file order. At most
``2 x workers`` files are in flight, so memory stays bounded by what those results hold. A result that
cannot come back from a worker (a worker that died) is searched again here, so the pool never changes a
result. The workers are forked (they inherit the search's state: the pre-filter); where forking is not
safe (no ``fork``, or other threads run here: see ``reading.processes``) the search runs in this process.
"""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from transcript_reader.reading.processes import fork_is_safe

if TYPE_CHECKING:
    from transcript_reader.home_search.results import Hit, Searched

Task = Callable[[str, "Callable[[str, Hit], None] | None"], "Searched"]

#: The task a worker runs (set in the parent before the pool forks, inherited by the workers).
_TASK: Task | None = None


def _quiet() -> None:
    """Ctrl-C belongs to the parent, which ends the pool."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(path: str) -> Searched:
    assert _TASK is not None
    return _TASK(path, None)


def run_in_pool(paths: Iterable[str], task: Task, workers: int, *, cancelled: Callable[[], bool] | None = None,
                on_match: Callable[[str, Hit], None] | None = None) -> Iterator[Searched]:
    """``task(path, on_match)`` of each of ``paths``, in order: the first here, the rest in a pool of
    ``workers`` forked processes (``on_match`` called here with their matches, in order)."""
    global _TASK
    todo = iter(paths)

    def live() -> bool:
        return not (cancelled is not None and cancelled())

    first = next(todo, None) if live() else None
    if first is None:
        return
    if not fork_is_safe():
        yield task(first, on_match)
        for path in todo:
            if not live():
                return
            yield task(path, on_match)
        return
    _TASK = task
    pool = multiprocessing.get_context("fork").Pool(workers, initializer=_quiet)
    try:
        window: deque[tuple[str, Any]] = deque()

        def refill() -> None:
            while len(window) < 2 * workers and live():
                nxt = next(todo, None)
                if nxt is None:
                    return
                window.append((nxt, pool.apply_async(_run, (nxt,))))

        refill()
        yield task(first, on_match)
        while window and live():
            path, pending = window.popleft()
            refill()
            try:
                done = pending.get()
            except Exception:  # noqa: BLE001 -- a result lost on the way back: searched here instead
                done = task(path, None)
            if on_match is not None and done.hits is not None:
                for m in done.hits.matches:
                    on_match(path, m)
            yield done
    finally:
        pool.terminate()
        pool.join()
        _TASK = None
