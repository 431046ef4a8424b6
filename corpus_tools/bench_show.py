"""How soon ``show`` puts a big session on the screen, and what the whole render costs, side by side
in one run (a benchmark, not a timed test).

For each size (default 64 MB and 1 GB) it builds a rollout from real 0.171 turns (``bench_reader.build``:
call ids renamed per copy, scripts made distinct) and measures, each in a fresh process:

- **first byte** and **first screen** (the first 24 lines) of ``transcript-reader show FILE`` on a
  terminal (a real pty of 100 x 24; ``PAGER=cat`` so the terminal itself receives the stream that the
  pager would), the process stopped once the screen is full;
- the **whole render**: ``show --no-pager`` into a pipe (plain text, read to the end) and, with
  ``--tty-whole``, on the pty (styled, Markdown laid out by rich);
- the **decode floor**: a bare ``orjson`` decode of every line of the same file.

With ``--before REV`` the same commands run from a ``git archive`` of that revision (the code before
this issue: ``bb5fac7``) with the same interpreter, so before and after are measured in the same run.
The files are removed afterwards.

    python -m corpus_tools.bench_show                      # 64 MB and 1 GB
    python -m corpus_tools.bench_show --sizes 64 --before bb5fac7
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from corpus_tools.bench_pty import chunks, reap, spawn
from corpus_tools.bench_reader import DEFAULT_SOURCES, FALLBACK_SOURCES, build, floor_seconds

ROOT = Path(__file__).resolve().parents[1]
#: Runs ``transcript_reader`` from ``PYTHONPATH`` even in a venv where the project is installed editable
#: (the editable finder would otherwise win over ``PYTHONPATH`` and run this checkout's code for both).
_BOOT = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in repr(f)]; "
         "import runpy; runpy.run_module('transcript_reader', run_name='__main__')")


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-c", _BOOT, *args]


def _env(code: Path, home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(code), "HOME": str(home), "TZ": "UTC",
            "TERM": "xterm-256color", "PAGER": "cat", "CODEX_HOME": str(home / "no-codex-home")}


def first_screen(code: Path, path: Path, home: Path, *, rows: int = 24, cols: int = 100,
                 whole: bool = False) -> tuple[float, float, float | None]:
    """``(first byte s, first screen s, whole s or None)`` of ``show PATH`` on a pty."""
    args = _cmd("show", str(path), *(["--no-pager"] if whole else []))
    t0 = time.perf_counter()
    proc, master = spawn(args, _env(code, home), rows=rows, cols=cols, cwd=home)
    first = screen = None
    newlines = 0
    try:
        for chunk in chunks(master, proc):
            now = time.perf_counter() - t0
            if first is None:
                first = now
            newlines += chunk.count(b"\n")
            if screen is None and newlines >= rows:
                screen = now
                if not whole:
                    break
    finally:
        reap(proc, master)
    end = time.perf_counter() - t0
    return first or end, screen or end, end if whole else None


def whole_pipe(code: Path, path: Path, home: Path) -> tuple[float, int]:
    """``(seconds, bytes)`` of ``show --no-pager PATH`` into a pipe, read to the end."""
    t0 = time.perf_counter()
    p = subprocess.run(_cmd("show", str(path), "--no-pager"),
                       env=_env(code, home), capture_output=True, cwd=home)
    return time.perf_counter() - t0, len(p.stdout)


def checkout(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``git archive``), to run the code as it was."""
    tar = into / "before.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(tar), rev, "transcript_reader", "exec_grammar"],
                   check=True)
    out = into / "before"
    with tarfile.open(tar) as tf:
        tf.extractall(out, filter="data")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sizes", type=float, nargs="+", default=[64, 1024], help="rollout sizes in MB (64 1024)")
    ap.add_argument("--before", metavar="REV", default=None, help="also run the code of this git revision")
    ap.add_argument("--tty-whole", action="store_true", help="also time the whole styled render on the pty")
    ap.add_argument("--repeat", type=int, default=1, help="passes of each first-screen run (best kept)")
    args = ap.parse_args(argv)
    sources = DEFAULT_SOURCES if all(p.exists() for p in DEFAULT_SOURCES) else FALLBACK_SOURCES
    print(f"sources: {', '.join(p.name for p in sources)}; python {sys.version.split()[0]}; "
          f"load {os.getloadavg()[0]:.1f}; cpus {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench_show_") as tmp:
        work = Path(tmp)
        codes = {"after": ROOT}
        if args.before:
            codes = {"before": checkout(args.before, work), **codes}
        for name, code in codes.items():  # each runs its own code (not the cwd's, not the editable install)
            proof = subprocess.run(_cmd("show", "--help"), env=_env(code, work), capture_output=True, text=True,
                                   cwd=work)
            assert ("--example" in proof.stdout) is (name == "after"), proof.stdout + proof.stderr
        print(f"{'size':>8} {'code':<7} {'first byte':>11} {'first screen':>13} {'whole (pipe)':>13} "
              f"{'whole (tty)':>12} {'floor':>7} {'whole/floor':>12}")
        for size in args.sizes:
            path = work / f"big-{size:g}mb.rollout.jsonl"
            build(path, size, sources)
            floor = min(floor_seconds(path)[0] for _ in range(2))
            for name, code in codes.items():
                runs = [first_screen(code, path, work) for _ in range(args.repeat)]
                fb, fs = min(r[0] for r in runs), min(r[1] for r in runs)
                pipe_s, _ = whole_pipe(code, path, work)
                tty = first_screen(code, path, work, whole=True)[2] if args.tty_whole else None
                mb = path.stat().st_size / 1024 / 1024
                print(f"{mb:>6.0f}MB {name:<7} {fb:>10.2f}s {fs:>12.2f}s {pipe_s:>12.2f}s "
                      f"{(f'{tty:.2f}s' if tty is not None else '-'):>12} {floor:>6.2f}s {pipe_s / floor:>11.1f}x",
                      flush=True)
            path.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
