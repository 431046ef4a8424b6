"""The browser application: the session list first (or a session, when one is named), screens
pushed on top of it as one opens sessions and searches."""

from __future__ import annotations

from textual.app import App
from textual.binding import Binding
from textual.filter import Monochrome

from transcript_reader.browse.help_screen import HelpScreen
from transcript_reader.browse.list_screen import ListScreen
from transcript_reader.browse.sources import BrowseConfig


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

    def on_mount(self) -> None:
        self.push_screen(ListScreen(self.cfg))
        if self.cfg.session is not None:
            from transcript_reader.browse.session_screen import SessionScreen

            self.push_screen(SessionScreen(self.cfg.session, follow=self.cfg.follow))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())
