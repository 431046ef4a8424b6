"""Styled lines, written fast and safely: the output layer of every terminal view (``show``, ``search``,
``ls``, ``show --follow``).

A view is built as lines of ``(text, style)`` segments (a style is a space-separated list of words such
as ``"bold red"``, the names rich uses) and handed to :class:`Out`, which owns everything that depends
on where the text goes:

- **control characters** from transcript content are neutralised (:func:`clean`): an ``ESC``, ``BEL``,
  a C1 control or a lone carriage return is shown as ``\\x1b``, ``\\x07``, ``\\r``…, never sent raw (an
  OSC 52 sequence in a command would otherwise write the user's clipboard, ``ESC[2J`` clear the screen);
- **width**: on a terminal long lines wrap (a continuation line is indented by the line's ``hang``),
  never cut; in a pipe nothing wraps and nothing is padded;
- **styling**: SGR codes only on a terminal, and none at all with ``NO_COLOR`` (no bold, no dim either);
- **encoding**: when the output encoding cannot hold the tool's own glyphs (``PYTHONIOENCODING=ascii``,
  a C locale), they fall back to ASCII (``✓`` -> ``ok``, ``…`` -> ``...``).

Writing a line is string work only (no rich objects), so a million-item timeline costs little more than
its text: rich is kept for what it does best (Markdown answers, highlighted diffs and scripts), rendered
once into lines and passed through the same checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

Seg = tuple[str, str]


@dataclass(slots=True)
class Line:
    """One logical line: segments, and the indent of its continuation lines when it wraps."""

    segs: list[Seg] = field(default_factory=list)
    hang: int = 0

    def add(self, text: str, style: str = "") -> Line:
        self.segs.append((text, style))
        return self

    @property
    def plain(self) -> str:
        return "".join(t for t, _ in self.segs)


# ---- content safety ---------------------------------------------------------------------------------

#: Bidirectional-text controls (the embeddings, overrides and isolates, and the marks LRM, RLM and ALM):
#: obeyed, they reorder what follows them on the screen (U+202E shows ``txt.exe`` for ``exe.txt``), so a
#: path, a command or a version would not read as what it is. They are shown as escapes, like controls.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"

#: What never reaches a terminal as it is: C0 controls but tab and newline, DEL, the C1 range, the bidi
#: controls, and lone surrogates (a file name that is not UTF-8 decodes to them; no encoder writes one).
_CONTROL = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{BIDI}\ud800-\udfff]")


def _visible(m: re.Match[str]) -> str:
    ch = m.group(0)
    if ch == "\r":
        return "\\r"
    return f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}"


def clean(text: str) -> str:
    """``text`` safe for a terminal: the one function every field shown on a terminal goes through
    (content and metadata alike: a cwd, a model, a thread name, a path). Every control character but
    newline and every bidi control is made visible (``\\x1b``, ``\\u202e``), never sent: an OSC 52
    sequence in a command would otherwise write the user's clipboard, OSC 0 set the window title,
    ``ESC[2J`` clear the screen. CRLF is read as a newline and tabs are expanded (so widths are counted
    right). Idempotent: cleaning clean text changes nothing."""
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    if _CONTROL.search(text):
        text = _CONTROL.sub(_visible, text)
    if "\t" in text:
        text = "\n".join(part.expandtabs(8) for part in text.split("\n"))
    return text


def unsafe(text: str) -> bool:
    """Whether :func:`clean` has a character of ``text`` to make visible (tabs and CRLF aside)."""
    return _CONTROL.search(text) is not None


#: The escape sequences rich writes itself when it lays out Markdown or code: SGR styles and OSC 8
#: hyperlinks. Everything between them is content and goes through :func:`clean`.
_RICH_ESCAPES = re.compile(r"(\x1b\[[0-9;]*m|\x1b\]8;[^\x00-\x1f\x7f-\x9f]*?\x1b\\)")


def clean_rendered(text: str) -> str:
    """Text rich laid out (styles included): its own SGR and hyperlink sequences kept, every other
    character through :func:`clean`, so that what rich passed through from content is shown, never
    obeyed."""
    if not _CONTROL.search(text):
        return text
    parts = _RICH_ESCAPES.split(text)
    return "".join(part if i % 2 else clean(part) for i, part in enumerate(parts))


#: Characters a JSON encoder leaves raw inside strings that a terminal would obey or that no encoder
#: writes: DEL, C1, the bidi controls, U+2028/U+2029, lone surrogates.
_JSON_RAW = re.compile(f"[\x7f-\x9f{BIDI}\u2028\u2029\ud800-\udfff]")


def clean_json(text: str) -> str:
    """JSON text with those characters written as ``\\uXXXX`` escapes: the same JSON value, exactly (they
    can only stand inside strings, where an escape means the same character), that is safe on a
    terminal and always encodable."""
    if text.isascii() and "\x7f" not in text:  # the usual case, checked at memory speed
        return text
    if not _JSON_RAW.search(text):
        return text
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)


def one_line(text: str, limit: int) -> str:
    """``text`` cleaned, its whitespace runs made one space, cut to ``limit`` characters (``…`` last).

    Only as much of ``text`` as the line shows is looked at (a tool result or a context item can be
    megabytes): the same collapse of a prefix is a prefix of the whole's, as long as the prefix does not
    end inside a ``\r\n`` (which ``clean`` reads as one newline); the prefix doubles until the line is
    full or the text ends. ``tests/test_present.py`` checks it against the whole-text definition."""
    n = 2 * limit + 16
    while True:
        part = text[:n]
        if n < len(text) and part.endswith("\r"):
            n += 1
            continue
        s = " ".join(clean(part).split())
        if len(s) > limit:
            return s[: limit - 1] + "…"
        if n >= len(text):
            return s
        n *= 2


# ---- glyphs and their ASCII fallback ------------------------------------------------------------------

#: The tool's own glyphs and what stands for them when the output encoding cannot hold them.
ASCII = {
    "✓": "ok", "✗": "x", "✎": "*", "⚑": "#", "⚙": "%", "⌨": ">", "⚠": "!", "↳": "->", "›": ">",
    "◆": "*", "…": "...", "→": "->", "⏎": "\\n", "─": "-", "━": "=", "└": "`-", "•": "*", "▶": ">",
    "·": "-", "−": "-", "│": "|", "┃": "|", "▌": "|", "╭": "+", "╮": "+", "╰": "+", "╯": "+", "━━": "==",
    "“": '"', "”": '"', "‘": "'", "’": "'",
    # the Markdown export's marks
    "✅": "[ok]", "❌": "[x]", "⚪": "[ ]", "✏": "*", "🧪": "#", "\ufe0f": "",
}
_ASCII_TABLE = str.maketrans({k: v for k, v in ASCII.items() if len(k) == 1})


def can_encode(encoding: str | None, sample: str = "✓…─◆") -> bool:
    try:
        sample.encode(encoding or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def to_ascii(text: str) -> str:
    return text.translate(_ASCII_TABLE)


# ---- styles -----------------------------------------------------------------------------------------

_SGR_WORDS = {
    "bold": "1", "dim": "2", "italic": "3", "underline": "4", "reverse": "7",
    "black": "30", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36",
    "white": "37",
}
_sgr_cache: dict[str, str] = {}


def sgr(style: str) -> str:
    """The escape sequence that turns ``style`` on ("" for no style)."""
    code = _sgr_cache.get(style)
    if code is None:
        words = style.split()
        parts = []
        on = False
        for w in words:
            if w == "on":
                on = True
                continue
            p = _SGR_WORDS.get(w)
            if p is not None:
                parts.append(str(int(p) + 10) if on and len(p) == 2 else p)
            on = False
        code = f"\x1b[{';'.join(parts)}m" if parts else ""
        _sgr_cache[style] = code
    return code


# ---- widths -----------------------------------------------------------------------------------------


def width_of(text: str) -> int:
    if text.isascii():
        return len(text)
    from rich.cells import cell_len

    return cell_len(text)


def _cut(text: str, room: int) -> tuple[str, str]:
    """``text`` split so that the first part takes at most ``room`` cells (at least one character)."""
    if text.isascii():
        return text[:max(room, 1)], text[max(room, 1):]
    from rich.cells import get_character_cell_size

    used = 0
    for i, ch in enumerate(text):
        w = get_character_cell_size(ch)
        if used + w > room and i > 0:
            return text[:i], text[i:]
        used += w
    return text, ""


def wrap(line: Line, width: int) -> list[list[Seg]]:
    """The rows of ``line`` at ``width`` cells: each continuation row starts with ``hang`` spaces. Rows
    break at the last space of a row when there is one in its second half, else mid-word (a long path
    or a minified line still shows whole)."""
    hang = line.hang if line.hang < width // 2 else 0
    rows: list[list[Seg]] = [[]]
    used = 0
    for text, style in line.segs:
        while text:
            room = width - used
            w = width_of(text)
            if w <= room:
                rows[-1].append((text, style))
                used += w
                break
            head, rest = _cut(text, room)
            space = head.rfind(" ")
            if rest.startswith(" "):
                rest = rest[1:]  # the break falls on a space: it goes, the next row starts with the word
            elif space >= len(head) // 2 and space > 0 and rest:
                head, rest = head[:space], head[space + 1:] + rest
            if head and (room > 0 or not rows[-1]):
                rows[-1].append((head, style))
            else:
                rest = text
            rows.append([(" " * hang, "")] if hang else [])
            used = hang
            text = rest
    return rows


# ---- output -----------------------------------------------------------------------------------------


class Out:
    """Where lines go: ``width`` None means no wrapping (a pipe, a file); ``color`` False means no
    escape sequence at all; ``ascii`` replaces the tool's glyphs (content that the encoding cannot hold
    is replaced by the stream's error handler)."""

    def __init__(self, stream: TextIO, *, width: int | None, color: bool, ascii: bool = False) -> None:
        self.stream = stream
        self.width = width if width is None else max(width, 10)
        self.color = color
        self.ascii = ascii
        self.lines_written = 0

    def line(self, line: Line) -> None:
        # Every segment goes through ``clean`` here, whatever built the line: a field a view forgot
        # (a cwd, a model name) is still shown, never obeyed. Clean text passes unchanged.
        segs = line.segs
        if any(_CONTROL.search(t) for t, _ in segs):
            segs = [(clean(t), s) if _CONTROL.search(t) else (t, s) for t, s in segs]
        if self.ascii:
            segs = [(to_ascii(t), s) for t, s in segs]
        if segs is not line.segs:
            line = Line(segs, line.hang)
        if self.width is None:
            rows = [segs]
        else:
            rows = wrap(line, self.width) if sum(width_of(t) for t, _ in segs) > self.width else [segs]
        write = self.stream.write
        for row in rows:
            if self.color:
                write("".join(f"{sgr(s)}{t}\x1b[0m" if s and t.strip() else t for t, s in row).rstrip(" ") + "\n")
            else:
                write("".join(t for t, _ in row).rstrip(" ") + "\n")  # a tab ends an empty last field
        self.lines_written += len(rows)

    def lines(self, lines: Iterable[Line]) -> None:
        for ln in lines:
            self.line(ln)

    def rendered(self, text: str) -> None:
        """Text already laid out (rich's Markdown or syntax output, escapes included when styled): rich's
        own styles kept, anything else that would act on the terminal shown (:func:`clean_rendered`)."""
        text = clean_rendered(text)
        if self.ascii:
            text = to_ascii(text)
        rows = text.rstrip("\n").split("\n")
        self.stream.write("\n".join(r.rstrip() for r in rows) + "\n")
        self.lines_written += len(rows)

    def flush(self) -> None:
        self.stream.flush()


def centre(excerpt: str, query: str, regex: bool, width: int) -> str:
    """One line of at most ``width`` characters of ``excerpt`` with the first hit in the middle."""
    text = " ".join(excerpt.split())
    if len(text) <= width:
        return text
    try:
        m = re.search(query if regex else re.escape(query), text, re.IGNORECASE)
    except re.error:
        m = None
    mid = (m.start() + m.end()) // 2 if m else 0
    start = max(0, min(mid - width // 2, len(text) - width))
    out = text[start:start + width]
    if start > 0:
        out = "…" + out[1:]
    if start + width < len(text):
        out = out[:-1] + "…"
    return out
