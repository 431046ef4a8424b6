"""Where the browser's data comes from: the library's public entry points, and nothing else.

The browser adds no reading logic of its own. Listing is ``discovery.list_sessions`` over the same
session store ``ls`` reads (what ``ls`` shows, with the same filters, whole-read figures included);
``discovery.compute_stats`` fills the figures of a row the store could not give, a session's items are ``api.Transcript(...).items()`` (or
``api.follow``), and cross-session search is the CLI's own pre-check plus ``api.search``. Keeping these
calls in one module means a change of the library's internals is absorbed here, once.

No Textual here: this module runs in worker threads and in tests without an app.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from transcript_reader.errors import TranscriptError
from transcript_reader.home_search.results import StoredItem
from transcript_reader.model import AnyItem, AssistantMessage, SessionInfo, UserMessage
from transcript_reader.sessions.entry import SessionEntry, SessionStats


@dataclass(frozen=True)
class BrowseConfig:
    """What the ``browse`` command was asked: the ``ls`` filters, already resolved by the CLI (which
    is where the environment is read), and the session to open directly, if any."""

    codex_home: Path
    cwd: str | None  # None: every project
    scope: str = "live"
    since: datetime | None = None
    until: datetime | None = None
    grep: str | None = None
    limit: int | None = None
    store_dir: Path | None = None  # where the session stores live (as `ls`); None: no store, heads only
    workers: int = 1  # processes a first build of the store reads with
    session: str | None = None  # a resolved file path: open it at once
    follow: bool = False
    no_color: bool = False
    #: "now" for the listing's relative filters and the clock shown; fixed in snapshot tests
    now: datetime = field(default_factory=lambda: datetime.now(UTC))
    #: no cursor blink, no animation (headless tests and snapshots)
    still: bool = False
    #: every provider's home to list (``{"codex": …, "claude": …}``); None: ``codex_home`` alone
    homes: dict[str, Path] | None = None


_prefetched: dict[int, Future[tuple[list[SessionEntry], dict[str, str]]]] = {}


def prefetch(cfg: BrowseConfig) -> None:
    """Start listing in a thread now, while Textual is still being imported: the rows are then ready
    (or nearly) when the list screen asks for them."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="browse-prefetch")
    _prefetched[id(cfg)] = pool.submit(lambda: (rows := list_rows(cfg), short_ids(cfg, rows)))
    pool.shutdown(wait=False)


def listing(cfg: BrowseConfig) -> tuple[list[SessionEntry], dict[str, str]]:
    """The rows and their short ids: the prefetched ones if ``prefetch`` ran for this config."""
    fut = _prefetched.pop(id(cfg), None)
    if fut is not None:
        return fut.result()
    rows = list_rows(cfg)
    return rows, short_ids(cfg, rows)


def list_rows(cfg: BrowseConfig) -> list[SessionEntry]:
    """The ``ls`` rows (from the session store, whole-read figures attached), newest first, sub-agents
    under their parent."""
    from transcript_reader.sessions.discovery import list_sessions

    return list_sessions(cfg.codex_home, scope=cfg.scope, cwd=cfg.cwd, since=cfg.since, until=cfg.until,
                         grep=cfg.grep, limit=cfg.limit, homes=cfg.homes, store_dir=cfg.store_dir,
                         workers=cfg.workers)


def short_ids(cfg: BrowseConfig, entries: list[SessionEntry]) -> dict[str, str]:
    """Each row's shortest id prefix that ``show PREFIX`` resolves back to it (as ``ls`` prints)."""
    from transcript_reader.sessions.discovery import session_ids, unique_prefixes

    return unique_prefixes([e.session_id for e in entries if e.session_id],
                           session_ids(cfg.codex_home, homes=cfg.homes))


def needs_stats(e: SessionEntry) -> bool:
    """Whether a row lacks whole-read figures (or has them from a cache older than ``answered``)."""
    if e.head.format is None:
        return False
    return e.stats is None or (e.stats.answered is None and e.stats.turns > 0)


def fill_stats(cfg: BrowseConfig, entries: list[SessionEntry], *, cancelled: Callable[[], bool],
               done: Callable[[int, SessionStats | None], None], skip: Collection[str] = ()) -> None:
    """Compute the whole-read figures missing from ``entries`` (newest first: rows the session store
    could not give), calling ``done(index, stats)`` for each (None: the session could not be read)."""
    from transcript_reader.sessions.discovery import compute_stats

    for k, e in enumerate(entries):
        if cancelled():
            return
        if not needs_stats(e) or e.path in skip:
            continue
        try:
            stats = compute_stats(e.path)
        except (TranscriptError, OSError):
            done(k, None)  # the row keeps what its head says; opening it shows the error
            continue
        done(k, stats)


@dataclass
class Preview:
    """What the preview pane shows beyond the row: the whole-read summary of one session."""

    info: SessionInfo | None = None
    prompt: str | None = None
    final: str | None = None
    error: str | None = None
    cost: Any = None  # ``usage.pricing.Price`` of the session's own usage (None: not read)


def preview(path: str, *, cancelled: Callable[[], bool]) -> Preview | None:
    """The first prompt, the last final answer and the session's figures, from one streaming pass
    (None when cancelled: the selection moved on)."""
    from transcript_reader.api import Transcript

    out = Preview()
    try:
        t = Transcript(path)
        for n, item in enumerate(t.items()):
            if n % 512 == 0 and cancelled():
                return None
            if isinstance(item, UserMessage) and out.prompt is None:
                out.prompt = item.text
            elif isinstance(item, AssistantMessage) and item.final:
                out.final = item.text
        out.info = t.info()
    except (TranscriptError, OSError) as e:
        out.error = str(e)
        return out
    from transcript_reader.usage.pricing import price_session

    out.cost = price_session(out.info)
    return out


def session_items(path: str, *, follow: bool = False, stop: Callable[[], bool] | None = None,
                  poll_s: float = 0.5) -> tuple[Iterator[AnyItem], Callable[[], SessionInfo | None]]:
    """``(items, info)``: every item of the session, streaming (``api.follow`` when following: it
    yields what a whole read gives, then new items as Codex writes them), and a callable giving the
    session's figures once the items are exhausted."""
    from transcript_reader import api

    if follow:
        assert stop is not None
        return api.follow(path, stop=stop, poll_s=poll_s), lambda: None
    t = api.Transcript(path)
    return t.items(), t.info


def unfollowable(path: str) -> str | None:
    from transcript_reader.api import unfollowable as why

    return why(path)


@dataclass(frozen=True)
class Hit:
    """One cross-session search hit: the session it is in, and the item (its ``line`` is where the
    session view jumps)."""

    entry: SessionEntry
    item: AnyItem | StoredItem
    excerpt: str


def search_stores(cfg: BrowseConfig) -> list[sqlite3.Connection]:
    """Read connections to the session stores of the homes listed (the listing brought them in step
    with the files); none without a store directory or a usable store (the files are then read)."""
    store_dir = getattr(cfg, "store_dir", None)
    if store_dir is None:
        return []
    from transcript_reader.sessions.store import store_readers

    return store_readers(cfg.homes or {"codex": cfg.codex_home}, store_dir)


def search_sessions(entries: list[SessionEntry], query: str, *, cancelled: Callable[[], bool],
                    progress: Callable[[int, int], None], max_matches: int = 5,
                    stores: Sequence[sqlite3.Connection] = ()) -> Iterator[Hit | str]:
    """Hits in ``entries``, newest session first, streamed as each session is searched: what
    ``transcript-reader search QUERY`` does (``transcript_reader.home_search``: from the session store's
    connections ``stores`` each session it holds as it is now, the others read from their files). A
    session that cannot be read gives a message string instead."""
    from transcript_reader.home_search import search_sessions as search_all

    by_path = {e.path: e for e in entries}
    done = [0]

    def step() -> None:
        done[0] += 1
        progress(done[0], len(entries))

    for res in search_all(list(by_path), query, max_matches=max_matches, count_all=False, progress=step,
                          cancelled=cancelled, stores=stores):
        entry = by_path[res.path]
        if res.error is not None:
            yield f"skipped {entry.session_id or entry.path}: {res.error}"
            continue
        for m in res.matches:
            yield Hit(entry=entry, item=m.item, excerpt=m.excerpt)


def export_session(path: str, fmt: str, out: Path, *, title: str | None) -> int:
    """Write the session as ``show``'s export does (``md``, ``html`` or ``json``); returns bytes
    written. Raises ``TranscriptError`` or ``OSError``."""
    import json

    from transcript_reader import api
    from transcript_reader.present.common import Options
    from transcript_reader.projections import render

    result = api.read(path)
    if fmt == "json":
        text = json.dumps(render.read_result(result), ensure_ascii=False, indent=2)
    else:
        info = result.info
        opts = Options(diff=fmt == "html", scripts=fmt == "html", session_cwd=info.cwd if info else None)
        if fmt == "md":
            from transcript_reader.present.markdown import timeline_markdown

            text = timeline_markdown(list(result.items), info, opts, title=title)
        else:
            from transcript_reader.present.html import timeline_html

            text = timeline_html(list(result.items), info, opts, title=title)
    data = text.encode("utf-8")
    out.write_bytes(data)
    return len(data)

