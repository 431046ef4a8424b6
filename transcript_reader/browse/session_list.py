"""The session list widget: the ``ls`` table, drawn line by line, with a cursor.

Rows are laid out by ``present.listing.ls_lines`` from the rows ``ls`` itself builds, so the browser
and ``ls`` show a session alike; a status column in front tells at a glance what went wrong (✗ failed
commands or failing tests, ! no final answer, … figures not computed yet).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.events import Click, Resize
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from transcript_reader.browse import fuzzy
from transcript_reader.browse.text import colourless
from transcript_reader.sessions.discovery import SessionEntry

_CURSOR = Style(bgcolor="grey30", bold=True)


def status_cell(e: SessionEntry) -> Text:
    """Two cells: ✗ (red) when a command failed or a test run failed, ✓ when the figures say all
    went well, … while they are not known; then ! (yellow) when the last turn has no final answer."""
    s = e.stats
    t = Text()
    if e.head.error or e.head.format is None:
        t.append("⚠ ", style="bold red")
        return t
    if s is None:
        t.append("… ", style="dim")
        return t
    if s.commands_failed or s.tests_failed:
        t.append("✗", style="bold red")
    else:
        t.append("✓", style="green")
    t.append("!" if s.answered is False else " ", style="bold yellow")
    return t


def haystack(e: SessionEntry) -> list[str]:
    """What the live filter matches: title, cwd, id, model, nickname (what ``ls --grep`` matches)."""
    return [x for x in (e.title, e.head.cwd, e.session_id, e.head.model, e.head.agent_nickname) if x]


class SessionList(ScrollView, can_focus=True):
    DEFAULT_CSS = "SessionList { overflow-x: hidden; }"
    BINDINGS = [
        Binding("down", "move(1)", show=False),
        Binding("up", "move(-1)", show=False),
        Binding("pagedown", "move(10)", show=False),
        Binding("pageup", "move(-10)", show=False),
    ]

    class Highlighted(Message):
        def __init__(self, entry: SessionEntry | None) -> None:
            super().__init__()
            self.entry = entry

    class Chosen(Message):
        def __init__(self, entry: SessionEntry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.entries: list[SessionEntry] = []  # every row, in ls order
        self.shown: list[int] = []  # indexes into entries that pass the filter
        self.short: dict[str, str] = {}
        self.filter_text = ""
        self.cursor = 0
        self.header = Text()
        self._lines: list[Text] = []
        self._width = 0

    # ---- content ----------------------------------------------------------------------------------

    def set_entries(self, entries: list[SessionEntry], short: dict[str, str]) -> None:
        self.entries = entries
        self.short = short
        self.apply_filter(self.filter_text)

    def update_entry(self, k: int, entry: SessionEntry) -> None:
        """New figures for row ``k`` (the caller batches relayouts: see ``relayout``)."""
        self.entries[k] = entry

    def apply_filter(self, query: str) -> None:
        keep = self.current
        self.filter_text = query
        q = query.strip()
        self.shown = [k for k, e in enumerate(self.entries) if not q or fuzzy.matches(q, haystack(e))]
        self.cursor = 0
        if keep is not None:
            for i, k in enumerate(self.shown):
                if self.entries[k] is keep:
                    self.cursor = i
        self.relayout()
        self.post_message(self.Highlighted(self.current))

    def relayout(self) -> None:
        from transcript_reader.present.listing import ls_lines, ls_row, segments_text

        width = max(30, (self.scrollable_content_region.width or 100) - 2)
        self._width = self.scrollable_content_region.width
        rows = [ls_row(self.entries[k], self.short) for k in self.shown]
        show_cwd = len({self.entries[k].head.cwd for k in self.shown}) > 1
        lines = ls_lines(rows, width=width, show_cwd=show_cwd)
        self.header = Text("  ") + segments_text(lines[0])
        self._lines = [status_cell(self.entries[k]) + segments_text(line) for k, line in zip(self.shown, lines[1:])]
        self.virtual_size = Size(self.size.width, len(self._lines))
        self.refresh()

    def on_resize(self, event: Resize) -> None:
        if self.scrollable_content_region.width != self._width and self.entries:
            self.relayout()

    # ---- drawing ----------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        i = self.scroll_offset.y + y
        if not (0 <= i < len(self._lines)):
            return Strip.blank(width, self.rich_style)
        t = self._lines[i]
        segs = list(t.render(self.app.console))
        strip = Strip(segs).crop_extend(0, width, None)
        if self.app.no_color:
            strip = Strip(colourless(strip), strip.cell_length)
            return strip.apply_style(self.rich_style + (Style(reverse=True) if i == self.cursor else Style()))
        base = self.rich_style + _CURSOR if i == self.cursor else self.rich_style
        return strip.apply_style(base)

    # ---- moving -----------------------------------------------------------------------------------

    @property
    def current(self) -> SessionEntry | None:
        return self.entries[self.shown[self.cursor]] if 0 <= self.cursor < len(self.shown) else None

    def action_move(self, step: int) -> None:
        self.go(self.cursor + step)

    def go(self, i: int) -> None:
        if not self.shown:
            return
        i = max(0, min(i, len(self.shown) - 1))
        if i == self.cursor and self.size.height:
            return
        self.cursor = i
        top, h = self.scroll_offset.y, max(1, self.size.height)
        if i < top:
            self.scroll_to(y=i, animate=False, immediate=True)
        elif i >= top + h:
            self.scroll_to(y=i - h + 1, animate=False, immediate=True)
        self.refresh()
        self.post_message(self.Highlighted(self.current))

    def on_click(self, event: Click) -> None:
        i = self.scroll_offset.y + event.y
        if 0 <= i < len(self.shown):
            if i == self.cursor and self.current is not None:
                self.post_message(self.Chosen(self.current))
            else:
                self.go(i)
