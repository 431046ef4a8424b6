"""What rich lays out for the terminal view: Markdown answers and highlighted diffs and scripts, on a
terminal only (a pipe gets their plain text). Each is rendered once into finished rows, with colour
or, under ``NO_COLOR``, with no escape sequence at all (rich's ``color_system=None``)."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any

from transcript_reader.present.layout import Layout, Row
from transcript_reader.present.text import Line, clean, clean_rendered

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

_consoles: dict[tuple[int, bool], Console] = {}


def _console(width: int, color: bool) -> Console:
    key = (width, color)
    con = _consoles.get(key)
    if con is None:
        from rich.console import Console

        con = Console(file=io.StringIO(), width=width, force_terminal=True, color_system="standard" if color else None,
                      highlight=False, emoji=False, markup=False, legacy_windows=False)
        _consoles[key] = con
    return con


def _render(renderable: RenderableType, width: int, color: bool) -> list[str]:
    con = _console(width, color)
    with con.capture() as cap:
        con.print(renderable)
    return cap.get().rstrip("\n").split("\n")


def markdown_rows(text: str, layout: Layout, *, indent: int) -> list[Row]:
    """An answer's Markdown laid out at the view's width (``text`` is already cleaned)."""
    from rich.markdown import Markdown

    width = max((layout.width or 80) - indent, 20)
    pad = " " * indent
    return ["\n".join(pad + r for r in _render(Markdown(text), width, layout.color))]


def code_rows(source: str, lexer: str, layout: Layout, *, indent: int) -> list[Row]:
    """A diff or a script, highlighted on a terminal (wrapped, never cut), plain in a pipe."""
    source = clean(source).rstrip("\n")
    if not layout.rich:
        pad = " " * indent
        return [Line([(pad + r, "")], hang=indent) for r in source.split("\n")]
    from rich.syntax import Syntax

    width = max((layout.width or 80) - indent, 20)
    syntax = Syntax(source, lexer, theme="ansi_dark", word_wrap=True, background_color="default")
    if lexer == "javascript":
        text = syntax.highlight(source)
        text.rstrip()
        for start, end in script_call_spans(source):
            text.stylize("bold underline", start, end)
        rows = _render(text, width, layout.color)
    else:
        rows = _render(syntax, width, layout.color)
    pad = " " * indent
    return ["\n".join(pad + r for r in rows)]


def script_call_spans(script: str) -> list[tuple[int, int]]:
    """``(start, end)`` code-point offsets of each ``tools.X(…)`` call; empty when the analyzer is
    unavailable or rejects the script (the highlighting stays, only the marks go)."""
    try:
        from exec_grammar import analyze_cached

        analysis = analyze_cached(script)  # the reader analysed this cell a moment ago
    except Exception:  # noqa: BLE001 - marks are a nicety; never fail a rendering over them
        return []
    return [(call.start.offset, call.end.offset) for call in analysis.calls]


def rows_text(rows: list[Row]) -> str:
    """Rows as plain text (tests, and views that embed them)."""
    out = []
    for r in rows:
        out.append(r.plain if isinstance(r, Line) else r)
    return "\n".join(out)


def to_text(rows: list[Row]) -> Any:
    """Rows as one rich ``Text`` (styles kept): for views that embed the rendering in rich or Textual
    (the browser), so that they show exactly what ``show`` shows."""
    from rich.text import Text

    out = Text()
    for i, r in enumerate(rows):
        if i:
            out.append("\n")
        # the browser's boundary, as ``Out`` is the CLI's: every piece of text through ``clean``
        if isinstance(r, Line):
            for text, style in r.segs:
                out.append(clean(text), style=style or None)
        else:
            out.append_text(Text.from_ansi(clean_rendered(r)))
    return out
