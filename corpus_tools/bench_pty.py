"""A command in a real pseudo-terminal, for the benchmarks that time what a user sees (``bench_show``,
``bench_browse``): start it on a pty of a given size, read what it writes as it comes, reap it."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from pathlib import Path


def spawn(args: list[str], env: dict[str, str], *, rows: int, cols: int,
          cwd: str | Path | None = None) -> tuple[subprocess.Popen[bytes], int]:
    """``args`` started on a fresh ``rows`` x ``cols`` pty in its own session: (process, master fd)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    proc = subprocess.Popen(args, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True,
                            start_new_session=True)
    os.close(slave)
    return proc, master


def chunks(master: int, proc: subprocess.Popen[bytes], deadline: float | None = None) -> Iterator[bytes]:
    """What the process writes, chunk by chunk, until it closes the terminal, exits with nothing left
    to read, or ``deadline`` (``time.perf_counter()``) passes."""
    while deadline is None or time.perf_counter() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if not ready:
            if proc.poll() is not None:
                return
            continue
        try:
            chunk = os.read(master, 1 << 16)
        except OSError:  # EIO: the other side is closed
            return
        if not chunk:
            return
        yield chunk


def reap(proc: subprocess.Popen[bytes], master: int) -> None:
    """Kill the process group if it still runs, wait for it, close the terminal."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    os.close(master)
