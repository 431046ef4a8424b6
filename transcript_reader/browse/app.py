"""The browser application: the session list first (or a session, when one is named), screens
pushed on top of it as one opens sessions and searches."""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from textual.app import App
from textual.binding import Binding
from textual.color import Color
from textual.filter import LineFilter, Monochrome

from transcript_reader.browse.help_screen import HelpScreen
from transcript_reader.browse.list_screen import ListScreen
from transcript_reader.browse.sources import BrowseConfig
from transcript_reader.present.text import clean, unsafe


class TerminalSafe(LineFilter):
    """The browser's last boundary before the terminal: every line Textual draws passes here, and any
    text that would act on the terminal (an escape sequence, a bidi control a widget was given raw) is
    shown through ``clean`` instead. Each view cleans what it shows already (so widths are right);
    this keeps a field a view forgets from setting the window title or the tmux pane's."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        if not any(unsafe(seg.text) for seg in segments if seg.control is None):
            return segments
        return [Segment(clean(text), style, None) if control is None and unsafe(text) else Segment(text, style, control)
                for text, style, control in segments]


_SAFE = TerminalSafe()


class BrowseApp(App[None]):
    TITLE = "transcript-reader browse"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("f1,h", "help", "keys", show=True),
        Binding("ctrl+c,ctrl+q", "quit", "quit", show=False, priority=True),
    ]

    def __init__(self, cfg: BrowseConfig) -> None:
        super().__init__()
        self.cfg = cfg
        if cfg.no_color and not self.no_color:
            # --no-color does what NO_COLOR does (Textual reads the variable itself)
            self.no_color = True
            self._filters.append(Monochrome())
        if cfg.still:
            self.animation_level = "none"

    def get_line_filters(self) -> Sequence[LineFilter]:
        return [*super().get_line_filters(), _SAFE]

    def on_mount(self) -> None:
        self.push_screen(ListScreen(self.cfg))
        if self.cfg.session is not None:
            from transcript_reader.browse.session_screen import SessionScreen

            self.push_screen(SessionScreen(self.cfg.session, follow=self.cfg.follow))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
