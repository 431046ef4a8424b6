"""The library's entry points: read, search, inspect, iter_items. (Stub: issue #3 fills these in.)"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from os import PathLike

from transcript_reader.model import AnyItem, Format, ReadResult, SearchResult, SessionInfo

PathArg = str | PathLike[str]


def iter_items(path: PathArg, *, format: Format | str | None = None, strict: bool = False) -> Iterator[AnyItem]:
    """Every item of a transcript, in order, streaming (no projection, nothing hidden)."""
    raise NotImplementedError


def read(
    path: PathArg,
    *,
    projection: str = "timeline",
    include: Iterable[str] = (),
    exclude: Iterable[str] = (),
    tail: int | None = None,
    max_items: int | None = None,
    max_chars: int | None = None,
    max_chars_per_item: int | None = None,
    format: Format | str | None = None,
    strict: bool = False,
) -> ReadResult:
    raise NotImplementedError


def search(
    path: PathArg,
    query: str,
    *,
    regex: bool = False,
    kinds: Iterable[str] = (),
    context: int = 0,
    max_matches: int = 25,
    max_chars_per_match: int = 2000,
    format: Format | str | None = None,
    strict: bool = False,
) -> SearchResult:
    raise NotImplementedError


def inspect(path: PathArg, *, format: Format | str | None = None, strict: bool = False) -> SessionInfo:
    raise NotImplementedError
