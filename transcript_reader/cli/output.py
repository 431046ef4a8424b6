"""Where the CLI's text goes: a terminal (styled, wrapped at its width), a pipe (plain, never wrapped or
padded), or a pager that the output streams into.

The pager is ``$PAGER`` (else ``less``), started the way ``git`` starts it: with ``LESS=FRX`` when the
user has no ``LESS`` of their own (F: a short text is printed and less exits, R: colours are shown
instead of ``ESC[1m`` codes, X: the screen is not cleared on exit) and ``LV=-c``. The text is written
into it as it is rendered, so the first screen of a big session shows while the rest is still read.
Quitting the pager early ends the command quietly (exit 0); while it runs, Ctrl-C belongs to the pager.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TextIO

import click

from transcript_reader.present.common import Clock
from transcript_reader.present.layout import Layout, Row
from transcript_reader.present.text import Line, Out, can_encode, clean, clean_json


def no_color_env() -> bool:
    """``NO_COLOR`` set to anything but "" (no-color.org), or a dumb terminal."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


def terminal_width(stream: TextIO) -> int:
    """``COLUMNS`` when it is a positive number, else the terminal's width, else 80."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cols = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        cols = 0
    return cols if cols > 0 else 80


def terminal_height(stream: TextIO) -> int:
    env = os.environ.get("LINES", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return os.get_terminal_size(stream.fileno()).lines or 24
    except (OSError, ValueError, AttributeError):
        return 24


def is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (ValueError, AttributeError):
        return False


def for_stdout(text: str, stream: TextIO | None = None) -> str:
    """``text`` as stdout (or ``stream``) can hold it: the tool's glyphs in ASCII when the encoding cannot
    hold them (``PYTHONIOENCODING=ascii``, a C locale), any other character it cannot hold replaced."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "utf-8"
    if can_encode(encoding):
        return text
    from transcript_reader.present.text import to_ascii

    return to_ascii(text).encode(encoding, "replace").decode(encoding)


def echo(text: str, *, err: bool = False, nl: bool = True) -> None:
    """A line of plain text to stdout (``err``: stderr), as every command writes one that is not a
    styled view: through :func:`~transcript_reader.present.text.clean` (a path, a cwd or a message that
    quotes one is shown, never obeyed) and the stream's encoding."""
    stream = sys.stderr if err else sys.stdout
    click.echo(for_stdout(clean(text), stream), err=err, nl=nl)


def terminal_safe(text: str, *, as_json: bool, stream: TextIO | None = None) -> str:
    """A whole document for stdout (``export``): JSON always through :func:`clean_json` (the same
    value); Markdown or HTML through :func:`clean` on a terminal only, and byte for byte into a pipe
    or a file (``> session.md`` keeps what the session holds)."""
    if as_json:
        return clean_json(text)
    return clean(text) if is_tty(stream or sys.stdout) else text


def echo_json(text: str) -> None:
    """JSON text to stdout, exact (the same value) and safe on a terminal (:func:`clean_json`)."""
    click.echo(clean_json(text))


def emit(out: Out, rows: Iterable[Row]) -> None:
    for r in rows:
        if isinstance(r, Line):
            out.line(r)
        else:
            out.rendered(r)


def _pager_command() -> list[str] | None:
    """The pager to run, or None for none (``PAGER=cat``, ``PAGER=""``, no pager installed)."""
    import shlex  # the pager's modules: a command that pages nothing (search, --json) starts without them
    import shutil

    cmd = os.environ.get("PAGER")
    if cmd is None:
        cmd = "less"
    try:
        argv = shlex.split(cmd)
    except ValueError:
        return None
    if not argv or argv[0] == "cat" or shutil.which(argv[0]) is None:
        return None
    return argv


@contextlib.contextmanager
def _pager(encoding: str) -> Iterator[TextIO | None]:
    argv = _pager_command()
    if argv is None:
        yield None
        return
    import signal
    import subprocess

    env = dict(os.environ)
    env.setdefault("LESS", "FRX")
    env.setdefault("LV", "-c")
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError:
        yield None
        return
    assert proc.stdin is not None
    stream = io.TextIOWrapper(proc.stdin, encoding=encoding, errors="replace", write_through=False)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # the pager owns the keyboard
    try:
        yield stream
    except BrokenPipeError:
        pass  # the pager was quit before the end: nothing more to show
    finally:
        with contextlib.suppress(OSError, ValueError):
            stream.close()
        proc.wait()
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def text_output(*, no_color: bool = False, pager: bool = False, utc: bool = False,
                stream: TextIO | None = None) -> Iterator[tuple[Out, Layout]]:
    """An :class:`Out` and the :class:`Layout` views render for, for this process's stdout: a
    terminal gets colour (unless ``--no-color``/``NO_COLOR``), its width and, with ``pager``, the
    pager; anything else gets plain unwrapped text. Glyphs fall back to ASCII when stdout's encoding
    cannot hold them."""
    target = stream or sys.stdout
    tty = is_tty(target)
    encoding = getattr(target, "encoding", None) or "utf-8"
    ascii_only = not can_encode(encoding)
    color = tty and not no_color and not no_color_env()
    width = terminal_width(target) if tty else None
    layout = Layout(width=width, rich=tty, color=color, clock=Clock(utc))
    if tty and pager:
        with _pager(encoding) as piped:
            if piped is not None:
                yield Out(piped, width=width, color=color, ascii=ascii_only), layout
                piped.flush()
        if piped is not None:
            return  # paged (a BrokenPipeError, the pager quit early, ends here quietly)
    with contextlib.suppress(AttributeError, ValueError):
        target.reconfigure(errors="replace")  # type: ignore[union-attr]
    yield Out(target, width=width, color=color, ascii=ascii_only), layout
    target.flush()


class ProgressLine:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal, redrawn in place at
    most ten times a second, and cleared (``clear``) before anything else is printed, so a hit or a
    table never starts glued to it."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.label = label
        self.enabled = is_tty(self.stream)
        self.ascii = not can_encode(getattr(self.stream, "encoding", None))
        self.shown = False
        self._last = 0.0

    def update(self, done: int, total: int, extra: str = "") -> None:
        import time

        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and done < total:
            return
        self._last = now
        width = terminal_width(self.stream)
        bar_w = max(min(30, width - len(self.label) - len(extra) - 20), 5)
        filled = bar_w * done // total if total else 0
        full, empty = ("=", "-") if self.ascii else ("━", "─")
        text = clean(f"{self.label} {full * filled}{empty * (bar_w - filled)} {done}/{total}" + (f" {extra}" if extra else ""))
        self.stream.write("\r\x1b[2K" + text[: width - 1])
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self.shown = False
