"""The homes a listing walks: each provider's home (``$CODEX_HOME``, ``$CLAUDE_CONFIG_DIR``), and which
provider reads a file found in one. Used by ``discovery`` (listing, resolving, id prefixes)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from transcript_reader.errors import UnsupportedFormatError
from transcript_reader.providers import Provider, detect
from transcript_reader.providers import get as get_provider

#: Where each provider's sessions live: provider name -> its home (``$CODEX_HOME``,
#: ``$CLAUDE_CONFIG_DIR``). A home that is None or missing lists nothing.
Homes = Mapping[str, "str | os.PathLike[str] | None"]


def codex() -> Any:
    return get_provider("codex")


def sources(codex_home: str | os.PathLike[str] | None, homes: Homes | None) -> list[tuple[Provider, Path]]:
    """The (provider, home) pairs a listing walks: ``homes`` when given, else the Codex home alone."""
    pairs = homes if homes is not None else {"codex": codex_home}
    return [(get_provider(name), Path(home)) for name, home in pairs.items() if home is not None]


def files(codex_home: str | os.PathLike[str] | None, scope: str,
           homes: Homes | None) -> Iterator[tuple[Provider, str, bool]]:
    for provider, home in sources(codex_home, homes):
        for path, archived in provider.session_files(home, scope):
            yield provider, path, archived


def thread_names(codex_home: str | os.PathLike[str] | None, homes: Homes | None) -> dict[str, str]:
    """The names people gave sessions, by session id, from every home's provider (Codex keeps them in
    ``session_index.jsonl``)."""
    names: dict[str, str] = {}
    for provider, home in sources(codex_home, homes):
        names.update(provider.session_names(home))
    return names


def provider_of(path: Path) -> Provider:
    """The provider whose format ``path`` is in; a file nobody recognises is read by Codex's head reader,
    which says why it is not a session (``format=None`` and ``error``)."""
    try:
        return detect(path)[0]
    except (UnsupportedFormatError, OSError):
        return codex()  # type: ignore[no-any-return]


def where(codex_home: str | os.PathLike[str] | None, homes: Homes | None) -> str:
    """The homes a lookup searched, for messages."""
    return " or ".join(str(h) for _p, h in sources(codex_home, homes)) or "no home"
