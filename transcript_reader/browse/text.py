"""Content made safe and short for one line of the screen. Kept apart from ``blocks`` (which pulls in
the Markdown and syntax-highlighting renderers) so that the session list starts without them."""

from __future__ import annotations

from collections.abc import Iterable

from rich.segment import Segment
from rich.style import Style

from transcript_reader.present.text import clean, unsafe


def has_control(text: str) -> bool:
    return unsafe(text)


def visible(text: str) -> str:
    """Content with its control characters (and bidi controls) shown, never obeyed: an ESC from a
    transcript must not clear the screen, set the clipboard or the window title of the terminal the
    browser draws on. The one terminal-safe function, :func:`~transcript_reader.present.text.clean`."""
    return clean(text)


def one_line(text: str, limit: int = 400) -> str:
    s = " ".join(visible(text[: limit * 2]).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def colourless(segments: Iterable[Segment]) -> list[Segment]:
    """The segments with their colours dropped and their emphasis (bold, italic, underline) kept."""
    out = []
    for seg in segments:
        st = seg.style
        if st is not None and (st.color is not None or st.bgcolor is not None):
            st = Style(bold=st.bold, italic=st.italic, underline=st.underline, dim=st.dim, reverse=st.reverse)
        out.append(Segment(seg.text, st, seg.control))
    return out
