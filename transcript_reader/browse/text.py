"""Content made safe and short for one line of the screen. Kept apart from ``blocks`` (which pulls in
the Markdown and syntax-highlighting renderers) so that the session list starts without them."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def visible(text: str) -> str:
    """Content with its control characters shown, never obeyed: an ESC from a transcript must not
    clear the screen or set the clipboard of the terminal the browser draws on."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text) if _CONTROL.search(text) else text


def one_line(text: str, limit: int = 400) -> str:
    s = " ".join(visible(text[: limit * 2]).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"
