"""The session store's write transactions, in one place: every writer (a session's rows, removals, the
schema, prices, census figures) takes the write lock the same way and never leaves half a change.

It imports nothing of the package, so every store module can use it without an import cycle.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


@contextlib.contextmanager
def write_transaction(con: sqlite3.Connection) -> Iterator[None]:
    """One write transaction: ``BEGIN IMMEDIATE`` takes the write lock at once (a busy store fails here,
    before any work), the block's changes are committed when it ends, and rolled back on any exception,
    Ctrl-C included: the store never keeps half of a change."""
    con.execute("BEGIN IMMEDIATE")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # the first error is the one to tell
                con.execute("ROLLBACK")
        raise
