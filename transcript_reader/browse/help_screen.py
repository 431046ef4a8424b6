"""``h`` / F1: the key map (the README's key map is this table)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

#: (where, keys, what): the one key map, shown here and in the README
KEYS: list[tuple[str, str, str]] = [
    ("list", "type", "filter the sessions live (fuzzy: title, cwd, id, model; 'word for an exact match)"),
    ("list", "↑ ↓ PgUp PgDn", "choose a session (the preview pane follows)"),
    ("list", "enter / click", "open the session"),
    ("list", "?", "search inside every listed session; enter on a hit opens the session at it"),
    ("list", "ctrl+p", "hide or show the preview pane"),
    ("list", "esc", "clear the filter; on an empty filter, quit"),
    ("session", "↑ ↓ j k", "move between blocks (turns, answers, commands, patches, tests, tools)"),
    ("session", "PgUp PgDn space b, g G", "page; top, bottom"),
    ("session", "enter / o / click", "expand or fold the block: output, diff, script, whole message"),
    ("session", "x X", "next / previous failure (failed command, test run, patch, tool, error)"),
    ("session", "c C", "next / previous command"),
    ("session", "d D", "next / previous change (patch)"),
    ("session", "t T", "next / previous turn"),
    ("session", "/  n N", "search this session, hits marked; next / previous hit"),
    ("session", "r  i", "show or hide reasoning; context (AGENTS.md, environment, developer messages)"),
    ("session", "f", "follow: new items appear as Codex writes them (f again to stop)"),
    ("session", "e", "export to .md, .html or .json"),
    ("session", "y", "copy the command (a cell: its script) to the clipboard"),
    ("session", "esc", "close the search box, clear the search, else back"),
    ("session", "q", "back to the list (or the search results)"),
    ("anywhere", "h / F1", "this help"),
    ("anywhere", "ctrl+c / ctrl+q", "quit"),
]


def markdown_key_map() -> str:
    """The key map as the README's Markdown table (a test keeps the README's copy equal)."""
    rows = ["| where | keys | what |", "|---|---|---|"]
    bar = "\\|"
    rows += ["| " + " | ".join(cell.replace("|", bar) for cell in row) + " |" for row in KEYS]
    return "\n".join(rows)


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,h,f1", "dismiss", "close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll { width: 96; max-width: 100%; height: auto; max-height: 90%;
                                  border: round $accent; background: $surface; padding: 0 1; }
    """

    def compose(self) -> ComposeResult:
        table = Table(box=None, show_header=True, header_style="bold", expand=True, padding=(0, 1))
        table.add_column("where", style="dim", no_wrap=True)
        table.add_column("keys", style="bold cyan", no_wrap=True)
        table.add_column("what")
        for where, keys, what in KEYS:
            table.add_row(where, keys, what)
        with VerticalScroll():
            yield Static(table)


def key_bar(pairs: list[tuple[str, str]]) -> Text:
    """The one-line key hint at the bottom of a screen (``h`` shows them all)."""
    t = Text(no_wrap=True, overflow="ellipsis")
    for keys, what in pairs:
        t.append(f" {keys}", style="bold cyan")
        t.append(f" {what} ", style="dim")
    return t


LIST_KEYS = [("↑↓", "choose"), ("enter", "open"), ("?", "search all"), ("ctrl+p", "preview"),
             ("esc", "clear/quit"), ("F1", "keys")]
SESSION_KEYS = [("enter", "expand"), ("x/X", "failure"), ("c/C", "command"), ("d/D", "change"),
                ("t/T", "turn"), ("/", "search"), ("r i", "reasoning, context"), ("f", "follow"),
                ("e", "export"), ("y", "copy"), ("q", "back"), ("h", "keys")]
SEARCH_KEYS = [("enter", "search / open hit"), ("↑↓", "choose"), ("esc", "back"), ("F1", "keys")]
