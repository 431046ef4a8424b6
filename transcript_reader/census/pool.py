"""The census coordinators: run batches (``census/file.py``) in this process, in a pool of worker
processes that survives a worker's death, or on a Dask cluster, and add their figures up.

Interruption: a worker checks a stop flag between files, so Ctrl-C ends every batch after its current
file and the coordinator still merges what was counted (``Figures.interrupted`` says so).
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Protocol

from transcript_reader.census import file as _file
from transcript_reader.census.figures import Figures, bump
from transcript_reader.census.file import DEFAULT_OPTIONS, BatchResult, CensusOptions, run_batch
from transcript_reader.census.walk import FileJob

# -- coordinators ------------------------------------------------------------------------------------


class WorkersFailedError(RuntimeError):
    """The worker processes cannot run at all (every batch died, also one file at a time)."""


OnBatch = Callable[[BatchResult], None]


class StopFlag(Protocol):
    def is_set(self) -> bool: ...


class StopOnSigint:
    """Ctrl-C as a flag: the first SIGINT asks the census to stop (checked between files and batches,
    so no write or merge is cut in half); a second one raises KeyboardInterrupt as usual. Use it as a
    context manager in the main thread (the CLI does)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._previous: Any = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def _handle(self, signum: int, frame: Any) -> None:
        if self._event.is_set():
            raise KeyboardInterrupt
        self._event.set()

    def __enter__(self) -> StopOnSigint:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGINT, self._previous)


def run_local(
    batches: Iterable[Sequence[FileJob]],
    *,
    workers: int = 1,
    options: CensusOptions = DEFAULT_OPTIONS,
    on_batch: OnBatch | None = None,
    stop: StopFlag | None = None,
    task: Callable[[Sequence[FileJob], CensusOptions], BatchResult] = run_batch,
) -> Figures:
    """Run the census on this machine: in-process for one worker, else a pool of worker processes.

    When ``stop`` is set (or on KeyboardInterrupt) it returns the figures counted so far, marked
    ``interrupted``: running batches end after their current file and are merged.

    A worker process that dies (killed by the kernel for memory, a crash in a C extension) breaks the
    pool: every batch it had not finished is retried in a fresh pool, one file per task; a file that
    fails again is retried alone in a one-worker pool, and if its worker dies there, that file is
    counted under ``errors["worker_died"]`` (sample ``crashes``) instead of ending the census (a file
    that merely shared a pool with it is never blamed). ``task`` exists for that test."""
    total = Figures()
    queue: list[tuple[list[FileJob], int]] = [(list(b), 0) for b in batches]  # (batch, failures)
    if workers <= 1:
        previous, _file._STOP = _file._STOP, stop
        try:
            for batch, _ in queue:
                res = task(batch, options)
                total.merge(res.figures)
                if on_batch:
                    on_batch(res)
                if _file._stopped():
                    total.interrupted = True
                    break
        except KeyboardInterrupt:
            total.interrupted = True
        finally:
            _file._STOP = previous
        return total

    ctx = _worker_context()
    mp_stop = ctx.Event()
    succeeded = 0
    rounds = 0
    while queue and not total.interrupted:
        fresh = [q for q in queue if q[1] == 0]
        suspects = [q for q in queue if q[1] > 0]
        queue = []
        if fresh:
            pool_round = _PoolRound(ctx, workers, mp_stop, task, options, fresh, total, on_batch)
            queue += pool_round.run(stop)
            succeeded += pool_round.succeeded
            rounds += 1
        if rounds >= 2 and not succeeded:
            # Not one batch finished, even file by file: the workers cannot run at all (an import that
            # fails in a fresh process, no memory at all); blaming every file would be a lie.
            raise WorkersFailedError("worker processes died before finishing any batch, twice; "
                                     "try --workers 1 to see the error")
        for suspect in suspects:
            # Alone in its own pool: if the worker dies now, this file (and only it) killed it.
            if total.interrupted:
                break
            queue += _PoolRound(ctx, 1, mp_stop, task, options, [suspect], total, on_batch).run(stop)
    if stop is not None and stop.is_set():
        total.interrupted = True
    return total


def _worker_context() -> Any:
    """Worker processes start from a fork server that has imported the reader and the analyzer once
    (each worker then starts in milliseconds instead of paying the imports again); "spawn" where
    there is no fork server. Never a plain fork: the coordinator runs a progress thread."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["transcript_reader.census.file", "transcript_reader.api", "transcript_reader.assembly",
                                    "exec_grammar"])
        return ctx
    return multiprocessing.get_context("spawn")


class _PoolRound:
    """One process pool over a queue of batches; returns the batches to retry if a worker died."""

    def __init__(self, ctx: Any, workers: int, mp_stop: Any, task: Callable[..., BatchResult],
                 options: CensusOptions, queue: list[tuple[list[FileJob], int]], total: Figures,
                 on_batch: OnBatch | None) -> None:
        self.pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_file.init_worker,
                                        initargs=(mp_stop,))
        self.mp_stop, self.total, self.on_batch = mp_stop, total, on_batch
        self.submitted = {self.pool.submit(task, b, options): (b, failures) for b, failures in queue}
        self.pending: set[Future[BatchResult]] = set(self.submitted)
        self.retry: list[tuple[list[FileJob], int]] = []
        self.succeeded = 0

    def run(self, stop: StopFlag | None) -> list[tuple[list[FileJob], int]]:
        try:
            while self.pending:
                done, self.pending = wait(self.pending, timeout=0.2, return_when=FIRST_COMPLETED)
                self.collect(done)
                if stop is not None and stop.is_set() and self.pending:
                    self.wind_down()
                    break
        except KeyboardInterrupt:
            self.wind_down()
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
        return [] if self.total.interrupted else self.retry

    def collect(self, done: Iterable[Future[BatchResult]]) -> None:
        for fut in done:
            if fut.cancelled():
                continue
            try:
                res = fut.result()
            except BrokenProcessPool:
                batch, failures = self.submitted[fut]
                if len(batch) > 1:
                    self.retry.extend(([job], 0) for job in batch)
                elif failures == 0:
                    self.retry.append((batch, 1))
                else:
                    res = BatchResult(_worker_died(batch[0]), files=1, bytes=batch[0].size)
                    self.total.merge(res.figures)
                    if self.on_batch:
                        self.on_batch(res)
                continue
            self.succeeded += 1
            self.total.merge(res.figures)
            if self.on_batch:
                self.on_batch(res)

    def wind_down(self) -> None:
        # No new batch starts; running ones end after their current file; what they counted is merged.
        self.mp_stop.set()
        self.total.interrupted = True
        for fut in self.pending:
            fut.cancel()
        done, _ = wait(self.pending)
        self.collect(done)


def _worker_died(job: FileJob) -> Figures:
    fig = Figures()
    fig.scalars["files"] = 1
    fig.scalars["bytes"] = job.size
    bump(fig.counters["errors"], "worker_died")
    fig.samples["crashes"].add(job.path, 0)
    return fig


def run_dask(
    batches: Iterable[Sequence[FileJob]],
    address: str,
    *,
    options: CensusOptions = DEFAULT_OPTIONS,
    on_batch: OnBatch | None = None,
    stop: StopFlag | None = None,
) -> Figures:
    """Run the census on a Dask cluster: one task per batch of files. The workers must see the same
    paths (shared or mounted storage) and have this project installed. Stopping cancels the batches
    not yet finished (a Dask task cannot be told to stop after its current file)."""
    from dask.distributed import Client, as_completed

    total = Figures()
    batches = list(batches)
    with Client(address) as client:
        futures = client.map(run_batch, batches, options=options, pure=False)
        try:
            for fut in as_completed(futures):
                res = fut.result()
                total.merge(res.figures)
                if on_batch:
                    on_batch(res)
                if stop is not None and stop.is_set():
                    total.interrupted = True
                    client.cancel(futures)
                    break
        except KeyboardInterrupt:
            total.interrupted = True
            client.cancel(futures)
    return total
