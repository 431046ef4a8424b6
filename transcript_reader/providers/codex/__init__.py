"""The Codex provider: every wire shape the OpenAI Codex CLI writes, and its ``$CODEX_HOME`` layout.

Modules, one job each: ``sniff`` (the one line classifier and the format vote), ``lines`` (every line
of a line-based file as decode records, each by its own shape), ``rollout`` (the 0.40+ envelope),
``early_rust`` (0.20/0.29 bare lines), ``ts_json`` (the 0.1.x TypeScript document), ``exec_stream``
(``codex exec --json``, both protocols), ``common`` (Responses items, shared by every era), ``tokens``
(the one token-usage reader), ``head`` (session head and tail from a bounded prefix / suffix),
``layout`` (where sessions live under ``$CODEX_HOME``), ``patch_text`` (the apply_patch grammar).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transcript_reader.model import Format

if TYPE_CHECKING:
    from datetime import datetime

    from transcript_reader.providers.codex.lines import SkipWatch
    from transcript_reader.providers.head import SessionHead, SessionTail
    from transcript_reader.providers.records import Decoded
    from transcript_reader.reading.source import Readable, ReadCaps, Skipped


class CodexProvider:
    name = "codex"
    formats: tuple[Format, ...] = (Format.ROLLOUT, Format.EARLY_RUST, Format.TS_JSON, Format.EXEC_JSON,
                                   Format.EXEC_PROTOCOL)

    def sniff(self, path: Readable) -> Format | None:
        from transcript_reader.providers.codex.sniff import sniff

        return sniff(path)

    def decode(self, path: Readable, fmt: Format, stream: Iterable[bytes | Skipped] | None = None,
               caps: ReadCaps | None = None, messages_only: bool = False,
               context: bool = True, watch: SkipWatch | None = None) -> Iterator[Decoded]:
        """``messages_only``: a reader that keeps only message items; lines that cannot reach one are
        not decoded (``lines.MESSAGE_SKIP``). ``context`` False (with ``messages_only``): it keeps no
        context items either, so context messages are not decoded (``lines.CONTEXT_MESSAGES``).
        ``watch``: where the lines not decoded are counted (``lines.SkipWatch``)."""
        from transcript_reader.providers.codex.lines import CONTEXT_MESSAGES, MESSAGE_SKIP, iter_decoded
        from transcript_reader.reading.source import DEFAULT_CAPS

        skip = None if not messages_only else MESSAGE_SKIP if context else MESSAGE_SKIP | {CONTEXT_MESSAGES}
        return iter_decoded(path, fmt, stream, caps or DEFAULT_CAPS, skip, watch)

    def thread_links(self, path: Path) -> tuple[list[Any], list[Any]]:
        """(the links of the files ``path`` continues, oldest first; the segments continuing it):
        a Codex thread written in several files (``threads``)."""
        from transcript_reader.providers.codex.threads import successors, thread_chain

        return thread_chain(path), successors(path)

    def is_thread_segment(self, path: Path) -> bool:
        """A segment file of a thread: ``rollout-<time>-<thread id>_<segment id>.jsonl`` (codex-tui 0.160)."""
        from transcript_reader.providers.codex.layout import session_id_from_name
        from transcript_reader.providers.codex.threads import rollout_id

        rid = rollout_id(path)
        return rid is not None and rid != session_id_from_name(path.name)

    def read_head(self, path: Readable) -> SessionHead:
        from transcript_reader.providers.codex.head import read_head

        return read_head(path)

    def read_tail(self, path: Readable) -> SessionTail:
        from transcript_reader.providers.codex.head import read_tail

        return read_tail(path)

    def session_files(self, home: Path, scope: str) -> Iterator[tuple[str, bool]]:
        from transcript_reader.providers.codex.layout import iter_session_files

        return iter_session_files(home, scope)

    def session_id_from_name(self, name: str) -> str | None:
        from transcript_reader.providers.codex.layout import session_id_from_name

        return session_id_from_name(name)

    def session_time_from_name(self, name: str) -> datetime | None:
        from transcript_reader.providers.codex.layout import name_time

        return name_time(name)

    def session_names(self, home: Path) -> dict[str, str]:
        from transcript_reader.providers.codex.layout import load_session_index

        return load_session_index(home)


PROVIDER = CodexProvider()
