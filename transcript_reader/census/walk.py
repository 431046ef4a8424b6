"""Find transcript files under the census targets and cut them into batches of work.

Batches are what a worker (a local process or a Dask task) receives. They are sized by count and by
bytes, and the files are dealt largest first so the slowest file starts first (longest-processing-time
scheduling keeps two workers busy to the end). The figures do not depend on the batching at all
(see figures.py), only the wall time does.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

#: What the census reads. ``.json`` is the TypeScript CLI's single-document rollout.
SUFFIXES = (".jsonl", ".jsonl.zst", ".json")


@dataclass(frozen=True, slots=True)
class FileJob:
    path: str
    size: int


def is_transcript_name(name: str) -> bool:
    return name.endswith(SUFFIXES)


def iter_transcripts(
    targets: Iterable[str | os.PathLike[str]], *, duplicates: list[tuple[str, str]] | None = None
) -> Iterator[FileJob]:
    """Every transcript file under the targets (a file target is taken as given, whatever its name),
    each file once, in a stable order.

    "Once" is per file, not per spelling (a census of a folder and of its symlink counted it twice):
    the same file reached through ``..``, a symlinked directory or file, a hard link, or named twice on
    the command line is kept under the first spelling met. Identity is ``(st_dev, st_ino)`` of the file the path resolves to, and its real path when it
    cannot be stat'ed (the worker then reports the library's typed error for it, once). Each skipped
    spelling is appended to ``duplicates`` as ``(skipped path, kept path)`` when a list is given, so
    the census can say how many it left out."""
    seen: dict[object, str] = {}
    for target in targets:
        root = Path(target)
        if root.is_dir():
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames.sort()
                for name in sorted(filenames):
                    if is_transcript_name(name):
                        yield from _job(os.path.join(dirpath, name), seen, duplicates)
        else:
            yield from _job(str(root), seen, duplicates)


def _job(path: str, seen: dict[object, str], duplicates: list[tuple[str, str]] | None) -> Iterator[FileJob]:
    key: object
    try:
        st = os.stat(path)
        key, size = (st.st_dev, st.st_ino), st.st_size
    except OSError:
        key, size = os.path.realpath(path), 0  # the worker reports the error through the library
    kept = seen.get(key)
    if kept is not None:
        if duplicates is not None:
            duplicates.append((path, kept))
        return
    seen[key] = path
    yield FileJob(path, size)


def plan_batches(jobs: Iterable[FileJob], *, max_files: int = 16, max_bytes: int = 8 << 20) -> list[list[FileJob]]:
    """Cut the jobs into batches, largest files first; a file bigger than ``max_bytes`` is a batch alone."""
    ordered = sorted(jobs, key=lambda j: (-j.size, j.path))
    batches: list[list[FileJob]] = []
    current: list[FileJob] = []
    current_bytes = 0
    for job in ordered:
        if current and (len(current) >= max_files or current_bytes + job.size > max_bytes):
            batches.append(current)
            current, current_bytes = [], 0
        current.append(job)
        current_bytes += job.size
    if current:
        batches.append(current)
    return batches
