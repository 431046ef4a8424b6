"""``e`` in the session view: export the session as ``transcript-reader export`` does, to a file named
in a small dialog (the extension picks the format: ``.md``, ``.html`` or ``.json``)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from transcript_reader.browse import sources
from transcript_reader.errors import TranscriptError

FORMATS = {".md": "md", ".markdown": "md", ".html": "html", ".htm": "html", ".json": "json"}


class ExportScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape", "dismiss", "cancel")]
    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    ExportScreen > Vertical { width: 70; height: auto; border: round $accent; padding: 0 1; background: $surface; }
    """

    def __init__(self, path: str, default: str, *, title: str | None) -> None:
        super().__init__()
        self.path = path
        self.default = default
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Export this session to (.md, .html or .json; enter: write, esc: cancel):")
            yield Input(value=self.default, id="export-path")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        out = Path(event.value.strip()).expanduser()
        fmt = FORMATS.get(out.suffix.lower())
        if not event.value.strip() or fmt is None:
            self.notify("name a file ending in .md, .html or .json", severity="warning")
            return
        try:
            if out.exists() and out.samefile(self.path):
                self.notify("refusing to overwrite the session file itself", severity="error")
                return
        except OSError:
            pass
        app = self.app
        # the app's worker, not this dialog's: the dialog is gone while the file is written
        app.run_worker(lambda: _write(app, self.path, out, fmt, self.title_text), thread=True, group="export")
        self.dismiss()


def _write(app: App[object], path: str, out: Path, fmt: str, title: str | None) -> None:
    try:
        size = sources.export_session(path, fmt, out, title=title)
    except (TranscriptError, OSError) as e:
        app.call_from_thread(app.notify, f"cannot export: {e}", severity="error")
        return
    app.call_from_thread(app.notify, f"wrote {out} ({size:,} bytes)")
