"""Benchmark: ``transcript-reader usage`` over a home of 10,000 sessions, answered from the session store.

    python -m corpus_tools.bench_usage [--sessions 10000] [--runs 5] [--dir DIR] [--keep]

Builds (or reuses, with ``--dir``) the home ``bench_store ls`` uses (the real recordings as written, N
sessions), builds its store once (``ls``, timed: the cold case), then times in fresh processes, side by
side and alternating (median of ``--runs``): ``usage --all-projects`` (by day, a pipe), ``usage
--all-projects --by session --json``, ``ls --all-projects --json`` and the process start-up floor
(``--version``). Prints the load average beside every figure (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus_tools.bench_store import _home, _load

ROOT = Path(__file__).resolve().parents[1]

CASES: dict[str, list[str]] = {
    "usage --all-projects": ["usage", "--all-projects"],
    "usage --all-projects --by session --json": ["usage", "--all-projects", "--by", "session", "--json"],
    "usage --all-projects --by model --json": ["usage", "--all-projects", "--by", "model", "--json"],
    "ls --all-projects --json": ["ls", "--all-projects", "--json"],
    "--version (start-up floor)": ["--version"],
}


def _run(args: list[str], home: Path, cache: Path) -> float:
    env = {**os.environ, "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(cache),
           "CLAUDE_CONFIG_DIR": str(cache / "no-claude"), "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "transcript_reader", *args], env=env, stdout=subprocess.DEVNULL,
                   check=True, cwd=ROOT)
    return time.monotonic() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=None, help="keep the home here (reused when it exists)")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args(argv)
    root = (args.dir or Path(tempfile.mkdtemp(prefix="bench-usage-"))).resolve()  # one spelling of every path
    root.mkdir(parents=True, exist_ok=True)
    try:
        home, size = _home(root, args.sessions, None)
        cache = root / "cache"
        print(f"home: {args.sessions} sessions, {size / 1e6:.1f} MB; load {_load()}")
        cold = _run(["usage", "--all-projects"], home, cache)
        print(f"usage --all-projects, first run (builds or completes the store): {cold:.2f} s; load {_load()}")
        times: dict[str, list[float]] = {name: [] for name in CASES}
        for _ in range(args.runs):
            for name, cmd in CASES.items():  # alternating: a load spike falls on every case alike
                times[name].append(_run(cmd, home, cache))
        for name, got in times.items():
            print(f"{name:45s} warm: median {statistics.median(got):.3f} s (min {min(got):.3f}, "
                  f"max {max(got):.3f})")
        print(f"load {_load()}")
    finally:
        if args.dir is None and not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
