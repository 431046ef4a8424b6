"""The virtual timeline widget: draws only the lines on screen, whatever the session's length.

Textual's line API asks for one line at a time (``render_line``); the widget finds the block that
line belongs to by bisection over the model's offsets and renders that block alone (folded lines are
one Text each; an expanded block is rendered once at the current width and cached). A session of
300,000 items therefore costs, to draw, the thirty-odd blocks that are visible.
"""

from __future__ import annotations

from collections import OrderedDict

from rich.console import RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from transcript_reader.browse.blocks import Block, Search, Timeline
from transcript_reader.browse.text import colourless

_CURSOR = Style(bgcolor="grey23")
_MARK = Segment("▌", Style(color="cyan", bold=True))
_GUTTER = Segment(" ")
_REVERSE = Style(reverse=True)


class TimelineView(ScrollView, can_focus=True):
    """The session's blocks; a cursor selects one (the ``▌`` in the gutter), ``enter`` expands it."""

    DEFAULT_CSS = "TimelineView { overflow-x: hidden; }"

    BINDINGS = [
        Binding("down,j", "move(1)", "down", show=False),
        Binding("up,k", "move(-1)", "up", show=False),
        Binding("pagedown,space", "page(1)", "page down", show=False),
        Binding("pageup,b", "page(-1)", "page up", show=False),
        Binding("home,g", "edge(0)", "top", show=False),
        Binding("end,G", "edge(1)", "bottom", show=False),
        Binding("enter,o", "expand", "expand"),
    ]

    class Moved(Message):
        """The cursor moved (the status line follows it)."""

    def __init__(self, model: Timeline, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.model = model
        self.cursor = 0
        self.search: Search | None = None
        self.tail = False  # following: keep the last block in view as blocks arrive
        self._cache: OrderedDict[int, list[Strip]] = OrderedDict()
        self._width = 0
        model.set_measure(self._measure)

    # ---- drawing ----------------------------------------------------------------------------------

    @property
    def text_width(self) -> int:
        """The columns text may use: the widget less its scrollbar."""
        return self.scrollable_content_region.width

    def render_line(self, y: int) -> Strip:
        width = self.text_width
        if width != self._width:
            self._width = width  # on_resize lays out again; until then draw at the new width
            self._cache.clear()
        line = self.scroll_offset.y + y
        k = self.model.index_at(line)
        if k < 0:
            return Strip.blank(width, self.rich_style)
        strips = self._strips(k)
        row = line - self.model.offsets[k]
        strip = strips[row] if row < len(strips) else Strip.blank(width - 1)
        gutter = _MARK if k == self.cursor and row == 0 else _GUTTER
        out = Strip([gutter, *strip], strip.cell_length + 1).crop_extend(0, width, None)
        if self.app.no_color:
            # NO_COLOR: no colour at all, not colours turned grey (red on grey is unreadable); the
            # cursor is shown reversed
            out = Strip(colourless(out), out.cell_length)
            return out.apply_style(self.rich_style + (_REVERSE if k == self.cursor else Style()))
        base = self.rich_style + _CURSOR if k == self.cursor else self.rich_style
        return out.apply_style(base)

    def _strips(self, k: int) -> list[Strip]:
        b = self.model.visible[k]
        key = id(b)
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        strips = self._render_block(b)
        self._cache[key] = strips
        if len(self._cache) > 4000:
            self._cache.popitem(last=False)
        return strips

    def _render_block(self, b: Block) -> list[Strip]:
        width = max(10, self.text_width - 1)
        console = self.app.console
        indent = "  " * b.depth
        opts = console.options.update(width=width, no_wrap=True, overflow="ellipsis", height=None)
        strips: list[Strip] = []
        for t in self.model.folded(b):
            if indent:
                t = Text(indent) + t
                t.no_wrap, t.overflow = True, "ellipsis"
            if self.search is not None:
                self.search.mark(t)
            lines = console.render_lines(t, opts, pad=False)
            strips.append(Strip(lines[0]) if lines else Strip.blank(0))
        if b.expanded:
            wrap = console.options.update(width=max(10, width - len(indent)), no_wrap=False, height=None)
            for r in self.model.expanded(b, plain_text=self.search is not None):
                if self.search is not None:
                    _mark_inside(r, self.search)
                for segs in console.render_lines(r, wrap, pad=False):
                    strips.append(Strip([Segment(indent), *segs]) if indent else Strip(segs))
        return strips

    def _measure(self, b: Block) -> int:
        return len(self._render_block(b))

    def on_resize(self, event: Resize) -> None:
        """A new width: expanded blocks wrap differently, so the layout is computed again."""
        self._width = self.text_width
        self._cache.clear()
        if any(b.expanded for b in self.model.visible):
            self.model.relayout(0)
        self._update_virtual_size()

    def _update_virtual_size(self) -> None:
        self.virtual_size = Size(self.size.width, self.model.height)

    def invalidate(self, *, relayout_from: int | None = None) -> None:
        """Forget rendered blocks (a search began or ended, a toggle changed what is shown)."""
        self._cache.clear()
        if relayout_from is not None:
            self.model.relayout(relayout_from)
        self._update_virtual_size()
        self.refresh()

    # ---- growing ----------------------------------------------------------------------------------

    def grew(self) -> None:
        """New blocks were appended to the model."""
        self._update_virtual_size()
        if self.tail and self.model.visible:
            self.cursor = len(self.model.visible) - 1
            self.scroll_end(animate=False, immediate=True)
        self.refresh()

    # ---- the cursor -------------------------------------------------------------------------------

    def go(self, k: int, *, top: bool = False) -> None:
        """Put the cursor on visible block ``k`` and scroll it into view (``top``: to the top third)."""
        if not self.model.visible:
            return
        k = max(0, min(k, len(self.model.visible) - 1))
        self.cursor = k
        start = self.model.offsets[k]
        h = self.model.block_height(self.model.visible[k])
        view_top, view_h = self.scroll_offset.y, max(1, self.size.height)
        if top or start < view_top or start + min(h, view_h) > view_top + view_h:
            target = max(0, start - (view_h // 3 if top else 0)) if top or start < view_top else \
                start + min(h, view_h) - view_h
            self.scroll_to(y=target, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Moved())

    def action_move(self, step: int) -> None:
        self.tail = False
        self.go(self.cursor + step)

    def action_page(self, step: int) -> None:
        self.tail = False
        y = self.scroll_offset.y + step * max(1, self.size.height - 1)
        y = max(0, min(y, max(0, self.model.height - self.size.height)))
        self.scroll_to(y=y, animate=False, immediate=True)
        k = self.model.index_at(y)
        if k >= 0:
            self.cursor = k
        self.refresh()
        self.post_message(self.Moved())

    def action_edge(self, end: int) -> None:
        self.tail = False
        self.go(len(self.model.visible) - 1 if end else 0)

    def action_expand(self) -> None:
        self.toggle(self.cursor)

    def toggle(self, k: int, *, expand: bool | None = None) -> None:
        if not (0 <= k < len(self.model.visible)):
            return
        b = self.model.visible[k]
        want = (not b.expanded) if expand is None else expand
        if want == b.expanded or (want and not self.model.expandable(b)):
            return
        b.expanded = want
        self._cache.pop(id(b), None)
        self.model.relayout(k)
        self._update_virtual_size()
        self.go(k)

    def on_click(self, event: Click) -> None:
        k = self.model.index_at(self.scroll_offset.y + event.y)
        if k < 0:
            return
        if k == self.cursor:
            self.toggle(k)
        else:
            self.go(k)

    @property
    def current(self) -> Block | None:
        v = self.model.visible
        return v[self.cursor] if 0 <= self.cursor < len(v) else None


def _mark_inside(r: RenderableType, search: Search) -> None:
    """Mark search hits in an expanded block's texts (a Text, or a Text inside a Padding)."""
    inner = r.renderable if isinstance(r, Padding) else r
    if isinstance(inner, Text):
        search.mark(inner)
