"""Run the real command in a real pseudo-terminal (``pty.openpty``), as a person at a terminal of a given
size would: the child's stdin, stdout and stderr are the pty's slave side, ``TIOCSWINSZ`` sets the size,
and keys can be typed when some text has appeared (``q`` to leave a pager, Ctrl-C)."""

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")


@dataclass
class Screen:
    """What the terminal received: ``raw`` bytes decoded, ``text`` without escape sequences."""

    raw: str
    returncode: int
    marks: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw)


def run(args: list[str], *, env: dict[str, str], cols: int = 100, rows: int = 30, cwd: Path | None = None,
        keys: list[tuple[str, bytes]] = (), timeout: float = 60, marks: tuple[str, ...] = (),  # type: ignore[assignment]
        when: list[tuple[str, Callable[[], None]]] = ()) -> Screen:  # type: ignore[assignment]
    """``python -m transcript_reader ARGS`` in a pty of ``cols`` x ``rows``. ``keys``: (text to wait
    for, bytes to type), in order; ``when``: (text to wait for, what to do then: append to a file…);
    ``marks``: texts whose first arrival time (seconds from start) is recorded."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    full_env = {"PYTHONPATH": str(ROOT), "TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""), **env}
    start = time.monotonic()
    def controlling_tty() -> None:  # a session of its own whose terminal is the pty: Ctrl-C is SIGINT
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-m", "transcript_reader", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=full_env, cwd=cwd, close_fds=True, preexec_fn=controlling_tty)
    os.close(slave)
    data = b""
    pending = list(keys)
    actions = list(when)
    seen: dict[str, float] = {}
    deadline = start + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child side is closed
                    break
                if not chunk:
                    break
                data += chunk
                text = ANSI.sub("", data.decode("utf-8", "replace"))
                for m in marks:
                    if m not in seen and m in text:
                        seen[m] = time.monotonic() - start
                while pending and pending[0][0] in text:
                    os.write(master, pending.pop(0)[1])
                while actions and actions[0][0] in text:
                    actions.pop(0)[1]()
            elif proc.poll() is not None:
                break
            elif pending and pending[0][0] == "" and time.monotonic() - start > 2:
                os.write(master, pending.pop(0)[1])  # a key for a command that prints nothing first
        else:
            os.killpg(proc.pid, signal.SIGKILL)
            raise AssertionError(f"timed out; the screen so far:\n{data.decode('utf-8', 'replace')[-3000:]}")
        proc.wait(timeout=10)
    finally:
        os.close(master)
    return Screen(data.decode("utf-8", "replace"), proc.returncode, seen)


_CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[=>]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def visible_lines(raw: str, cols: int) -> list[str]:
    """What a terminal of ``cols`` columns shows after ``raw``: a small emulator of what the tool and
    less send (text, CR, LF, erase line, cursor up, SGR ignored, autowrap at the last column)."""
    lines: list[list[str]] = [[]]
    row = col = 0
    pos = 0

    def put(ch: str) -> None:
        nonlocal row, col
        if col >= cols:
            row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
        cur = lines[row]
        while len(cur) < col:
            cur.append(" ")
        if col < len(cur):
            cur[col] = ch
        else:
            cur.append(ch)
        col += 1

    while pos < len(raw):
        m = _CSI.match(raw, pos)
        if m:
            if m.group(2) in ("K",):
                lines[row] = lines[row][:col] if m.group(1) in ("", "0") else []
            elif m.group(2) == "A":
                row = max(0, row - int(m.group(1) or 1))
            pos = m.end()
            continue
        ch = raw[pos]
        pos += 1
        if ch == "\r":
            col = 0
        elif ch == "\n":
            row, col = row + 1, 0
            while len(lines) <= row:
                lines.append([])
        elif ch == "\b":
            col = max(0, col - 1)
        elif ch >= " ":
            put(ch)
    return ["".join(x).rstrip() for x in lines]
