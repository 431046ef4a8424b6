"""How worker processes are started: forked only from a process that runs no other thread.

A fork copies every lock as it is at that instant, held or not, but only the thread that forked: a
lock another thread held (the module lock of an import in progress, a library's mutex) stays held in
the child for ever, and the child's first use of it waits for ever. ``browse`` reads a session in a
worker thread (importing the V8 binding, the price tables) while its list refreshes the session store
in a pool, which is exactly that. So a process that runs other threads starts its workers from a fork
server (a fresh interpreter that forks clean children), or spawns them where there is none.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Sequence
from typing import Any


def fork_is_safe() -> bool:
    """True when workers may be forked from this process: ``fork`` exists here and no other thread runs."""
    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def worker_context(preload: Sequence[str] = ()) -> Any:
    """A multiprocessing context for a pool whose task and arguments can be pickled: ``fork`` when it is
    safe (the workers start at once and share the parent's imports); otherwise a fork server that has
    imported ``preload`` once (each worker then starts in milliseconds); ``spawn`` where there is none."""
    if fork_is_safe():
        return multiprocessing.get_context("fork")
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        if preload:
            ctx.set_forkserver_preload(list(preload))
        return ctx
    return multiprocessing.get_context("spawn")
