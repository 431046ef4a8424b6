"""The usage of one session, for a caller that wants the figure without the timeline (the exporters'
spans, the shared page): a whole read's :class:`~transcript_reader.model.SessionInfo`, its usage fields."""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike

from transcript_reader.model import TokenUsage, UsageRow


@dataclass(frozen=True, slots=True)
class SessionUsage:
    """A session's summed usage (None: the file records none) and the same by model, day and tier."""

    tokens: TokenUsage | None
    rows: tuple[UsageRow, ...]


def usage_of(path: str | PathLike[str]) -> SessionUsage:
    """The usage of the session at ``path``, by the rule of :mod:`transcript_reader.usage.accounting`."""
    from transcript_reader import api  # the read functions stand above this package's accounting

    info = api.inspect(path)
    return SessionUsage(tokens=info.tokens, rows=info.usage)
