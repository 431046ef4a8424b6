"""Find in one session (``/``, ``n``, ``N``): the query box, the hits among the visible blocks (kept up to
date while the session streams in) and moving between them. A part of ``SessionScreen``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Input

from transcript_reader.browse import blocks as bl

if TYPE_CHECKING:
    from textual.screen import Screen

    from transcript_reader.browse.timeline import TimelineView

    _Base = Screen[None]
else:
    _Base = object


class SessionFind(_Base):
    """The session screen's search: ``hits`` are the indexes of the visible blocks the query matches."""

    view: TimelineView
    hits: list[int]
    reading: bool
    _hits_seen: int

    def action_search(self) -> None:
        box = self.query_one("#find", Input)
        box.add_class("shown")
        box.value = self.view.search.query if self.view.search else ""
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "find":
            return
        self._close_find()
        query = event.value.strip()
        self.view.search = bl.Search.of(query) if query else None
        self._recompute_hits()
        self.view.invalidate()
        if self.view.search is not None:
            if not self.hits:
                self.notify(f"no match for {query!r}" + (" yet (still reading)" if self.reading else ""),
                            timeout=3)
            else:
                self.action_next_hit(1, from_cursor=True)

    def _close_find(self) -> None:
        box = self.query_one("#find", Input)
        box.remove_class("shown")
        self.view.focus()

    def _recompute_hits(self) -> None:
        s = self.view.search
        self.hits = [] if s is None else [k for k, b in enumerate(self.view.model.visible) if s.hits(b)]
        self._hits_seen = len(self.view.model.visible)

    def _update_hits_for_new(self) -> None:
        s = self.view.search
        seen = self._hits_seen
        vis = self.view.model.visible
        if s is not None:
            self.hits.extend(k for k in range(seen, len(vis)) if s.hits(vis[k]))
        self._hits_seen = len(vis)

    def action_next_hit(self, step: int, from_cursor: bool = False) -> None:
        if not self.hits:
            if self.view.search is not None:
                self.notify("no match", timeout=2)
            return
        cur = self.view.cursor
        if step > 0:
            nxt = [k for k in self.hits if k >= cur] if from_cursor else [k for k in self.hits if k > cur]
            k = nxt[0] if nxt else self.hits[0]
        else:
            prv = [k for k in self.hits if k < cur]
            k = prv[-1] if prv else self.hits[-1]
        b = self.view.model.visible[k]
        assert self.view.search is not None
        if not folded_hit(self.view.model, b, self.view.search):
            self.view.toggle(k, expand=True)
        self.view.tail = False
        self.view.go(k, top=True)


def folded_hit(model: bl.Timeline, b: bl.Block, search: bl.Search) -> bool:
    """Whether a hit shows in the block's folded lines (else the block is expanded to show it)."""
    return any(search.pattern.search(t.plain) for t in model.folded(b))
