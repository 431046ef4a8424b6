"""Opening files safely where a listing may meet anything: a FIFO, a directory, a file swapped under us;
and the small JSON caches kept beside them (``JsonCache``: the tail's line numbers, the search scan's
evidence)."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO


def open_regular(path: str | os.PathLike[str]) -> BinaryIO | None:
    """Open ``path`` for reading only if it is a regular file; None when it is missing, unreadable or
    anything else (a FIFO named ``session_index.jsonl`` blocked ``ls`` forever in ``open``, a
    directory of that name raised IsADirectoryError). The mode is checked with ``stat`` before the open
    and with ``fstat`` after it (the name may be swapped in between); ``O_NONBLOCK`` keeps the open itself
    from waiting for a writer should a FIFO slip through."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        return os.fdopen(fd, "rb")
    except OSError:
        os.close(fd)
        return None


def load_json(path: str | os.PathLike[str]) -> object:
    """The JSON document a cache file holds, or None when it is missing, not a regular file or not JSON
    (a cache only ever costs speed)."""
    import orjson

    fh = open_regular(path)
    if fh is None:
        return None
    try:
        with fh:
            return orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError):
        return None


def save_json(path: str | os.PathLike[str], doc: object) -> bool:
    """Write ``doc`` to ``path`` atomically (a concurrent reader never sees half a file, and two writers,
    threads of one process included, each write their own temporary file); False when it could not be
    written (a cache only ever costs speed)."""
    import tempfile

    import orjson

    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(orjson.dumps(doc))
            os.replace(tmp, p)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True
    except OSError:
        return False


class JsonCache:
    """A cache kept as one small JSON file ``{"version": VERSION, KEY: {name: entry}}``: entries are read
    when the file holds this version (anything else, a missing, foreign or broken file, starts empty),
    written back by :meth:`save` only when changed. ``path`` None keeps it in memory only. Subclasses say
    what an entry is and when it is still valid."""

    VERSION = 1
    #: The member of the document that holds the entries.
    KEY = "files"

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, Any] = {}
        self._dirty = False
        if self.path is not None:
            data = load_json(self.path)
            if isinstance(data, dict) and data.get("version") == self.VERSION and isinstance(data.get(self.KEY), dict):
                self._entries = data[self.KEY]

    def save(self) -> None:
        """Write the cache if it changed (atomically; a failure to write only costs speed)."""
        if self.path is not None and self._dirty and save_json(self.path, {"version": self.VERSION,
                                                                           self.KEY: self._entries}):
            self._dirty = False
