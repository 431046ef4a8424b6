"""Benchmark: how long ``transcript-reader ls`` takes over a ``$CODEX_HOME`` of 1,000 sessions.

Generates the home from the project's own fixtures (real Codex recordings, ``fixtures/codex_home``):
each session gets a fresh id, start time (spread over 60 days) and one of 20 project directories; most
are small (the recordings as written, 2-90 KB), a few are big (5-50 MB, built by repeating the
session's own middle lines), some are archived and some compressed (``.jsonl.zst``). Then it times the
real command in a subprocess, several runs each, side by side with the process start-up floor
(``transcript-reader --version``), and prints a table.

    python -m corpus_tools.bench_ls [--sessions 1000] [--big 12] [--runs 5] [--dir DIR] [--keep] [--stats]

"No cache" removes the ls cache before each run, so every head and tail is read; "warm" is the usual
case, where only files that changed are read. ``--stats`` also times ``ls --stats`` on a cold cache
(every session read whole: the reader's throughput, not discovery's).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import zstandard

from corpus_tools.bench_home import place_session

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures" / "codex_home"


def _templates() -> list[tuple[str, str, bytes]]:
    """``(session id, suffix, content)`` of every fixture rollout (JSONL eras only)."""
    out = []
    for p in sorted(FIXTURES.rglob("rollout-*.jsonl")):
        sid = p.name[-len("01a22d9c-5471-7953-942f-93603d8b9241.jsonl"):-len(".jsonl")]
        out.append((sid, ".jsonl", p.read_bytes()))
    return out


def generate(home: Path, n: int, big: int, seed: int = 7) -> tuple[int, int]:
    """Write ``n`` sessions under ``home``; returns ``(files, bytes)``."""
    rng = random.Random(seed)
    templates = _templates()
    start = datetime(2026, 10, 1, tzinfo=UTC)
    big_sizes = [50, 40, 30, 25, 20, 15, 10, 8, 6, 5, 5, 5][:big] + [5] * max(0, big - 12)
    big_at = set(rng.sample(range(n), len(big_sizes)))
    big_iter = iter(big_sizes)
    total = 0
    zc = zstandard.ZstdCompressor(level=3)
    index_lines = []
    for i in range(n):
        old_id, _, data = templates[i % len(templates)]
        new_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        when = start + timedelta(seconds=rng.randrange(60 * 86400))
        text = data.replace(old_id.encode(), new_id.encode())
        text = text.replace(b"/home/user/project", f"/home/user/proj{i % 20:02d}".encode())
        if i in big_at:
            lines = text.split(b"\n")
            middle = [ln for ln in lines[len(lines) // 3: 2 * len(lines) // 3] if ln]
            target = next(big_iter) * 1024 * 1024
            body = b"\n".join(middle) + b"\n"
            reps = max(1, (target - len(text)) // max(1, len(body)))
            head, tail = b"\n".join(lines[: len(lines) // 3]) + b"\n", b"\n".join(lines[len(lines) // 3:])
            text = head + body * reps + tail
        total += place_session(home, i, when, new_id, text, zc, compress=i not in big_at)
        if i % 10 == 0:
            index_lines.append(f'{{"id":"{new_id}","thread_name":"bench session {i}","updated_at":"2026-12-01T00:00:00Z"}}')
    (home / "session_index.jsonl").write_text("\n".join(index_lines) + "\n")
    return n, total


def timed(args: list[str], env: dict[str, str], runs: int, *, before: object = None) -> tuple[float, float, str]:
    """``(median s, min s, last stdout)`` over ``runs`` runs of the real command (``before`` is called
    before each run, e.g. to drop the cache)."""
    times = []
    out = ""
    for _ in range(runs):
        if callable(before):
            before()
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "transcript_reader", *args], env=env, capture_output=True,
                           text=True, check=True)
        times.append(time.perf_counter() - t0)
        out = p.stdout
    return statistics.median(times), min(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=1000)
    ap.add_argument("--big", type=int, default=12, help="How many sessions of 5-50 MB.")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=None, help="Where to build the home (default: a temp dir).")
    ap.add_argument("--keep", action="store_true", help="Keep the generated home.")
    ap.add_argument("--stats", action="store_true", help="Also time `ls --stats` on a cold cache (slow).")
    a = ap.parse_args(argv)
    base = a.dir or Path(tempfile.mkdtemp(prefix="bench_ls_"))
    home = base / "codex_home"
    cache = base / "cache"
    if home.exists():
        shutil.rmtree(home)
    t0 = time.perf_counter()
    files, size = generate(home, a.sessions, a.big)
    gen_s = time.perf_counter() - t0
    env = {**os.environ, "CODEX_HOME": str(home), "XDG_CACHE_HOME": str(cache), "COLUMNS": "160"}
    env.pop("NO_COLOR", None)

    def drop_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    try:
        load = os.getloadavg()[0]
    except OSError:
        load = float("nan")
    print(f"home: {home}  {files} sessions, {size / 1e6:,.0f} MB on disk (generated in {gen_s:.1f}s)")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f}, "
          f"{a.runs} runs each, median (min)\n")
    floor, _, _ = timed(["--version"], env, a.runs)
    print(f"{'command':<58}  {'median':>8}  {'min':>8}  {'minus start-up':>14}")

    def row(label: str, med: float, mn: float, note: str = "") -> None:
        print(f"{label:<58}  {med:>7.3f}s  {mn:>7.3f}s  {med - floor:>13.3f}s  {note}", flush=True)

    row("transcript-reader --version (start-up floor)", floor, floor)
    js = ["ls", "--all", "--all-projects", "--json"]
    med, mn, out = timed(js, env, a.runs, before=drop_cache)
    import json

    row("ls --all --all-projects --json, no cache (heads+tails read)", med, mn, f"{json.loads(out)['count']} rows")
    med, mn, _ = timed(js, env, a.runs)
    row("ls --all --all-projects --json, warm cache", med, mn)
    med, mn, _ = timed(["ls", "--all", "--all-projects"], env, a.runs, before=drop_cache)
    row("ls --all --all-projects (table), no cache", med, mn)
    med, mn, _ = timed(["ls", "--all", "--all-projects"], env, a.runs)
    row("ls --all --all-projects (table), warm cache", med, mn)
    if a.stats:
        drop_cache()
        cold, _, _ = timed(js[:1] + ["--stats"] + js[1:], env, 1)
        row("ls --stats, cold (every session read whole, 1 run)", cold, cold)
        warm, warm_min, _ = timed(js, env, a.runs)
        row("ls after --stats (all figures from the cache)", warm, warm_min)
    if not a.keep and a.dir is None:
        shutil.rmtree(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
