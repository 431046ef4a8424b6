"""The first screen: every session ``ls`` would list, filtered live as one types, with a preview.

It opens at once however large the home: the rows are read in a worker (heads and tails, or the
``ls`` cache), then the whole-read figures missing from the cache are computed newest first in
another worker and filled in as they come (and cached, so ``ls`` shows them too). The preview of
the selected session (prompt, final answer, figures, tokens) is read in a third worker that starts
over when the selection moves.
"""

from __future__ import annotations

import dataclasses
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from transcript_reader.browse import sources
from transcript_reader.browse.help_screen import LIST_KEYS, key_bar
from transcript_reader.browse.preview import preview_text
from transcript_reader.browse.session_list import SessionList
from transcript_reader.sessions.entry import SessionEntry, SessionStats

#: the list is laid out again at most this often while figures stream in (seconds)
RELAYOUT_EVERY = 0.3
#: narrower than this, the preview goes under the list
SIDE_BY_SIDE = 110


class FilterInput(Input):
    """The filter box: every printable key filters, except ``?``, which is the screen's (search
    inside every session)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return character != "?" and super().check_consume_key(key, character)


class ListScreen(Screen[None]):
    BINDINGS = [
        Binding("question_mark", "search", "search all", priority=True),
        Binding("down", "move(1)", "down", show=False, priority=True),
        Binding("up", "move(-1)", "up", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
        Binding("enter", "open", "open", priority=True),
        Binding("escape", "clear_or_quit", "clear/quit"),
        Binding("ctrl+p", "toggle_preview", "preview"),
    ]

    DEFAULT_CSS = """
    .keys { height: 1; background: $panel-darken-1; text-wrap: nowrap; text-overflow: ellipsis; }
    ListScreen #filter { height: 3; }
    ListScreen #columns { height: 1; padding: 0 0 0 0; color: $text-muted; }
    ListScreen #body { height: 1fr; }
    ListScreen #body.narrow { layout: vertical; }
    ListScreen SessionList { width: 2fr; height: 1fr; }
    ListScreen #preview-box { width: 1fr; height: 1fr; border-left: solid $primary-darken-2; padding: 0 1; }
    ListScreen #body.narrow SessionList { width: 1fr; height: 3fr; }
    ListScreen #body.narrow #preview-box { width: 1fr; height: 2fr; border-left: none;
                                           border-top: solid $primary-darken-2; }
    ListScreen #body.nopreview #preview-box { display: none; }
    ListScreen #status { height: 1; padding: 0 1; background: $panel; }
    """

    def __init__(self, cfg: sources.BrowseConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.table = SessionList(id="sessions")
        self.loaded = False
        self.stats_done = 0
        self.stats_missing = 0
        self._dirty = False
        self._t0 = time.perf_counter()
        self._stats_s: float | None = None
        self._unreadable: set[str] = set()
        self.preview: sources.Preview | None = None
        self.preview_for: str | None = None

    def compose(self) -> ComposeResult:
        yield FilterInput(placeholder="filter: title, cwd, id, model (fuzzy; ? searches inside every session)",
                    id="filter")
        yield Static(Text(""), id="columns")
        with Horizontal(id="body"):
            yield self.table
            with VerticalScroll(id="preview-box"):
                yield Static(Text("reading sessions…", style="dim"), id="preview")
        yield Static(Text("reading sessions…", style="yellow"), id="status")
        yield Static(key_bar(LIST_KEYS), classes="keys")

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()
        if self.cfg.still:
            self.query_one("#filter", Input).cursor_blink = False
        self._list()
        self.set_interval(RELAYOUT_EVERY, self._relayout_if_dirty)

    def on_resize(self, event: Resize) -> None:
        self.query_one("#body").set_class(event.size.width < SIDE_BY_SIDE, "narrow")

    # ---- workers ----------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="list")
    def _list(self) -> None:
        try:
            entries, short = sources.listing(self.cfg)
        except Exception as e:  # noqa: BLE001 - a home we cannot list is said on screen, never a traceback
            self.app.call_from_thread(self._list_failed, str(e))
            return
        self.app.call_from_thread(self._listed, entries, short)

    def _listed(self, entries: list[SessionEntry], short: dict[str, str]) -> None:
        self.loaded = True
        self.table.set_entries(entries, short)
        self.query_one("#columns", Static).update(self.table.header)
        self._start_stats()
        if not entries:
            self.query_one("#preview", Static).update(Text(self._empty_message(), style="yellow"))

    def _list_failed(self, message: str) -> None:
        self.query_one("#status", Static).update(Text(f"cannot list sessions: {message}", style="bold red"))

    def _start_stats(self) -> None:
        """Compute the figures still missing (again after a pause: reading the session one opened,
        or searching, gets the machine to itself)."""
        todo = sum(1 for e in self.table.entries if sources.needs_stats(e) and e.path not in self._unreadable)
        self.stats_missing = self.stats_done + todo
        self._update_status()
        if todo and self.is_current:  # under a session view (browse SESSION), not until one comes back
            self._stats(list(self.table.entries))

    def _pause_background(self) -> None:
        self.workers.cancel_group(self, "stats")
        self.workers.cancel_group(self, "preview")

    def on_screen_resume(self) -> None:
        if self.loaded:
            self._start_stats()
            e = self.table.current
            if e is not None and e.path != self.preview_for:
                self._load_preview(e.path)

    @work(thread=True, exclusive=True, group="stats")
    def _stats(self, entries: list[SessionEntry]) -> None:
        worker = get_current_worker()

        def done(k: int, stats: SessionStats | None) -> None:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._stat, k, entries[k], stats)

        sources.fill_stats(self.cfg, entries, cancelled=lambda: worker.is_cancelled, done=done,
                           skip=set(self._unreadable))

    def _stat(self, k: int, entry: SessionEntry, stats: SessionStats | None) -> None:
        if stats is None:
            self._unreadable.add(entry.path)
        elif k < len(self.table.entries) and self.table.entries[k] is entry:
            self.table.update_entry(k, dataclasses.replace(entry, stats=stats))
            self._dirty = True
        self.stats_done += 1
        if self.stats_done >= self.stats_missing:
            self._stats_s = time.perf_counter() - self._t0
            self._relayout_if_dirty()
        self._update_status()

    def _relayout_if_dirty(self) -> None:
        if self._dirty:
            self._dirty = False
            self.table.relayout()
            self.query_one("#columns", Static).update(self.table.header)
            self._show_preview()

    @work(thread=True, exclusive=True, group="preview")
    def _load_preview(self, path: str) -> None:
        time.sleep(0.08)  # the cursor is still moving: read only where it stops
        worker = get_current_worker()
        if worker.is_cancelled:
            return
        p = sources.preview(path, cancelled=lambda: worker.is_cancelled)
        if p is not None and not worker.is_cancelled:
            self.app.call_from_thread(self._previewed, path, p)

    def _previewed(self, path: str, p: sources.Preview) -> None:
        self.preview, self.preview_for = p, path
        self._show_preview()

    # ---- events and keys --------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter":
            self.table.apply_filter(event.value)
            self.query_one("#columns", Static).update(self.table.header)
            self._update_status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.action_open()

    def on_session_list_highlighted(self, event: SessionList.Highlighted) -> None:
        self._show_preview()
        if event.entry is not None and event.entry.path != self.preview_for and self.is_current:
            self._load_preview(event.entry.path)

    def on_session_list_chosen(self, event: SessionList.Chosen) -> None:
        self._open(event.entry)

    def action_move(self, step: int) -> None:
        self.table.go(self.table.cursor + step)

    def action_open(self) -> None:
        e = self.table.current
        if e is not None:
            self._open(e)

    def _open(self, e: SessionEntry) -> None:
        from transcript_reader.browse.session_screen import SessionScreen

        self._pause_background()
        self.app.push_screen(SessionScreen(e.path, title=e.title))

    def action_search(self) -> None:
        from transcript_reader.browse.search_screen import SearchScreen

        self._pause_background()
        self.app.push_screen(SearchScreen(self.cfg, [self.table.entries[k] for k in self.table.shown]))

    def action_clear_or_quit(self) -> None:
        box = self.query_one("#filter", Input)
        if box.value:
            box.value = ""
        else:
            self.app.exit()

    def action_toggle_preview(self) -> None:
        self.query_one("#body").toggle_class("nopreview")

    # ---- text -------------------------------------------------------------------------------------

    def _show_preview(self) -> None:
        e = self.table.current
        if e is None:
            if self.loaded:
                self.query_one("#preview", Static).update(Text(self._empty_message(), style="yellow"))
            return
        p = self.preview if self.preview_for == e.path else None
        self.query_one("#preview", Static).update(preview_text(e, p, self.table.short))

    def _empty_message(self) -> str:
        if self.table.entries:
            return f"no session matches {self.table.filter_text!r} (esc clears the filter)"
        where = f" under {self.cfg.cwd}" if self.cfg.cwd else ""
        return (f"No sessions{where} in {self.cfg.codex_home}."
                + (" (browse --all-projects lists every project)" if self.cfg.cwd else ""))

    def _update_status(self) -> None:
        t = Text()
        n, shown = len(self.table.entries), len(self.table.shown)
        t.append(f"{shown:,} of {n:,} sessions" if self.table.filter_text.strip() else f"{n:,} sessions", style="bold")
        if self.stats_missing and self.stats_done < self.stats_missing:
            t.append(f" · computing figures {self.stats_done:,}/{self.stats_missing:,}", style="yellow")
        elif self.stats_missing and self._stats_s is not None and not self.cfg.still:
            t.append(f" · figures computed in {self._stats_s:.1f}s", style="dim")
        t.append("   ✗ failed command or test · ! no final answer · … not read yet", style="dim")
        self.query_one("#status", Static).update(t)
