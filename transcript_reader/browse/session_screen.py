"""The session view: one session's timeline, streamed in, with keys to move between what matters.

The file is read in a worker thread and its blocks handed to the screen in batches: the first batch
is painted as soon as it is read (a few milliseconds), the rest arrives while one already reads and
scrolls. Following (``f``) reads the session again through ``api.follow``; the screen keeps showing
the whole read until the follow has caught up with the file, then swaps to it and grows with it.
"""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from transcript_reader.browse import blocks as bl
from transcript_reader.browse import sources
from transcript_reader.browse.export_screen import ExportScreen
from transcript_reader.browse.help_screen import SESSION_KEYS, key_bar
from transcript_reader.browse.session_find import SessionFind, folded_hit
from transcript_reader.browse.timeline import TimelineView
from transcript_reader.errors import TranscriptError
from transcript_reader.model import SessionInfo

#: items per batch handed to the screen, and the longest a batch waits (seconds): the screen is
#: redrawn once per batch, so batches are few (a redraw costs the reading thread the GIL)
BATCH_ITEMS = 20000
BATCH_SECONDS = 0.25
#: the first batch goes out at once, so the first screen is painted before the file is read
FIRST_BATCH = 200


class SessionScreen(SessionFind, Screen[None]):
    """``SessionScreen(path, title=…, jump_line=…, query=…)``: ``jump_line`` and ``query`` come from
    a cross-session search hit (the view opens at that item, the query marked)."""

    BINDINGS = [
        Binding("x", "jump('failure', 1)", "next failure"),
        Binding("X", "jump('failure', -1)", "prev failure", show=False),
        Binding("c", "jump('command', 1)", "next cmd"),
        Binding("C", "jump('command', -1)", "prev cmd", show=False),
        Binding("d", "jump('change', 1)", "next change"),
        Binding("D", "jump('change', -1)", "prev change", show=False),
        Binding("t", "jump('turn', 1)", "next turn"),
        Binding("T", "jump('turn', -1)", "prev turn", show=False),
        Binding("slash", "search", "search"),
        Binding("n", "next_hit(1)", "next hit", show=False),
        Binding("N", "next_hit(-1)", "prev hit", show=False),
        Binding("r", "toggle_kind('reasoning')", "reasoning"),
        Binding("i", "toggle_kind('context')", "context", show=False),
        Binding("f", "follow", "follow"),
        Binding("e", "export", "export"),
        Binding("y", "copy", "copy cmd"),
        Binding("escape", "back", "back"),
        Binding("q", "leave", "back", show=False),
    ]

    DEFAULT_CSS = """
    .keys { height: 1; background: $panel-darken-1; text-wrap: nowrap; text-overflow: ellipsis; }
    SessionScreen #head { height: auto; max-height: 3; padding: 0 1; background: $boost; }
    SessionScreen TimelineView { height: 1fr; }
    SessionScreen #status { height: 1; padding: 0 1; background: $panel; }
    SessionScreen #find { dock: bottom; display: none; }
    SessionScreen #find.shown { display: block; }
    """

    _FLAGS = {"failure": bl.FAILURE, "command": bl.COMMAND, "change": bl.CHANGE, "turn": bl.TURN}

    def __init__(self, path: str, *, title: str | None = None, jump_line: int | None = None,
                 query: str | None = None, follow: bool = False) -> None:
        super().__init__()
        self.path = path
        self.title_text = title
        self.jump_line = jump_line
        self.search_query = query
        self.start_following = follow
        self.following = False
        self.info: SessionInfo | None = None
        self.reading = True
        self.error: str | None = None
        self.hits: list[int] = []
        self._t0 = time.perf_counter()
        self._read_s: float | None = None
        self._hits_seen = 0
        self.view = TimelineView(bl.Timeline())

    def compose(self) -> ComposeResult:
        yield Static(self._head_text(), id="head")
        yield self.view
        yield Static("", id="status")
        yield Input(placeholder="search this session (enter: go, esc: cancel)", id="find")
        yield Static(key_bar(SESSION_KEYS), classes="keys")

    def on_mount(self) -> None:
        if self.search_query:
            self.view.search = bl.Search.of(self.search_query)
        self.view.focus()
        if self.start_following:
            self.following = self.view.tail = True
        self._load(follow=self.start_following)
        self.set_interval(0.25, self._refresh_status)

    # ---- loading ----------------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="load")
    def _load(self, follow: bool) -> None:
        worker = get_current_worker()
        fresh = bl.Timeline()
        swap_pending = follow and bool(self.view.model.blocks)
        if not swap_pending:
            self.app.call_from_thread(self._use_model, fresh)
        batch: list = []
        last = time.perf_counter()
        first = True

        def flush(caught_up: bool = False) -> None:
            nonlocal batch, last, first, swap_pending
            if batch:
                self.app.call_from_thread(self._add, fresh, batch)
                batch = []
            if caught_up and swap_pending:
                swap_pending = False
                self.app.call_from_thread(self._use_model, fresh)
            last = time.perf_counter()
            first = False

        def stop() -> bool:
            flush(caught_up=True)
            return worker.is_cancelled or not self.following

        try:
            if follow:
                reason = sources.unfollowable(self.path)
                if reason is not None:
                    self.app.call_from_thread(self._follow_refused, reason)
                    return
            items, info = sources.session_items(self.path, follow=follow, stop=stop)
            for item in items:
                if worker.is_cancelled:
                    return
                batch.append(fresh.shared(item))
                if (len(batch) >= (FIRST_BATCH if first else BATCH_ITEMS)
                        or time.perf_counter() - last > BATCH_SECONDS):
                    flush()
            flush(caught_up=True)
            result = info()
        except (TranscriptError, OSError) as e:
            flush()
            self.app.call_from_thread(self._failed, str(e))
            return
        self.app.call_from_thread(self._done, fresh, result)

    def _use_model(self, fresh: bl.Timeline) -> None:
        old = self.view.current
        fresh.show_reasoning, fresh.show_context = self.view.model.show_reasoning, self.view.model.show_context
        fresh.opts = self.view.model.opts
        self.view.model = fresh
        fresh.set_measure(self.view._measure)
        fresh.refilter()
        if old is not None and fresh.visible:
            self.view.cursor = fresh.index_near_line(old.item.line)
        self.view.invalidate()
        if self.following:
            self.view.tail = self.view.tail or old is None
            self.view.grew()

    def _add(self, model: bl.Timeline, items: list) -> None:
        if model is not self.view.model:
            model.add(items)  # a follow still catching up: built aside, shown once it has caught up
            return
        model.add(items)
        self._update_hits_for_new()
        self.view.grew()
        if self.jump_line is not None:
            self._try_jump()

    def _done(self, model: bl.Timeline, info: SessionInfo | None) -> None:
        model.finish()
        self.reading = False
        self._read_s = time.perf_counter() - self._t0
        if info is not None:
            self.info = info
            if model is self.view.model:
                model.opts = type(model.opts)(session_cwd=info.cwd)
                self.view.invalidate()
            self.query_one("#head", Static).update(self._head_text())
        self._update_hits_for_new()
        self.view.grew()
        if self.jump_line is not None:
            self._try_jump(final=True)
        self._refresh_status()

    def _failed(self, message: str) -> None:
        self.reading = False
        self.error = message
        self.following = False
        self.notify(message, title="cannot read this session", severity="error")
        self._refresh_status()

    def _follow_refused(self, reason: str) -> None:
        self.following = False
        self.notify(f"not following: {reason}", severity="warning")
        self._refresh_status()

    def _try_jump(self, final: bool = False) -> None:
        """Open at a search hit's item once it has been read (or at the end, if it never comes)."""
        assert self.jump_line is not None
        model = self.view.model
        if not model.visible:
            return
        if model.visible[-1].item.line < self.jump_line and not final:
            return
        k = model.index_near_line(self.jump_line)
        self.jump_line = None
        search = self.view.search
        b = model.visible[k]
        if search is not None and search.hits(b) and not folded_hit(model, b, search):
            self.view.toggle(k, expand=True)
        self.view.go(k, top=True)

    # ---- keys -------------------------------------------------------------------------------------

    def action_jump(self, what: str, step: int) -> None:
        k = self.view.model.find(self.view.cursor, step, self._FLAGS[what])
        if k < 0:
            self.notify(f"no {'next' if step > 0 else 'previous'} {what}", timeout=2)
            return
        self.view.tail = False
        self.view.go(k)
        if what == "failure":
            self.view.toggle(k, expand=True)

    def action_toggle_kind(self, kind: str) -> None:
        model = self.view.model
        if kind == "reasoning":
            model.show_reasoning = not model.show_reasoning
        else:
            model.show_context = not model.show_context
        old = self.view.current
        model.refilter()
        self.view.cursor = model.index_of(old) if old is not None and model.index_of(old) >= 0 else \
            model.index_near_line(old.item.line) if old is not None else 0
        self._recompute_hits()
        self.view.invalidate()
        self.view.go(self.view.cursor)
        shown = model.show_reasoning if kind == "reasoning" else model.show_context
        self.notify(f"{kind} {'shown' if shown else 'hidden'}", timeout=2)

    def action_follow(self) -> None:
        if self.following:
            self.following = False
            self.view.tail = False
            self.notify("stopped following", timeout=2)
        else:
            self.following = True
            self.view.tail = True
            self.notify("following: new items appear as Codex writes them (f to stop)", timeout=3)
            self._load(follow=True)
        self._refresh_status()

    def action_export(self) -> None:
        sid = self.info.session_id if self.info else None
        default = f"{(sid or Path(self.path).stem)[:13]}.md"
        self.app.push_screen(ExportScreen(self.path, default, title=self._title()))

    def action_copy(self) -> None:
        b = self.view.current
        text = bl.copy_text(b) if b is not None else None
        if not text:
            self.notify("nothing to copy here (y copies a command or a cell's script)", timeout=2)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied: {bl.one_line(text, 60)}", timeout=2)

    def action_back(self) -> None:
        box = self.query_one("#find", Input)
        if box.has_class("shown"):
            self._close_find()
            return
        if self.view.search is not None:
            self.view.search = None
            self.hits = []
            self.view.invalidate()
            self._refresh_status()
            return
        self.action_leave()

    def action_leave(self) -> None:
        self.following = False
        self.workers.cancel_group(self, "load")
        self.app.pop_screen()

    def on_timeline_view_moved(self, _: TimelineView.Moved) -> None:
        self._refresh_status()

    # ---- text -------------------------------------------------------------------------------------

    def _title(self) -> str | None:
        return self.title_text or (self.info.title if self.info else None)

    def _head_text(self) -> RenderableType:
        from transcript_reader.present.terminal import header

        if self.info is None:
            t = Text(self.title_text or Path(self.path).name, style="bold")
            t.append("\n" + self.path, style="dim")
            return t
        return header(self.info, self.title_text)

    def _refresh_status(self) -> None:
        self.query_one("#status", Static).update(status_line(self))


def status_line(screen: SessionScreen) -> Text:
    """The status line: reading or read, following, the find position, where the cursor is, what is
    hidden."""
    model = screen.view.model
    t = Text()
    n = len(model.blocks)
    if screen.error:
        t.append(f"error: {screen.error}", style="bold red")
    elif screen.reading and not screen.following:
        t.append(f"reading… {n:,} blocks", style="yellow")
    else:
        t.append(f"{n:,} blocks", style="dim")
        if screen._read_s is not None and not getattr(getattr(screen.app, "cfg", None), "still", False):
            t.append(f" · read in {screen._read_s:.1f}s", style="dim")
    if screen.following:
        t.append(" · following", style="bold green")
    if screen.view.search is not None:
        s = screen.view.search
        pos = sum(1 for k in screen.hits if k <= screen.view.cursor)
        t.append(f" · /{s.query}: {pos}/{len(screen.hits)}", style="bold yellow" if screen.hits else "red")
    b = screen.view.current
    if b is not None:
        t.append(f" · turn {b.turn} · line {b.item.line}", style="dim")
    hidden = [k for k, on in (("reasoning", model.show_reasoning), ("context", model.show_context)) if not on]
    if hidden:
        t.append(f" · hidden: {', '.join(hidden)} (r, i)", style="dim")
    return t

