"""The Claude Code provider: session files under ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude``),
and the CLI's ``--output-format stream-json`` output, read into the same decode records as Codex.

Modules, one job each: ``sniff`` (is a file Claude Code's, and which format: a vote over its first lines),
``lines`` (every line to the decoder of its shape), ``decode`` (a session file's lines as decode records),
``stream`` (a stream-json output's events), ``tools`` (what each tool's call and result become),
``sessions`` (where sessions live, and a listing's head and tail of either format).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transcript_reader.model import Format

if TYPE_CHECKING:
    from datetime import datetime

    from transcript_reader.providers.head import SessionHead, SessionTail
    from transcript_reader.providers.records import Decoded
    from transcript_reader.reading.source import Readable, ReadCaps, Skipped


def is_claude_line(obj: Any) -> bool:
    from transcript_reader.providers.claude.sniff import is_claude_line as check

    return check(obj)


class ClaudeProvider:
    name = "claude"
    formats: tuple[Format, ...] = (Format.CLAUDE, Format.CLAUDE_STREAM)

    def sniff(self, path: Readable) -> Format | None:
        from transcript_reader.providers.claude.sniff import sniff

        return sniff(path)

    def decode(self, path: Readable, fmt: Format, stream: Iterable[bytes | Skipped] | None = None,
               caps: ReadCaps | None = None) -> Iterator[Decoded]:
        from transcript_reader.providers.claude.lines import iter_decoded

        return iter_decoded(path, fmt, stream, caps)

    def read_head(self, path: Readable) -> SessionHead:
        """The head of either format: the format is told by the file, as a full read tells it."""
        from transcript_reader.providers.claude.sessions import read_head

        return read_head(path)

    def read_tail(self, path: Readable) -> SessionTail:
        from transcript_reader.providers.claude.sessions import read_tail

        return read_tail(path)

    def session_files(self, home: Path, scope: str) -> Iterator[tuple[str, bool]]:
        """Claude Code keeps no archive: every session is live (an archived-only listing is empty)."""
        from transcript_reader.providers.claude.sessions import iter_session_files

        if scope == "archived":
            return iter(())
        return ((str(p), False) for p in iter_session_files(home))

    def session_id_from_name(self, name: str) -> str | None:
        from transcript_reader.providers.claude.sessions import session_id_from_name

        return session_id_from_name(name)

    def session_time_from_name(self, name: str) -> datetime | None:
        return None  # a Claude Code session file is named by its id alone

    def session_names(self, home: Path) -> dict[str, str]:
        return {}  # Claude Code keeps no index of session names


PROVIDER = ClaudeProvider()
