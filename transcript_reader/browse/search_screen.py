"""``?`` from the session list: search inside every listed session, results streaming in.

What ``transcript-reader search QUERY`` does, on the sessions the list shows (its filters and the
live filter applied): sessions that cannot hold the query are skipped by the byte pre-check, the
others searched newest first; each hit is a row as soon as it is found. Opening one opens the
session view at the hit, the query marked.
"""

from __future__ import annotations

import re

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from transcript_reader.browse import sources
from transcript_reader.browse.help_screen import SEARCH_KEYS, key_bar
from transcript_reader.browse.text import one_line
from transcript_reader.present.text import centre
from transcript_reader.sessions.discovery import SessionEntry


class SearchScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "back", "back"),
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    .keys { height: 1; background: $panel-darken-1; text-wrap: nowrap; text-overflow: ellipsis; }
    SearchScreen #query { height: 3; }
    SearchScreen OptionList { height: 1fr; text-wrap: nowrap; text-overflow: ellipsis; }
    SearchScreen #search-status { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, cfg: sources.BrowseConfig, entries: list[SessionEntry]) -> None:
        super().__init__()
        self.cfg = cfg
        self.entries = entries
        self.hits: list[sources.Hit] = []
        self.query_text = ""
        self.searching = False
        self.searched = 0
        self.notes: list[str] = []

    def compose(self) -> ComposeResult:
        yield Input(placeholder=f"search inside {len(self.entries):,} sessions (enter to search)", id="query")
        yield OptionList(id="hits")
        yield Static("", id="search-status")
        yield Static(key_bar(SEARCH_KEYS), classes="keys")

    def on_mount(self) -> None:
        box = self.query_one("#query", Input)
        if self.cfg.still:
            box.cursor_blink = False
        box.focus()
        self._status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        q = event.value.strip()
        if not q:
            return
        hits = self.query_one("#hits", OptionList)
        if hits.option_count and q == self.query_text:
            self._open(hits.highlighted or 0)
            return
        self.query_text = q
        self.hits = []
        self.notes = []
        self.searched = 0
        hits.clear_options()
        self.searching = True
        self._search(q)
        self._status()

    @work(thread=True, exclusive=True, group="search")
    def _search(self, query: str) -> None:
        worker = get_current_worker()

        def progress(done: int, total: int) -> None:
            self.searched = done

        batch: list[sources.Hit | str] = []
        stores = sources.search_stores(self.cfg)
        try:
            for hit in sources.search_sessions(self.entries, query, cancelled=lambda: worker.is_cancelled,
                                               progress=progress, stores=stores):
                batch.append(hit)
                if len(batch) >= 20:
                    self.app.call_from_thread(self._add, query, batch)
                    batch = []
                elif len(self.hits) < 50:  # the first screenful as it is found
                    self.app.call_from_thread(self._add, query, batch)
                    batch = []
        finally:
            for con in stores:
                con.close()
        if not worker.is_cancelled:
            self.app.call_from_thread(self._finished, query, batch)

    def _add(self, query: str, batch: list[sources.Hit | str]) -> None:
        if query != self.query_text:
            return
        box = self.query_one("#hits", OptionList)
        for h in batch:
            if isinstance(h, str):
                self.notes.append(h)
                continue
            self.hits.append(h)
            box.add_option(Option(self._row(h, query), id=str(len(self.hits) - 1)))
        if box.highlighted is None and box.option_count:
            box.highlighted = 0
        self._status()

    def _finished(self, query: str, batch: list[sources.Hit | str]) -> None:
        self._add(query, batch)
        if query == self.query_text:
            self.searching = False
            self.searched = len(self.entries)
            self._status()

    def _row(self, h: sources.Hit, query: str) -> Text:
        """One hit on one line: session, time, kind, title (when there is room), the excerpt centred
        on the hit."""
        width = self.size.width or 120
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"{(h.entry.session_id or '')[:13]:<14}", style="dim")
        if width >= 100:
            ts = (h.item.timestamp or h.entry.head.timestamp or "").replace("T", " ")[:16]
            t.append(f"{ts:<17}", style="green")
        t.append(f"{h.item.kind.value:<15}", style="cyan")
        if width >= 120:
            t.append(f"{one_line(h.entry.title or '', 28):<29}", style="bold")
        ex = Text(centre(one_line(h.excerpt, 2000), query, False, max(20, width - len(t.plain) - 4)))
        ex.highlight_regex(re.compile(re.escape(query), re.IGNORECASE), style="bold black on yellow")
        t.append_text(ex)
        return t

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option_index)

    def action_move(self, step: int) -> None:
        box = self.query_one("#hits", OptionList)
        if box.option_count:
            box.highlighted = max(0, min(box.option_count - 1, (box.highlighted or 0) + step))

    def _open(self, index: int) -> None:
        if not (0 <= index < len(self.hits)):
            return
        from transcript_reader.browse.session_screen import SessionScreen

        h = self.hits[index]
        self.app.push_screen(SessionScreen(h.entry.path, title=h.entry.title, jump_line=h.item.line,
                                           query=self.query_text))

    def action_back(self) -> None:
        self.workers.cancel_group(self, "search")
        self.app.pop_screen()

    def _status(self) -> None:
        t = Text()
        if not self.query_text:
            t.append("type a query, enter to search; ↑↓ to choose a hit, enter to open it", style="dim")
        else:
            n = len(self.hits)
            t.append(f"{n} hit{'s' if n != 1 else ''}", style="bold")
            t.append(f" for {self.query_text!r} · ", style="dim")
            if self.searching:
                t.append(f"searching {self.searched:,}/{len(self.entries):,} sessions…", style="yellow")
            else:
                t.append(f"{len(self.entries):,} sessions searched", style="dim")
            if self.notes:
                t.append(f" · {len(self.notes)} unreadable", style="yellow")
        self.query_one("#search-status", Static).update(t)
