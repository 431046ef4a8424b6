"""The real ``transcript-reader browse`` in a real pseudo-terminal: it draws the list, opens a
session, follows a terminal resize, and quits with status 0 (and NO_COLOR draws no colour)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests import sessions_home as sh

pytest.importorskip("textual")

_ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_].*?\x1b\\|\x1b[@-Z\\-_]")


class Term:
    def __init__(self, args: list[str], env: dict[str, str], cwd: Path, size: tuple[int, int]) -> None:
        self.master, slave = pty.openpty()
        self.resize(*size, fd=slave)
        self.proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd,
                                     start_new_session=True, close_fds=True)
        os.close(slave)
        self.raw = b""

    def resize(self, cols: int, rows: int, fd: int | None = None) -> None:
        fcntl.ioctl(self.master if fd is None else fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))

    def text(self) -> bytes:
        return _ANSI.sub(b"", self.raw)

    def wait_for(self, pattern: bytes, timeout: float = 90.0) -> None:
        start = len(self.raw)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, _ANSI.sub(b"", self.raw[start:])):
                return
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.raw += os.read(self.master, 1 << 16)
                except OSError:
                    break
        raise AssertionError(f"{pattern!r} never appeared; screen text: {self.text()[-1500:]!r}")

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def close(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            if select.select([self.master], [], [], 0.1)[0]:
                try:
                    self.raw += os.read(self.master, 1 << 16)
                except OSError:
                    break
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        code = self.proc.wait()
        os.close(self.master)
        return code


def _env(home: Path, tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env.update(CODEX_HOME=str(home), XDG_CACHE_HOME=str(tmp / "xdg"), TERM="xterm-256color", TZ="UTC", **extra)
    return env


def test_browse_in_a_real_terminal(tmp_path: Path) -> None:
    h = sh.build_home(tmp_path)
    t = Term([sys.executable, "-m", "transcript_reader", "browse"], _env(h.home, tmp_path), h.project, (120, 34))
    try:
        t.wait_for(rb"Code-mode cells demo")
        t.wait_for(rb"7 sessions")
        t.send(b"\r")  # open the newest
        t.wait_for(rb"Turn 1")
        t.send(b"x")
        t.wait_for(rb"AssertionError: 0")
        t.resize(70, 24)
        os.killpg(t.proc.pid, signal.SIGWINCH)
        t.wait_for(rb"blocks")  # the status line is drawn again at the new size
        t.send(b"q")
        t.wait_for(rb"sessions")
        t.send(b"\x11")  # ctrl+q
    finally:
        code = t.close()
    assert code == 0, t.text()[-2000:]


def _colours(raw: bytes) -> list[tuple[int, int, int] | int]:
    """Every foreground/background colour the app wrote: 256-colour indexes and truecolor triples."""
    out: list[tuple[int, int, int] | int] = []
    for params in re.findall(rb"\x1b\[([0-9;]*)m", raw):
        for idx in re.findall(rb"(?:38|48);5;(\d+)", params):
            out.append(int(idx))
        for r, g, b in re.findall(rb"(?:38|48);2;(\d+);(\d+);(\d+)", params):
            out.append((int(r), int(g), int(b)))
    return out


def _grey(c: tuple[int, int, int] | int) -> bool:
    if isinstance(c, tuple):
        return c[0] == c[1] == c[2]
    return c >= 232 or c in (0, 7, 8, 15, 16, 59, 102, 145, 188, 231)


@pytest.mark.parametrize("no_color", [True, False])
def test_browse_no_color_draws_no_colour(tmp_path: Path, no_color: bool) -> None:
    """NO_COLOR: greys only (Textual's monochrome filter for its own widgets, no colour in content);
    without it the same screen is in colour (so the check can fail)."""
    h = sh.build_home(tmp_path)
    extra = {"NO_COLOR": "1"} if no_color else {}
    t = Term([sys.executable, "-m", "transcript_reader", "browse", sh.CODE_MODE],
             _env(h.home, tmp_path, **extra), h.project, (100, 30))
    try:
        t.wait_for(rb"exit 1")
        t.send(b"\x11")
    finally:
        code = t.close()
    assert code == 0
    colours = _colours(t.raw)
    assert colours, "no colour sequences at all: the terminal was not drawn"
    coloured = [c for c in colours if not _grey(c)]
    assert (not coloured) if no_color else coloured, coloured[:10]
