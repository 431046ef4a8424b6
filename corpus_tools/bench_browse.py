"""Benchmark: how soon ``transcript-reader browse`` paints its first screen, on a large home and on a
1 GB session, run as a user runs it (the real command in a pseudo-terminal).

Builds, in a temporary directory that is removed afterwards:

- a ``$CODEX_HOME`` of 1,000 sessions (``bench_ls.generate``: the fixture recordings with fresh ids,
  dates and projects; twelve of them 5-50 MB), cache cold;
- a rollout of about 1 GB (``bench_reader.build``: real 0.171 turns repeated, call ids renamed).

Then, each several times, in a pty of 140x40, it starts the command and reads what it writes to the
terminal, timing when given text first appears on screen (escape sequences stripped):

- ``browse --all-projects`` on the home: the first frame (the list's filter box), the first rows,
  and the whole-read figures of every row filled in (the status line stops counting);
- ``browse FILE`` on the 1 GB session: the first frame, the first turn painted, and the whole file
  read (the status line says how many blocks);

next to the start-up floor (``transcript-reader --version`` in the same pty) and, for scale, ``ls``
on the same home and ``inspect`` (one whole read) of the same file. Peak RSS is the browser's own
(``VmHWM``, read before it is told to quit).

    python -m corpus_tools.bench_browse [--sessions 1000] [--size-mb 1024] [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus_tools import bench_ls, bench_reader
from corpus_tools.bench_pty import chunks, reap, spawn

_ANSI = re.compile(rb"\x1b\[[0-9;?<>=]*[ -/]*[@-~]|\x1b[PX^_].*?\x1b\\|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
COLS, ROWS = 140, 40


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "transcript_reader", *args]


def _env(home: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env.update(CODEX_HOME=str(home), XDG_CACHE_HOME=str(cache), TERM="xterm-256color", TZ="UTC")
    return env


def _vm_hwm_mb(pid: int) -> float:
    """The peak RSS of the process and its children that Python started (the browser itself)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def in_pty(args: list[str], env: dict[str, str], marks: list[tuple[str, bytes]], *, timeout: float,
           quit_keys: bytes = b"\x11") -> dict[str, float]:
    """Run ``args`` in a fresh pty; for each ``(name, pattern)`` the seconds until the pattern (a regex
    over the screen text so far, escapes stripped) first matches, in order. Then quit and reap."""
    t0 = time.perf_counter()
    proc, master = spawn(args, env, rows=ROWS, cols=COLS)
    seen = b""
    out: dict[str, float] = {}
    pending = list(marks)
    rss = float("nan")
    try:
        for chunk in chunks(master, proc, t0 + timeout) if pending else ():
            seen += chunk
            text = _ANSI.sub(b"", seen[-(1 << 20):])
            while pending and re.search(pending[0][1], text):
                out[pending[0][0]] = time.perf_counter() - t0
                pending.pop(0)
            if not pending:
                break
        rss = _vm_hwm_mb(proc.pid)
        if proc.poll() is None:
            os.write(master, quit_keys)
            for _ in chunks(master, proc, time.perf_counter() + 10):
                pass  # drain until it has quit
    finally:
        reap(proc, master)
    for name, _ in pending:
        out[name] = float("nan")
    out["peak_rss_mb"] = rss
    return out


def _median(runs: list[dict[str, float]], key: str) -> float:
    vals = [r[key] for r in runs if r.get(key) == r.get(key)]
    return statistics.median(vals) if vals else float("nan")


def _timed(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--size-mb", type=float, default=1024.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a run may take before it is cut")
    ap.add_argument("--only", choices=["home", "session"], default=None, help="run one of the two parts")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench_browse_"))
    fig: dict[str, object] = {"cols": COLS, "rows": ROWS, "runs": args.runs, "cpus": os.cpu_count(),
                              "load_before": round(os.getloadavg()[0], 2)}
    try:
        home = work / "home"
        cache = work / "cache"
        env = _env(home, cache)
        floor = [in_pty(_cmd("--version"), env, [("done", rb"version")], timeout=args.timeout)["done"]
                 for _ in range(args.runs)]
        fig["startup_floor_s"] = round(statistics.median(floor), 3)
        if args.only != "session":
            files, size = bench_ls.generate(home, args.sessions, 12)
            fig.update(home_sessions=files, home_mb=round(size / 2**20, 1))
            _bench_home(fig, env, cache, args)
        if args.only != "home":
            home.mkdir(exist_ok=True)  # the list under the session view lists this (empty or not) home
            big = work / "big.rollout.jsonl"
            sources = [p for p in bench_reader.DEFAULT_SOURCES if p.exists()] or bench_reader.FALLBACK_SOURCES
            bench_reader.build(big, args.size_mb, sources)
            fig["session_mb"] = round(big.stat().st_size / 2**20, 1)
            _bench_session(fig, env, big, args)
        fig["load_after"] = round(os.getloadavg()[0], 2)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    bench_reader.print_figures(fig, as_json=args.json, width=24)
    return 0


def _bench_home(fig: dict[str, object], env: dict[str, str], cache: Path, args: argparse.Namespace) -> None:
    """``browse`` on the home, cold cache (every head read, every figure computed), then warm; and
    ``ls`` cold on the same home for scale."""
    runs = []
    for _ in range(args.runs):
        shutil.rmtree(cache, ignore_errors=True)
        runs.append(in_pty(_cmd("browse", "--all-projects", "--all"), env, [
            ("first_frame", rb"reading sessions"),
            ("rows", rb"\d[\d,]* sessions"),
            ("figures_done", rb"figures computed in"),
        ], timeout=args.timeout))
    warm = in_pty(_cmd("browse", "--all-projects", "--all"), env, [
        ("first_frame", rb"reading sessions"), ("rows", rb"\d[\d,]* sessions")], timeout=args.timeout)
    for k in ("first_frame", "rows", "figures_done", "peak_rss_mb"):
        fig[f"home_{k}"] = round(_median(runs, k), 3)
    fig["home_warm_rows"] = round(warm["rows"], 3)
    ls_cold = []
    for _ in range(args.runs):
        shutil.rmtree(cache, ignore_errors=True)
        ls_cold.append(_timed(_cmd("ls", "--all-projects", "--all"), env))
    fig["ls_cold_s"] = round(statistics.median(ls_cold), 3)


def _bench_session(fig: dict[str, object], env: dict[str, str], big: Path, args: argparse.Namespace) -> None:
    """``browse FILE`` on the big session; ``inspect`` (one whole read) of it for scale."""
    runs = [in_pty(_cmd("browse", str(big)), env, [
        ("first_frame", rb"reading"),
        ("first_turn", rb"Turn 1"),
        ("read_done", rb"read in [\d.]+s"),
    ], timeout=args.timeout) for _ in range(args.runs)]
    for k in ("first_frame", "first_turn", "read_done", "peak_rss_mb"):
        fig[f"session_{k}"] = round(_median(runs, k), 3)
    fig["inspect_s"] = round(_timed(_cmd("inspect", str(big)), env), 2)


if __name__ == "__main__":
    raise SystemExit(main())
