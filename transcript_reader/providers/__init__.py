"""Providers: the edge of the library, where an agent's wire formats are read. The only code that reads
raw transcript keys lives in a provider package (``providers/codex/`` today); everything downstream
(assembly, projections, presentation) sees decode records (``providers.records``) and model items.

The contract a provider keeps (:class:`Provider`), and why:

- ``name``: a short lower-case id (``"codex"``), the value of ``--provider`` and of the MCP tools'
  ``provider`` argument.
- ``formats``: the :class:`~transcript_reader.model.Format` values it owns. A format belongs to exactly
  one provider (the registry refuses a second owner), so a file's format names its provider.
- ``sniff(path)``: the format of ``path`` when this provider recognises it, else ``None``. It reads a
  bounded prefix only (a few dozen lines; a huge line by its head) and decides by a vote over those
  lines (one stray line of another shape never decides a file). It never raises on content; I/O errors
  (``OSError``, the typed errors of ``transcript_reader.reading.source``) propagate.
- ``decode(path, fmt, stream=None)``: every line of the file as one :class:`~providers.records.Decoded`,
  in order, each line read by its own shape (a file that mixes shapes loses no well-formed line).
  ``stream`` supplies the lines of a file being followed; ``caps`` bounds the reading (the longest line
  decoded, the most bytes decompressed: ``source.ReadCaps``). Each physical line gives exactly one
  ``Decoded`` (the line accounting is total); one bad line costs one line.
- ``read_head(path)``: a ``SessionHead`` from a bounded prefix (id, start time, cwd, model, version,
  source, parent links, the first real prompt as title). It reads the session header with the same
  decoder the full read uses, so ``ls`` and ``inspect`` cannot disagree on those facts. Never raises on
  content (``format=None`` and ``error`` instead).
- ``read_tail(path)``: a ``SessionTail`` (the last timestamp and the last cumulative token usage) from
  a bounded suffix, with the same token-usage reader the full read uses.
- ``session_files(home, scope)``: ``(path, archived)`` for every session file under one of the
  provider's homes, the path as a ``str`` (a listing of 10,000 files spent a fifth of its time building
  ``Path`` objects it only printed) (``$CODEX_HOME`` for Codex, ``$CLAUDE_CONFIG_DIR`` for Claude Code); the caller
  passes the home: the library never reads the environment.
- ``session_id_from_name(name)``: the session id a file name carries, if any (resolving an id prefix
  and shortening ids in a listing need no file opened); ``session_time_from_name(name)``: the start
  time a file name carries, if any (a row whose header has no timestamp still sorts by time).
- ``session_names(home)``: the names a person gave sessions under ``home``, by session id (Codex's
  ``session_index.jsonl``; ``{}`` for a provider that keeps none).

Adding a provider: a package ``providers/<name>/`` with a module-level ``PROVIDER`` object, one
entry in :data:`REGISTRY`, its ``Format`` values in ``model.Format``, fixtures and tests. Nothing else
in the library changes: the assembler, projections and presentation work from decode records.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from transcript_reader.errors import InvalidArgumentError, UnsupportedFormatError
from transcript_reader.model import Format

if TYPE_CHECKING:
    from transcript_reader.providers.head import SessionHead, SessionTail
    from transcript_reader.providers.records import Decoded
    from transcript_reader.reading.source import Readable, ReadCaps, Skipped


class Scope:
    """Which sessions of a home a listing covers."""

    LIVE = "live"
    ARCHIVED = "archived"
    ALL = "all"


@runtime_checkable
class Provider(Protocol):
    """One agent's transcripts: detection, decoding, session heads and tails, and where they live."""

    name: str
    formats: tuple[Format, ...]

    def sniff(self, path: Readable) -> Format | None: ...

    def decode(self, path: Readable, fmt: Format, stream: Iterable[bytes | Skipped] | None = None,
               caps: ReadCaps | None = None) -> Iterator[Decoded]: ...

    def read_head(self, path: Readable) -> SessionHead: ...

    def read_tail(self, path: Readable) -> SessionTail: ...

    def session_files(self, home: Path, scope: str) -> Iterator[tuple[str, bool]]: ...

    def session_id_from_name(self, name: str) -> str | None: ...

    def session_time_from_name(self, name: str) -> datetime | None: ...

    def session_names(self, home: Path) -> dict[str, str]: ...


#: Provider name -> the module that defines its ``PROVIDER``, in detection order (imported on first use,
#: so that reading a Codex file never imports another provider's code).
REGISTRY: dict[str, str] = {
    "codex": "transcript_reader.providers.codex",
    "claude": "transcript_reader.providers.claude",
}

_loaded: dict[str, Provider] = {}


def get(name: str) -> Provider:
    """The provider called ``name``; ``InvalidArgumentError`` naming the known ones otherwise."""
    p = _loaded.get(name)
    if p is not None:
        return p
    module = REGISTRY.get(name)
    if module is None:
        raise InvalidArgumentError(f"unknown provider {name!r} (known: {', '.join(REGISTRY)})")
    p = importlib.import_module(module).PROVIDER
    owners = {f: q.name for q in _loaded.values() for f in q.formats}
    clash = [f.value for f in p.formats if owners.get(f, p.name) != p.name]
    if clash:
        raise RuntimeError(f"provider {name!r} claims formats another provider owns: {clash}")
    _loaded[name] = p
    return p


def all_providers() -> list[Provider]:
    """Every registered provider, in detection order."""
    return [get(name) for name in REGISTRY]


_owner: dict[Format, Provider] = {}


def for_format(fmt: Format) -> Provider:
    """The provider that owns ``fmt`` (remembered: ``ls`` asks once per row, 10,000 times)."""
    p = _owner.get(fmt)
    if p is not None:
        return p
    for p in all_providers():
        if fmt in p.formats:
            _owner[fmt] = p
            return p
    raise InvalidArgumentError(f"no provider reads the format {fmt.value!r}")


def detect(path: Readable, provider: str | None = None) -> tuple[Provider, Format]:
    """The provider and format of ``path`` (``provider`` restricts the search to one). Raises
    ``UnsupportedFormatError`` when no provider recognises the file (or not the one asked for)."""
    candidates = [get(provider)] if provider is not None else all_providers()
    for p in candidates:
        fmt = p.sniff(path)
        if fmt is not None:
            return p, fmt
    which = provider if provider is not None else " or ".join(REGISTRY)
    raise UnsupportedFormatError(f"not a {which} transcript in any known format", path=str(path))


def sniff_format(path: Readable) -> Format:
    """The format of ``path`` (``UnsupportedFormatError`` when no provider recognises it)."""
    return detect(path)[1]


__all__ = ["Provider", "Scope", "sniff_format", "REGISTRY", "get", "all_providers", "for_format", "detect"]


def output_body(text: str) -> str:
    """A raw output's text without the envelope the agent wrapped it in (Codex's ``Chunk ID``, ``Wall
    time``, ``Process exited with code``, ``Original token count``, ``Output:`` lines, or its JSON
    ``{"output", "metadata"}``): the same body the reader puts in a command's ``output`` excerpt, so a
    view of the whole raw output and a view of the excerpt show the same text."""
    from transcript_reader.providers.codex.common import parse_output

    return parse_output(text).body
